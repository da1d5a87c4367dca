#include <attnlab/accel/engine.hpp>
#include <attnlab/core/distributed.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/norms/attention_norms.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attnlab {

Precision parse_precision(const std::string& s) {
  if (s == "double") return Precision::float64;
  if (s == "float") return Precision::float32;
  throw std::invalid_argument(text("precision must be float or double (got '", s, "')"));
}

std::string to_string(Precision p) { return p == Precision::float64 ? "double" : "float"; }

Backend parse_backend(const std::string& s) {
  if (s == "cpu") return Backend::cpu;
  if (s == "thrust") return Backend::thrust;
  if (s == "cuda") return Backend::cuda;
  throw std::invalid_argument(text("backend must be cpu, thrust or cuda (got '", s, "')"));
}

std::string to_string(Backend b) { return b == Backend::cpu ? "cpu" : b == Backend::thrust ? "thrust" : "cuda"; }

void validate_backend(Backend backend, const std::vector<ActivationSpec>& activations) {
  if (backend == Backend::cpu) return;
  if (backend == Backend::cuda)
    if (const auto why = accel::cuda_unavailable_reason(); !why.empty())
      throw std::invalid_argument(text(why, " (use --backend cpu or thrust)"));
  for (const auto& a : activations) {
    const auto& info = find_activation(a.name);
    if ((info.row_normalised && info.row != RowNormalised::softmax) || a.transforms != Transforms{} || a.formula)
      throw std::invalid_argument(text("backend ", to_string(backend),
                                       " implements the built-in elementwise activations and softmax without ",
                                       "transforms, not '", a.label(), "' (use --backend cpu)"));
  }
}

namespace {

// Each quantity by name with its per-trial value from the squared norms (N: the sequence length), and the squared
// quantity that can serve as its control variate.
struct Quantity {
  std::string name;
  double (*of)(const AttentionNormsSquared&, double N);
  bool gradient = false;
  std::string control{};
};

const std::vector<Quantity>& quantity_table() {
  static const std::vector<Quantity> table{
      {"frob", [](const AttentionNormsSquared& n, double) { return std::sqrt(n.frob2); }, false, "frob2"},
      {"frob2", [](const AttentionNormsSquared& n, double) { return n.frob2; }},
      {"jac", [](const AttentionNormsSquared& n, double) { return std::sqrt(n.jac2); }, false, "jac2"},
      {"jac2", [](const AttentionNormsSquared& n, double) { return n.jac2; }},
      {"qgrad", [](const AttentionNormsSquared& n, double) { return std::sqrt(n.qgrad2); }, true, "qgrad2"},
      {"qgrad2", [](const AttentionNormsSquared& n, double) { return n.qgrad2; }, true},
      {"kgrad", [](const AttentionNormsSquared& n, double) { return std::sqrt(n.kgrad2); }, true, "kgrad2"},
      {"kgrad2", [](const AttentionNormsSquared& n, double) { return n.kgrad2; }, true},
      {"mean_weight", [](const AttentionNormsSquared& n, double N) { return n.sum / (N * N); }},
      {"row_sum", [](const AttentionNormsSquared& n, double N) { return n.sum / N; }},
      {"row_sum2", [](const AttentionNormsSquared& n, double N) { return n.row_sum2 / N; }},
  };
  return table;
}

}  // namespace

const std::vector<std::string>& attention_quantities() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& q : quantity_table()) n.push_back(q.name);
    return n;
  }();
  return names;
}

bool is_gradient_quantity(const std::string& quantity) {
  const auto& table = quantity_table();
  return std::any_of(table.begin(), table.end(), [&](const Quantity& q) { return q.gradient && q.name == quantity; });
}

namespace {

// Per-trial observables from the squared norms of each activation, one per quantity of quantity_table().
void observables(const AttentionNormsSquared& n, double N, std::span<double> out) {
  const auto& table = quantity_table();
  for (std::size_t q = 0; q < table.size(); ++q) out[q] = table[q].of(n, N);
}

// The control variates of config.exact_mean for the activations in order (observable a·per + q for quantity q).
std::vector<ControlVariate> control_variates(const AttentionMcConfig& c) {
  std::vector<ControlVariate> controls;
  if (!c.exact_mean) return controls;
  const auto& table = quantity_table();
  const auto index = [&](const std::string& name) {
    return std::size_t(std::find_if(table.begin(), table.end(), [&](const Quantity& q) { return q.name == name; }) -
                       table.begin());
  };
  for (std::size_t a = 0; a < c.activations.size(); ++a) {
    const auto activation = c.activations[a].resolve(c.ensemble.N, c.ensemble.d);
    for (std::size_t q = 0; q < table.size(); ++q) {
      if (table[q].control.empty() || (table[q].gradient && !c.gradients)) continue;
      const double mean = c.exact_mean(c.ensemble, activation, table[q].control);
      if (std::isfinite(mean))
        controls.push_back({a * table.size() + q, a * table.size() + index(table[q].control), mean});
    }
  }
  return controls;
}

template <class T>
std::vector<Estimate> simulate(const AttentionMcConfig& c, const ProgressFn& progress) {
  const auto& e = c.ensemble;
  std::vector<Activation> resolved;
  for (const auto& a : c.activations) resolved.push_back(a.resolve(e.N, e.d));
  const std::size_t per = attention_quantities().size();
  // One trial per thread while a trial's working set (X, U, V, tiles) stays small and there are
  // trials enough for every thread; otherwise trials in order, each spread over the threads.
  const bool parallel_trials = e.N <= 2048 && c.trials >= 2u * static_cast<unsigned>(omp_get_max_threads());
  return run_trials(
      c.trials, per * resolved.size(),
      [&](std::uint32_t t, std::span<double> out) {
        thread_local EnsembleSample<T> s;  // storage reused: no allocation in the trial loop once warm
        draw_ensemble(e, c.seed, t, s);
        for (std::size_t a = 0; a < resolved.size(); ++a)
          observables(attention_norms_streamed(s.X, s.Q, s.K, resolved[a], {}, c.gradients), double(e.N),
                      out.subspan(a * per, per));
      },
      parallel_trials, progress, control_variates(c));
}

// This rank's place on its node picks its GPU and its share of the node's memory.
accel::Options device_options() {
  return {.device = distributed::node_rank(), .ranks_on_node = distributed::node_size()};
}

// The accelerated engines compute every trial of this rank's block first (on GPU node rank mod devices); the estimates
// then accumulate in trial order as above.
std::vector<Estimate> simulate_accelerated(const AttentionMcConfig& c, const ProgressFn& progress) {
  const auto& e = c.ensemble;
  const auto block = distributed::block_of(c.trials, distributed::rank(), distributed::size());
  auto problem = accelerated_problem(c);
  problem.first_trial = std::uint32_t(block.first);
  problem.trials = std::uint32_t(block.last - block.first);
  const auto norms = problem.trials == 0 ? std::vector<AttentionNormsSquared>{}
                                         : accel::trial_norms(c.backend == Backend::cuda ? accel::Device::cuda
                                                                                         : accel::Device::thrust_omp,
                                                              problem, device_options(), progress);
  const std::size_t per = attention_quantities().size(), A = c.activations.size();
  return run_trials(
      c.trials, per * A,
      [&](std::uint32_t t, std::span<double> out) {
        for (std::size_t a = 0; a < A; ++a)
          observables(norms[(t - block.first) * A + a], double(e.N), out.subspan(a * per, per));
      },
      false, {}, control_variates(c));
}

}  // namespace

