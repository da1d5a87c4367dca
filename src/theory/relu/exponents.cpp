// The exponents in N of the RELU weights' mean, row sums and Frobenius norm: identities, since the law of one logit
// does not depend on N, fitted on the sweep; the closed forms give the footnote's exception (relu² grows like c²).
#include "sweep.hpp"

#include <ranges>

namespace attnlab::relu_claims {
namespace {

constexpr const char* kRelu = "RELU";

// The exact exponent of each quantity of ϕ = N^{-α}h(S) in N (header of theory/logit_moments.hpp).
double claimed_exponent(const std::string& quantity, double alpha) {
  return quantity == "mean_weight" ? -alpha : 1 - alpha;
}

struct ExponentClaim {
  std::string quantity;  // mean_weight, row_sum or frob
  std::vector<double> alphas;
  bool homogeneity = false;  // report the degrees of E h(cZ) in c (the footnote's exception)
};

struct SweepEvidence {
  ExponentClaim claim;
  std::vector<ResultRow> rows;
};

// d log E h(cZ)/d log c at c = 1 (Z ~ N(0, 1)), by a central difference of the closed forms: 1 for relu,
// 2 for relu², which the footnote calls the exception to "ReLU preserves O(1)".
std::string homogeneity_degrees() {
  std::string s;
  for (const auto& h : relu_functions()) {
    const auto fn = find_activation(h).fn;
    const double lo = theory::gaussian_moments(fn, 1 / 1.01).mean, hi = theory::gaussian_moments(fn, 1.01).mean;
    s += text(" ", h, " ",
              lo == 0 && hi == 0 ? std::string("(E h = 0)") : sig(std::log(hi / lo) / (2 * std::log(1.01)), 3), ";");
  }
  return s;
}

// Curves with E h(S) = 0 have no exponent to fit: their means are held to 0 instead.
bool zero_mean(const std::string& quantity, const std::string& h) { return quantity != "frob" && has_zero_mean(h); }

ClaimOutcome judge_exponents(const SweepEvidence& e, const Thresholds& t) {
  const auto& claim = e.claim;
  ClaimOutcome out{.verdict = Verdict::holds};
  std::string fits, zeros;
  Figure fig{.name = text("relu_", claim.quantity),
             .title = text(claim.quantity == "frob"      ? "E||h(S)/N^alpha||_F, alpha = 1 and 1/2 (grid init)"
                           : claim.quantity == "row_sum" ? "row sums sum_j h(S_ij)/N at initialisation (grid init)"
                                                         : "mean attention weight E_ij[h(S_ij)/N] (grid init)"),
             .xlabel = "N (sequence length, tokens)",
             .ylabel = "mean with 95% CI",
             .logx = true,
             .logy = claim.quantity != "row_sum"};
  std::size_t zero_points = 0;
  std::int64_t trials = 0;
  for (const auto& r : e.rows) trials = std::max<std::int64_t>(trials, r.trials);
  for (const auto& h : zero_mean_functions())
    for (const auto& r : e.rows) zero_points += r.quantity == claim.quantity && r.activation.rfind(h + "/", 0) == 0;
  // Read only where a curve's mean is held to 0: the Frobenius norm has none.
  const bool holds_zeros = std::any_of(zero_mean_functions().begin(), zero_mean_functions().end(),
                                       [&](const std::string& h) { return zero_mean(claim.quantity, h); });
  const double z_max = holds_zeros ? critical_z(t, zero_points, trials) : HUGE_VAL;
  for (const double alpha : claim.alphas)
    for (const auto& g : init_grids())
      for (const auto& h : relu_functions()) {
        const auto c = select_curve(e.rows, claim.quantity, scaled(h, alpha, g.qk_layernorm).label(), g.name);
        out.evidence.insert(out.evidence.end(), c.rows.begin(), c.rows.end());
        if (c.nonfinite > 0) {
          out.verdict = worst(out.verdict, Verdict::inconclusive);
          fits += text(" ", g.name, "/", h, "/N^", alpha, ": ", c.nonfinite, " non-finite trials;");
          continue;
        }
        if (zero_mean(claim.quantity, h)) {
          double largest = 0;
          for (std::size_t i = 0; i < c.y.size(); ++i) largest = std::max(largest, std::abs(c.y[i] / c.se[i]));
          if (largest > z_max) out.verdict = worst(out.verdict, Verdict::inexact);
          zeros += text(" ", g.name, "/", h, "/N^", alpha, " largest |mean/SE| ", sig(largest, 3), ";");
          continue;
        }
        const auto fit = fit_power_law(c.x, c.y, c.se);
        out.verdict = worst(out.verdict, growth_verdict(fit, claimed_exponent(claim.quantity, alpha), t));
        fits += text(" ", g.name, "/", h, "/N^", alpha, " ", sig(fit.exponent, 3), " [", sig(fit.ci_lo, 3), ", ",
                     sig(fit.ci_hi, 3), "];");
        if (g.name == "init" && h == "relu" && alpha == 1.0)
          out.measured = fit.exponent, out.ci_lo = fit.ci_lo, out.ci_hi = fit.ci_hi;
        if (g.name == "init" && (h == "relu" || h == "relu2" || h == "gelu"))
          fig.series.push_back({.label = text(h, "/N^", alpha),
                                .x = c.x,
                                .y = c.y,
                                .lo = c.lo,
                                .hi = c.hi,
                                .fit = SeriesFit{.law = fit}});
      }
  out.claimed = claimed_exponent(claim.quantity, 1.0);
  if (claim.quantity == "frob") {
    const auto poly = select_curve(e.rows, "frob", poly_reference(false).label(), "init");
    const auto soft = select_curve(e.rows, "frob", softmax_reference(false).label(), "init");
    fig.series.push_back({.label = "x^3/sqrtN (POLY)", .x = poly.x, .y = poly.y, .lo = poly.lo, .hi = poly.hi});
    fig.series.push_back({.label = "softmax", .x = soft.x, .y = soft.y, .lo = soft.lo, .hi = soft.hi});
    Series level{.label = "sqrt(E||softmax||_F^2), N(0,1) logits (closed form)"};
    for (const double N : soft.x) {
      level.x.push_back(N);
      level.y.push_back(std::sqrt(N * theory::softmax_row_norm2(N, 1.0)));
    }
    fig.series.push_back(level);
  }
  out.detail = text("fitted exponent in N of ", claim.quantity, " (claimed ",
                    claim.quantity == "mean_weight" ? "-alpha" : "1 - alpha", "):", fits);
  if (!zeros.empty())
    out.detail += text(" | E h(S) = 0 exactly (", listed(zero_mean_functions()), " is odd), means held to 0 within ",
                       sig(z_max, 3), " SE:", zeros);
  if (claim.homogeneity)
    out.detail += " | d log E h(cZ)/d log c at c = 1 (closed forms; relu2 is the exception):" + homogeneity_degrees();
  out.figures.push_back(fig);
  return out;
}

// Every curve of the evidence multiplied by N^shift: the fitted exponents move by `shift`.
void tilt(std::vector<ResultRow>& rows, double shift) {
  for (auto& r : rows) scale_estimate(r.value, std::pow(double(r.N), shift));
}

// Every curve replaced by its exact expectation (the mean weight and row sum by theory/logit_moments,
// E‖ϕ‖_F by √E‖ϕ‖_F² times the measured ratio at the first N), measured with 100 times the trials.
void exact_curves(SweepEvidence& e) {
  for (const double alpha : e.claim.alphas)
    for (const auto& g : init_grids())
      for (const auto& h : relu_functions()) {
        const auto m = exact_moments(h, g);
        const auto label = scaled(h, alpha, g.qk_layernorm).label();
        double frob_ratio = 0;  // E‖ϕ‖_F / √E‖ϕ‖_F² at the smallest N (Jensen's gap, nearly constant in N)
        Index first = 0;
        for (const auto& r : e.rows)
          if (r.quantity == "frob" && r.activation == label && extra_value(r, "grid") == g.name &&
              (first == 0 || r.N < first))
            first = r.N, frob_ratio = r.value.mean / std::sqrt(theory::weight_levels(m, double(r.N), alpha).frob2);
        for (auto& r : e.rows) {
          if (r.activation != label || extra_value(r, "grid") != g.name) continue;
          const auto level = theory::weight_levels(m, double(r.N), alpha);
          if (r.quantity == "mean_weight") move_estimate(r.value, level.mean_weight, 10);
          if (r.quantity == "row_sum") move_estimate(r.value, level.row_sum, 10);
          if (r.quantity == "frob") move_estimate(r.value, frob_ratio * std::sqrt(level.frob2), 10);
        }
      }
}

// The last curve the judge fits (fitted: an exponent) or holds to 0 (not fitted): its alpha and its rows in N order.
struct CurveRows {
  double alpha;
  std::vector<ResultRow*> rows;
};
CurveRows last_curve(SweepEvidence& e, bool fitted) {
  for (auto alpha = e.claim.alphas.rbegin(); alpha != e.claim.alphas.rend(); ++alpha)
    for (const auto& g : std::views::reverse(init_grids()))
      for (const auto& h : std::views::reverse(relu_functions())) {
        if (zero_mean(e.claim.quantity, h) == fitted) continue;
        std::vector<ResultRow*> rows;
        for (auto& r : e.rows)
          if (r.quantity == e.claim.quantity && r.activation == scaled(h, *alpha, g.qk_layernorm).label() &&
              extra_value(r, "grid") == g.name)
            rows.push_back(&r);
        if (!rows.empty()) return {*alpha, rows};
      }
  throw std::logic_error("no curve to place a crossing on");
}

PowerLawFit fit_of(const std::vector<ResultRow*>& rows) {
  std::vector<double> x, y, se;
  for (const auto* r : rows) x.push_back(double(r->N)), y.push_back(r->value.mean), se.push_back(r->value.se);
  return fit_power_law(x, y, se);
}

// growth_verdict's edges on the last fitted curve alone, after the support: its interval's lower end at the claimed
// exponent + x, its interval x wide; and, where a mean is held to 0, the last such point at the quantile of a
// false-alarm rate x.
std::vector<Crossing<SweepEvidence>> exponent_crossings(const ExponentClaim& claim) {
  std::vector<Crossing<SweepEvidence>> crossings{
      {&kExponentTolerance, "the last curve's exponent above the claimed", Verdict::holds, Verdict::violated,
       [](SweepEvidence& e, double x) {
         exact_curves(e);
         const auto [alpha, rows] = last_curve(e, true);
         const double shift = claimed_exponent(e.claim.quantity, alpha) + x - fit_of(rows).ci_lo;
         for (auto* r : rows) scale_estimate(r->value, std::pow(double(r->N), shift));
       }},
      {&kExponentCiMax, "the last curve's exponent interval", Verdict::holds, Verdict::inconclusive,
       [](SweepEvidence& e, double x) {
         exact_curves(e);
         const auto rows = last_curve(e, true).rows;
         const auto fit = fit_of(rows);
         for (auto* r : rows) r->value.se *= x / (fit.ci_hi - fit.ci_lo);  // the interval's width goes with the errors
       }}};
  if (claim.quantity != "frob")
    crossings.push_back({&kFamilyFalseAlarm, "the last zero-mean point at the quantile of a false-alarm rate x",
                         Verdict::inexact, Verdict::holds, [](SweepEvidence& e, double x) {
                           exact_curves(e);
                           std::size_t points = 0;
                           std::int64_t trials = 0;
                           for (const auto& r : e.rows) {
                             trials = std::max<std::int64_t>(trials, r.trials);
                             for (const auto& h : zero_mean_functions())
                               points += r.quantity == e.claim.quantity && r.activation.rfind(h + "/", 0) == 0;
                           }
                           auto& last = last_curve(e, false).rows.back()->value;
                           move_estimate(last, z_at_false_alarm(x, points, trials) * last.se, 1);
                         }});
  return crossings;
}

ClaimRules<SweepEvidence> exponent_rules(ExponentClaim claim) {
  return {.measure =
              [claim](const ClaimContext& ctx) {
                return SweepEvidence{claim, relu_sweep(ctx)};
              },
          .judge = judge_exponents,
          .contradict = [](SweepEvidence& e) { tilt(e.rows, 0.5); },  // every exponent half a power too large
          .support = exact_curves,
          .crossings = exponent_crossings(claim)};
}

}  // namespace

void register_row_sum_exponent_claims(ClaimRegistry& r) {
  const std::string grids = grids_method();
  r.add(make_claim<SweepEvidence>(
      {.id = "relu.mean_weight",
       .source = kRelu,
       .statement = "with alpha = 1, E_j[alpha_ij] = O(1/L) at initialisation; relu^2 is the exception",
       .method = "mean attention weight of h(S)/N^alpha over N, fitted exponent per h, alpha and grid (claimed "
                 "-alpha); identity's mean is held to 0." +
                 grids,
       .identity =
           "the law of S_ij = q_i.k_j/sqrt(d) does not depend on N, so E_ij[phi_ij] = N^-alpha ((N-1) E h(S_12) "
           "+ E h(S_11))/N: exponent -alpha exactly; its constant is relu.row_sum_constant's. The exception: "
           "relu is 1-homogeneous, relu^2 2-homogeneous, so E h(cS) grows like c and c^2 in the logit scale"},
      exponent_rules({"mean_weight", {0.5, 1.0}, true})));
  r.add(make_claim<SweepEvidence>(
      {.id = "relu.row_sum",
       .source = kRelu,
       .statement = "softmax rows sum to 1; measure the row sums of L^{-alpha} h",
       .method = "mean row sum of h(S)/N over N, fitted exponent per h and grid (claimed 0 at alpha = 1)." + grids,
       .identity = "a row sum is N times the mean weight: exponent 1 - alpha exactly (0 at alpha = 1); its value, "
                   "E h(S) and not softmax's 1, is relu.row_sum_constant"},
      exponent_rules({"row_sum", {1.0}})));
}

void register_frob_exponent_claims(ClaimRegistry& r) {
  const std::string grids = grids_method();
  r.add(make_claim<SweepEvidence>(
      {.id = "relu.frob",
       .source = kRelu,
       .statement = "||L^{-alpha} h(S)||_F grows like N^{1-alpha}; alpha = 1 (RELU) against alpha = 1/2 (POLY)",
       .method =
           "E||h(S)/N^alpha||_F over N for alpha = 1 and 1/2, fitted exponent per h and grid (claimed 1 - alpha), "
           "plotted with x^3/sqrtN, softmax and softmax's closed-form level for N(0,1) logits." +
           grids,
       .identity =
           "E||phi||_F^2 = N^-2alpha (N(N-1) E h(S_12)^2 + N E h(S_11)^2) exactly, and ||phi||_F/N^(1-alpha) "
           "lies between its positive limit E sqrt(E[h^2 | Q, K]) and sqrt(E h^2) (Jensen): exponent 1 - alpha; "
           "the constant is relu.frob_constant"},
      exponent_rules({"frob", {1.0, 0.5}})));
}

}  // namespace attnlab::relu_claims
