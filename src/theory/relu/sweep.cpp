// The RELU claims' shared definitions: the family's h, the grids and the sweep over them, the Bonferroni quantile, and
// the wording of the ensemble and the law that the claims' methods end with.
#include "sweep.hpp"

namespace attnlab::relu_claims {
namespace {

constexpr Index kDim = 64;  // D = d
constexpr Index kSoftmaxMaxN = 256;

}  // namespace

// Many points are compared at once: each is held to the Student-t quantile that keeps the chance of any
// false alarm among all of them at this rate (Bonferroni).
const Threshold kFamilyFalseAlarm{
    "family_false_alarm", 0.01,
    "not in the papers: the chance that an exact formula is flagged at any of the claim's points by noise "
    "alone; each point's |z| is held to the Student-t quantile 1 - rate/(2 x points) at trials - 1 degrees "
    "of freedom (Bonferroni)"};

const std::vector<std::string>& relu_functions() {
  static const auto names = activation_names(ActivationFamily::relu);
  return names;
}

std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

const std::vector<std::string>& zero_mean_functions() {
  static const auto names = [] {
    std::vector<std::string> out;
    for (const auto& h : relu_functions())
      if (theory::gaussian_moments(find_activation(h).fn, 1.0).mean == 0) out.push_back(h);
    return out;
  }();
  return names;
}
bool has_zero_mean(const std::string& h) {
  return std::ranges::find(zero_mean_functions(), h) != zero_mean_functions().end();
}

std::vector<InitGrid> init_grids() { return {{"init", 1.0 / std::sqrt(double(kDim)), false}, {"qkln", 1.0, true}}; }
std::vector<Index> sizes(bool quick) {
  return quick ? std::vector<Index>{8, 16, 32, 64, 128} : std::vector<Index>{16, 32, 64, 128, 256, 512, 1024};
}
EnsembleSpec grid_ensemble(const InitGrid& g, Index N) { return {N, kDim, kDim, 1.0, g.sigma_t}; }

ActivationSpec scaled(const std::string& h, double alpha, bool qkln) {
  auto spec = ActivationSpec::parse(qkln ? h + "+qkln" : h);
  spec.alpha = alpha;
  return spec;
}

ActivationSpec poly_reference(bool qkln) {
  return {"poly", 3, KScale::parse("sqrtN"), Convention::inside, 1.0, {.qk_layernorm = qkln}};
}

ActivationSpec softmax_reference(bool qkln) { return ActivationSpec::parse(qkln ? "softmax+qkln" : "softmax"); }

std::vector<ResultRow> relu_sweep(const ClaimContext& ctx) {
  std::vector<ResultRow> rows;
  for (const auto& g : init_grids())
    for (Index N : sizes(ctx.quick)) {
      std::vector<ActivationSpec> acts;
      for (const auto& h : relu_functions())
        for (double alpha : {0.5, 1.0}) acts.push_back(scaled(h, alpha, g.qk_layernorm));
      acts.push_back(poly_reference(g.qk_layernorm));
      // Softmax's row-normalised path costs seconds a trial at N = 1024; its level is resolved by N = 256.
      if (N <= kSoftmaxMaxN) acts.push_back(softmax_reference(g.qk_layernorm));
      AttentionMcConfig c{.ensemble = grid_ensemble(g, N),
                          .activations = acts,
                          .seed = ctx.seed,
                          .trials = ctx.trials_or(32, 8),
                          .precision = Precision::float64,
                          .study = "verify"};
      auto part = ctx.attention_norms(c, text("relu grid ", g.name, " N=", N));
      for (auto& r : part) r.extra.push_back({"grid", g.name});
      rows.insert(rows.end(), part.begin(), part.end());
    }
  return rows;
}

theory::EntryMoments exact_moments(const std::string& h, const InitGrid& g) {
  return theory::logit_moments(find_activation(h).fn, grid_ensemble(g, 1), g.qk_layernorm);
}

double critical_z(const Thresholds& t, std::size_t points, std::int64_t trials) {
  const double per_point = t(kFamilyFalseAlarm) / (2.0 * double(std::max<std::size_t>(points, 1)));
  return student_t_quantile(1 - per_point, double(std::max<std::int64_t>(trials - 1, 1)));
}

// From the threshold's definition, not from critical_z: a crossing placed by the rule it tests would move with it.
double z_at_false_alarm(double x, std::size_t points, std::int64_t trials) {
  return student_t_quantile(1 - x / (2.0 * double(std::max<std::size_t>(points, 1))),
                            double(std::max<std::int64_t>(trials - 1, 1)));
}

void scale_estimate(Estimate& e, double f) {
  for (double* v : {&e.mean, &e.se, &e.ci_lo, &e.ci_hi}) *v *= f;
}
void move_estimate(Estimate& e, double mean, double precision) {
  e.ci_lo = mean + (e.ci_lo - e.mean) / precision;
  e.ci_hi = mean + (e.ci_hi - e.mean) / precision;
  e.se /= precision;
  e.mean = mean;
}

std::string grids_method() {
  return " Ensemble X ~ N(0,1), D = d = 64, at initialisation: grid `init` takes Q, K ~ N(0, 1/D) so that q, k are "
         "O(1); grid `qkln` applies qk-layernorm. h in {" +
         listed(relu_functions()) + "}.";
}

std::string law_method() {
  return " The exact law of one logit (theory/logit_moments.hpp): S = tau Z with tau^2 a product of three scaled "
         "chi-squares on grid init, S = sqrt(d) t with (1 + t)/2 ~ Beta((d-2)/2, (d-2)/2) on grid qkln.";
}

}  // namespace attnlab::relu_claims
