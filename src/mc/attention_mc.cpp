#include <attnlab/core/text.hpp>
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/norms/attention_norms.hpp>

#include <omp.h>

#include <cmath>
#include <stdexcept>

namespace attnlab {

Precision parse_precision(const std::string& s) {
  if (s == "double") return Precision::float64;
  if (s == "float") return Precision::float32;
  throw std::invalid_argument(text("precision must be float or double (got '", s, "')"));
}

std::string to_string(Precision p) { return p == Precision::float64 ? "double" : "float"; }

const std::vector<std::string>& attention_quantities() {
  static const std::vector<std::string> names{"frob",   "frob2",  "jac",         "jac2",    "qgrad",   "qgrad2",
                                              "kgrad",  "kgrad2", "mean_weight", "row_sum", "row_sum2"};
  return names;
}

namespace {

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
        EnsembleSample<T> s;
        draw_ensemble(e, c.seed, t, s);
        for (std::size_t a = 0; a < resolved.size(); ++a) {
          const auto n = attention_norms_streamed(s.X, s.Q, s.K, resolved[a]);
          const double squared[] = {n.frob2, n.jac2, n.qgrad2, n.kgrad2};
          for (std::size_t q = 0; q < 4; ++q) {
            out[a * per + 2 * q] = std::sqrt(squared[q]);
            out[a * per + 2 * q + 1] = squared[q];
          }
          const double N = static_cast<double>(e.N);
          out[a * per + 8] = n.sum / (N * N);
          out[a * per + 9] = n.sum / N;
          out[a * per + 10] = n.row_sum2 / N;
        }
      },
      parallel_trials, progress);
}

}  // namespace

std::vector<ResultRow> run_attention_norms(const AttentionMcConfig& c, const ProgressFn& progress) {
  c.ensemble.validate();
  if (c.trials < 1) throw std::invalid_argument("trials must be at least 1");
  for (const auto& a : c.activations) a.validate(c.ensemble.N, c.ensemble.d);
  const auto estimates = c.precision == Precision::float64 ? simulate<double>(c, progress) : simulate<float>(c, progress);
  std::vector<ResultRow> rows;
  const auto& names = attention_quantities();
  for (std::size_t a = 0; a < c.activations.size(); ++a) {
    const auto& act = c.activations[a];
    const bool poly = find_activation(act.name).uses_p;
    for (std::size_t q = 0; q < names.size(); ++q) {
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
      r.k = poly ? act.k.str() : "";
      r.sigma_x = c.ensemble.sigma_x;
      r.sigma_t = c.ensemble.sigma_t;
      r.trials = c.trials;
      r.value = estimates[a * names.size() + q];
      rows.push_back(std::move(r));
    }
  }
  return rows;
}

std::string cache_key(const AttentionMcConfig& c) {
  std::string key = text(c.study, '|', c.ensemble.describe(), "|seed=", c.seed, "|trials=", c.trials, '|',
                         to_string(c.precision));
  for (const auto& a : c.activations) key += '|' + a.key();
  return key;
}

}  // namespace attnlab