std::vector<ResultRow> run_attention_norms(const AttentionMcConfig& c, const ProgressFn& progress) {
  c.ensemble.validate();
  if (c.trials < 1) throw std::invalid_argument("trials must be at least 1");
  for (const auto& a : c.activations) a.validate(c.ensemble.N, c.ensemble.d);
  validate_backend(c.backend, c.activations);
  const auto estimates = c.backend != Backend::cpu           ? simulate_accelerated(c, progress)
                         : c.precision == Precision::float64 ? simulate<double>(c, progress)
                                                             : simulate<float>(c, progress);
  std::vector<ResultRow> rows;
  const auto& names = attention_quantities();
  for (std::size_t a = 0; a < c.activations.size(); ++a) {
    const auto& act = c.activations[a];
    const bool poly = find_activation(act.name).uses_p;
    for (std::size_t q = 0; q < names.size(); ++q) {
      if (!c.gradients && is_gradient_quantity(names[q])) continue;
      ResultRow r;
      r.study = c.study;
      r.quantity = names[q];
      r.activation = act.label();
      r.convention = poly ? to_string(act.convention) : "";
      r.precision = to_string(c.precision);
      r.N = c.ensemble.N;
      r.D = c.ensemble.D;
      r.d = c.ensemble.d;
      r.p = poly ? act.p : 0;
      if (poly) r.k = act.k;
      r.sigma_x = c.ensemble.sigma_x;
      r.sigma_t = c.ensemble.sigma_t;
      r.trials = c.trials;
      r.value = estimates[a * names.size() + q];
      if (!std::isnan(r.value.variance_ratio))
        r.extra.emplace_back("cv_variance_ratio", text(sig(r.value.variance_ratio, 4)));
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

void refuse_what_device_cannot_fit(const AttentionMcConfig& c) {
  if (c.backend == Backend::cpu) return;
  accel::refuse_what_cannot_fit(c.backend == Backend::cuda ? accel::Device::cuda : accel::Device::thrust_omp,
                                accelerated_problem(c), device_options());
}

accel::Problem accelerated_problem(const AttentionMcConfig& c) {
  const auto& e = c.ensemble;
  accel::Problem problem{.N = e.N,
                         .D = e.D,
                         .d = e.d,
                         .sigma_x = e.sigma_x,
                         .sigma_t = e.sigma_t,
                         .seed = c.seed,
                         .configuration = e.configuration_key(),
                         .trials = c.trials,
                         .single_precision = c.precision == Precision::float32,
                         .activations = {}};
  for (const auto& spec : c.activations) {
    const auto a = spec.resolve(e.N, e.d);
    if (const auto* f = std::get_if<ElementwiseActivation>(&a.fn))
      problem.activations.push_back(
          {.softmax = false, .fn = f->fn, .p = f->p, .logit_scale = f->logit_scale, .out_scale = f->out_scale});
    else  // softmax: validate_backend admits no other row-normalised ϕ
      problem.activations.push_back(
          {.softmax = true, .fn = Elementwise::identity, .p = 1, .logit_scale = logit_scale(a), .out_scale = 1.0});
  }
  return problem;
}

std::string cache_key(const AttentionMcConfig& c) {
  std::string key = text(c.study, '|', c.ensemble.describe(), "|seed=", c.seed, "|trials=", c.trials, '|',
                         to_string(c.precision));
  if (c.backend != Backend::cpu) key += "|backend=" + to_string(c.backend);  // cpu keys predate backends
  if (c.backend == Backend::cuda) key += "|device=" + accel::cuda_device_description();
  for (const auto& a : c.activations) key += '|' + a.key();
  if (!c.gradients) key += "|no-gradients";
  if (c.exact_mean) key += "|control-variates";
  return key;
}

}  // namespace attnlab
