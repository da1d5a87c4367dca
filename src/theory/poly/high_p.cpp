// POLY §5, A.2.4: x^p and its gradients at initialisation, the mechanism the paper gives for large p training poorly.
#include "growth_sweep.hpp"

namespace attnlab::poly_claims {
namespace {

// ---- POLY §5, A.2.4: x^p and its gradients at initialisation -------------------------------------

// The logits' scale at step 0 is the trainer's --init (train/vit.hpp): timm's N(0, 0.02^2) Q and K give S/sqrt(d) the
// standard deviation D sigma_t^2 (0.0128 at D = 32), unit gives 1. Tokens after LayerNorm: sigma_x = 1.
constexpr Index kInitDim = 32;
constexpr double kTimmWeightStd = 0.02;

struct HighPEvidence {
  std::string init;
  double logit_std = 0;
  std::vector<ResultRow> rows{};  // frob, jac, qgrad of x^p (inside, k = 1) for p = 1..kCataloguePMax
};

HighPEvidence measure_high_p(const ClaimContext& ctx, const std::string& init, double sigma_t) {
  AttentionMcConfig c{.ensemble = {.N = kInitDim, .D = kInitDim, .d = kInitDim, .sigma_x = 1.0, .sigma_t = sigma_t},
                      .activations = {},
                      .seed = ctx.seed,
                      .trials = ctx.trials_or(64, 16),
                      .precision = Precision::float64,
                      .study = "verify"};
  for (int p = 1; p <= kCataloguePMax; ++p)
    c.activations.push_back({.name = "poly", .p = p, .k = KScale{}, .convention = Convention::inside});
  HighPEvidence e{.init = init, .logit_std = double(kInitDim) * sigma_t * sigma_t};
  for (const auto& r : ctx.attention_norms(c, text("x^p at ", init, " initialisation")))
    if (r.quantity == "frob" || r.quantity == "jac" || r.quantity == "qgrad") e.rows.push_back(r);
  return e;
}

const std::array<std::pair<const char*, const char*>, 3> kHighPQuantities{
    {{"frob", "E||S^p||_F"}, {"jac", "E||dS^p/dS||_F"}, {"qgrad", "E||dS^p/dQ||_F"}}};

// Each quantity's means by p (1..kCataloguePMax), in the rows' order.
std::vector<const ResultRow*> by_p(const HighPEvidence& e, const std::string& quantity) {
  std::vector<const ResultRow*> rows(kCataloguePMax, nullptr);
  for (const auto& r : e.rows)
    if (r.quantity == quantity && r.p >= 1 && r.p <= kCataloguePMax) rows[std::size_t(r.p - 1)] = &r;
  return rows;
}

// "x^p and its gradient vanish near 0 for large p": every step p -> p + 1 lowers each norm (95% interval of the
// ratio of means below 1; violated where one lies above 1). The ratio's error ignores the positive correlation of
// the two means (the same samples), so it errs wide.
ClaimOutcome judge_high_p(const HighPEvidence& e, const Thresholds&) {
  ClaimOutcome out{.verdict = Verdict::holds, .claimed = 1};
  double largest_step = 0;
  std::string detail;
  for (const auto& [quantity, name] : kHighPQuantities) {
    const auto rows = by_p(e, quantity);
    if (std::any_of(rows.begin(), rows.end(), [](const ResultRow* r) { return !r || r->value.nonfinite > 0; })) {
      out.verdict = worst(out.verdict, Verdict::inconclusive);
      detail += text(" ", name, ": missing or non-finite;");
      continue;
    }
    std::string steps;
    for (std::size_t i = 0; i + 1 < rows.size(); ++i) {
      const auto &a = rows[i]->value, &b = rows[i + 1]->value;
      const double r = b.mean / a.mean, se = r * std::hypot(a.se / a.mean, b.se / b.mean);
      const double lo = r - 1.96 * se, hi = r + 1.96 * se;
      if (lo > 1) out.verdict = worst(out.verdict, Verdict::violated);
      else if (hi >= 1) out.verdict = worst(out.verdict, Verdict::inconclusive);
      largest_step = std::max(largest_step, r);
      steps += text(i ? ", " : "", sig(r, 3));
    }
    detail += text(" ", name, " ", sig(rows.front()->value.mean, 3), " at p = 1, ", sig(rows.back()->value.mean, 3),
                   " at p = ", kCataloguePMax, " (step ratios ", steps, ");");
  }
  out.measured = largest_step;
  out.detail = text(e.init, " initialisation (N = D = d = ", kInitDim, ", sigma_x = 1; S/sqrt(d) of std ",
                    sig(e.logit_std, 3), "): x^p, inside, k = 1;", detail,
                    " holds when every step's 95% interval lies below 1, violated where one lies above (measured: the "
                    "largest step ratio)");
  out.evidence = e.rows;
  return out;
}

// Each quantity's means set to its p = 1 mean times factor^(p - 1), as if measured with 100 times the trials.
void geometric_in_p(HighPEvidence& e, double factor) {
  for (const auto& [quantity, name] : kHighPQuantities) {
    const auto rows = by_p(e, quantity);
    if (!rows.front()) continue;
    const double first = rows.front()->value.mean;
    for (auto& r : e.rows)
      if (r.quantity == quantity) {
        r.value.nonfinite = 0;
        measured_precisely_at(r.value, first * std::pow(factor, r.p - 1));
      }
  }
}

ClaimRules<HighPEvidence> high_p_rules(std::string init, double sigma_t) {
  return {.measure = [init, sigma_t](const ClaimContext& ctx) { return measure_high_p(ctx, init, sigma_t); },
          .judge = judge_high_p,
          .contradict = [](HighPEvidence& e) { geometric_in_p(e, 2.0); },
          .support = [](HighPEvidence& e) { geometric_in_p(e, 0.5); }};
}

}  // namespace

void register_high_p_claims(ClaimRegistry& r) {
  r.add(make_claim<HighPEvidence>(
      {.id = "poly.high_p.init_norms",
       .source = "POLY §5, A.2.4",
       .statement = "x^p and its gradient vanish near 0 for large p: at initialisation E||S^p||_F, E||dS^p/dS||_F and "
                    "E||dS^p/dQ||_F fall with every step of p = 1..8 (the logits of timm's N(0, 0.02^2) Q and K; "
                    "poly.high_p.init_norms.unit takes the unit-variance init)",
       .method = "Monte-Carlo of the three norms on the X, Q, K ensemble, N = D = d = 32, sigma_x = 1, sigma_t = 0.02 "
                 "(S/sqrt(d) of std 0.0128), x^p inside, k = 1; ratio of consecutive means with 95% intervals"},
      high_p_rules("timm", kTimmWeightStd)));
  r.add(make_claim<HighPEvidence>(
      {.id = "poly.high_p.init_norms.unit",
       .source = "POLY §5, A.2.4",
       .statement =
           "the same at the unit-variance init (the trainer's --init unit: S/sqrt(d) of std 1), where E|z|^2p = "
           "(2p-1)!! grows with p",
       .method = "as poly.high_p.init_norms with sigma_t = 1/sqrt(D)"},
      high_p_rules("unit", 1 / std::sqrt(double(kInitDim)))));
}

}  // namespace attnlab::poly_claims
