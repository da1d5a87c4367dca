// The RELU claims that need no training: mean weights, row sums and Frobenius norms of ϕ = L^{-α}h(S) at
// initialisation. The law of one logit does not depend on N, so their exponents in N follow from the
// construction (identities); the constants, E h(S) and E h(S)² under the exact law of the toolkit's logits
// (theory/logit_moments.hpp), are what can fail, beside the Gaussian-logit model of that law and softmax's
// Frobenius level for Gaussian logits.
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/norms/attention_norms.hpp>
#include <attnlab/theory/claims.hpp>
#include <attnlab/theory/logit_moments.hpp>
#include <attnlab/theory/verdicts.hpp>

#include <algorithm>
#include <cmath>
#include <map>

namespace attnlab {
namespace {

constexpr const char* kRelu = "RELU";

// The RELU paper's h, as registered: a new h of the family is checked by every claim below.
const std::vector<std::string>& relu_functions() {
  static const auto names = activation_names(ActivationFamily::relu);
  return names;
}

// "a, b, c"
std::string listed(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The h with E h(σZ) = 0 (odd ones, identity), by their closed forms: no exponent to fit to their means.
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

// "At initialisation the elements of q and k are O(1)": q = xQ with σ_t = 1/√D, or qk-layernorm.
struct InitGrid {
  std::string name;
  double sigma_t;
  bool qk_layernorm;
};
constexpr Index kDim = 64;  // D = d
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

constexpr Index kSoftmaxMaxN = 256;

// Every h at α = 1/2 and 1, POLY's x³/√N and softmax, on both grids, each N cached on its own.
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
      AttentionMcConfig c{.ensemble = grid_ensemble(g, N), .activations = acts, .seed = ctx.seed,
                          .trials = ctx.trials_or(32, 8), .precision = Precision::float64, .study = "verify"};
      auto part = ctx.attention_norms(c, text("relu grid ", g.name, " N=", N));
      for (auto& r : part) r.extra.push_back({"grid", g.name});
      rows.insert(rows.end(), part.begin(), part.end());
    }
  return rows;
}

theory::EntryMoments exact_moments(const std::string& h, const InitGrid& g) {
  return theory::logit_moments(find_activation(h).fn, grid_ensemble(g, 1), g.qk_layernorm);
}

// Many points are compared at once: each is held to the Student-t quantile that keeps the chance of any
// false alarm among all of them at this rate (Bonferroni).
const Threshold kFamilyFalseAlarm{
    "family_false_alarm", 0.01,
    "not in the papers: the chance that an exact formula is flagged at any of the claim's points by noise "
    "alone; each point's |z| is held to the Student-t quantile 1 - rate/(2 x points) at trials - 1 degrees "
    "of freedom (Bonferroni)"};

double critical_z(const Thresholds& t, std::size_t points, std::int64_t trials) {
  const double per_point = t(kFamilyFalseAlarm) / (2.0 * double(std::max<std::size_t>(points, 1)));
  return student_t_quantile(1 - per_point, double(std::max<std::int64_t>(trials - 1, 1)));
}

// Scales a row's estimate about zero (mean, SE and interval alike).
void scale_estimate(Estimate& e, double f) {
  for (double* v : {&e.mean, &e.se, &e.ci_lo, &e.ci_hi}) *v *= f;
}
// Moves a row's estimate to `mean` with its SE and interval shrunk by `precision` (more trials).
void move_estimate(Estimate& e, double mean, double precision) {
  e.ci_lo = mean + (e.ci_lo - e.mean) / precision;
  e.ci_hi = mean + (e.ci_hi - e.mean) / precision;
  e.se /= precision;
  e.mean = mean;
}

// ---- exponents in N: identities ---------------------------------------------------------------

// The exact exponent of each quantity of ϕ = N^{-α}h(S) in N (header of theory/logit_moments.hpp).
double claimed_exponent(const std::string& quantity, double alpha) { return quantity == "mean_weight" ? -alpha : 1 - alpha; }

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
    s += text(" ", h, " ", lo == 0 && hi == 0 ? std::string("(E h = 0)") : sig(std::log(hi / lo) / (2 * std::log(1.01)), 3), ";");
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
             .title = text(claim.quantity == "frob"        ? "E||h(S)/N^alpha||_F, alpha = 1 and 1/2 (grid init)"
                           : claim.quantity == "row_sum"   ? "row sums sum_j h(S_ij)/N at initialisation (grid init)"
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
  const double z_max = critical_z(t, zero_points, trials);
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
          fig.series.push_back(
              {.label = text(h, "/N^", alpha), .x = c.x, .y = c.y, .lo = c.lo, .hi = c.hi, .fit = SeriesFit{.law = fit}});
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
  out.detail = text("fitted exponent in N of ", claim.quantity, " (claimed ", claim.quantity == "mean_weight" ? "-alpha" : "1 - alpha",
                    "):", fits);
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
          if (r.quantity == "frob" && r.activation == label && extra_value(r, "grid") == g.name && (first == 0 || r.N < first))
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

ClaimRules<SweepEvidence> exponent_rules(ExponentClaim claim) {
  return {.measure = [claim](const ClaimContext& ctx) { return SweepEvidence{claim, relu_sweep(ctx)}; },
          .judge = judge_exponents,
          .contradict = [](SweepEvidence& e) { tilt(e.rows, 0.5); },  // every exponent half a power too large
          .support = exact_curves};
}

// ---- constants: the claims that can fail ---------------------------------------------------------

struct ConstantPoint {
  ResultRow row;  // the Monte-Carlo estimate
  double exact;   // the exact expectation (NaN where there is none)
  double model;   // an approximation beside it: Gaussian logits, or softmax's N → ∞ limit
};

struct ConstantEvidence {
  std::string quantity;  // row_sum or frob2 (α = 1), or softmax's frob2 on Gaussian logits
  std::vector<ConstantPoint> points{};
  std::string limits{};  // the N → ∞ constants per h and grid
};

theory::EntryMoments gaussian_model(const std::string& h, const InitGrid& g) {
  const auto m = theory::gaussian_moments(find_activation(h).fn, std::sqrt(theory::logit_variance(grid_ensemble(g, 1), g.qk_layernorm)));
  return {m, m};
}

// Row sums (α = 1) and E‖ϕ‖_F² (α = 1) of every h on both grids beside their exact and Gaussian-logit values.
// α = 1/2 is the same sample times N^{1/2} (or N for frob2), so it adds no evidence.
ConstantEvidence constants(const std::vector<ResultRow>& rows, const std::string& quantity) {
  ConstantEvidence e{.quantity = quantity};
  for (const auto& g : init_grids())
    for (const auto& h : relu_functions()) {
      const auto exact = exact_moments(h, g), model = gaussian_model(h, g);
      const auto pick = [&](const theory::EntryMoments& m, double N) {
        const auto level = theory::weight_levels(m, N, 1.0);
        return quantity == "row_sum" ? level.row_sum : level.frob2;
      };
      const auto c = select_curve(rows, quantity, scaled(h, 1.0, g.qk_layernorm).label(), g.name);
      for (const auto& r : c.rows) e.points.push_back({r, pick(exact, double(r.N)), pick(model, double(r.N))});
      const double limit = quantity == "row_sum" ? theory::weight_limits(exact).row_sum : theory::weight_limits(exact).frob2;
      e.limits += text(" ", g.name, "/", h, " ", sig(limit), ";");
    }
  return e;
}

// "relu/N^1 grid init N=64", "softmax sd 2 N=64"
std::string point_name(const ResultRow& r) {
  const auto grid = extra_value(r, "grid"), sd = extra_value(r, "logit_sd");
  return text(r.activation, grid.empty() ? "" : " grid " + grid, sd.empty() ? "" : " sd " + sd, " N=", r.N);
}

struct PointJudgement {
  Verdict verdict = Verdict::holds;
  double z_max = 0, worst_z = 0;
  std::size_t outside = 0, unjudged = 0;
  std::string worst_point;
  std::vector<ResultRow> rows;
};

// Each point's z = (MC − exact)/SE against the Bonferroni quantile; `model` names the approximation's column.
PointJudgement judge_exact(const std::vector<ConstantPoint>& points, const Thresholds& t, const std::string& model) {
  PointJudgement j;
  std::int64_t trials = 0;
  for (const auto& p : points) trials = std::max<std::int64_t>(trials, p.row.trials);
  j.z_max = critical_z(t, points.size(), trials);
  for (const auto& p : points) {
    const auto& mc = p.row.value;
    j.rows.push_back(p.row);
    j.rows.back().extra.push_back({"exact", p.exact});
    j.rows.back().extra.push_back({model, p.model});
    if (!mc.finite() || !(mc.se > 0)) {  // non-finite trials, or no spread to measure z by: kept, not judged
      ++j.unjudged;
      j.verdict = worst(j.verdict, Verdict::inconclusive);
      continue;
    }
    const double z = (mc.mean - p.exact) / mc.se;
    j.rows.back().extra.push_back({"z_exact", sig(z, 3)});
    if (std::abs(z) > j.z_max) ++j.outside, j.verdict = worst(j.verdict, Verdict::inexact);
    if (std::abs(z) >= std::abs(j.worst_z)) j.worst_z = z, j.worst_point = point_name(p.row);
  }
  return j;
}

// The headline point: relu on the init grid at the largest N.
const ConstantPoint* headline(const std::vector<ConstantPoint>& points) {
  const ConstantPoint* best = nullptr;
  for (const auto& p : points)
    if (extra_value(p.row, "grid") == "init" && p.row.activation.rfind("relu/", 0) == 0 && (!best || p.row.N > best->row.N))
      best = &p;
  return best ? best : points.empty() ? nullptr : &points.back();
}

ClaimOutcome constant_outcome(const ConstantEvidence& e, const PointJudgement& j, const std::string& what) {
  ClaimOutcome out{.verdict = j.verdict, .evidence = j.rows};
  if (const auto* h = headline(e.points))
    out.measured = h->row.value.mean, out.claimed = h->exact, out.ci_lo = h->row.value.ci_lo, out.ci_hi = h->row.value.ci_hi;
  out.detail = text(what, " against the exact law of the logits at ", e.points.size(), " points: ",
                    e.points.size() - j.outside - j.unjudged, " within ", sig(j.z_max, 3), " SE (largest |z| ",
                    sig(std::abs(j.worst_z), 3), " at ", j.worst_point, ")",
                    j.unjudged ? text(", ", j.unjudged, " not judged (non-finite or no spread)") : "",
                    e.limits.empty() ? "" : " | N -> infinity constants:", e.limits);
  return out;
}

Figure constant_figure(const ConstantEvidence& e, const std::string& name, const std::string& title) {
  Figure fig{.name = name, .title = title, .xlabel = "N (sequence length, tokens)", .ylabel = "Monte-Carlo / exact, 95% CI",
             .logx = true};
  for (const auto& h : relu_functions()) {
    if (has_zero_mean(h) && e.quantity == "row_sum") continue;  // exact 0: its z is in the table
    Series s{.label = h};
    for (const auto& p : e.points)
      if (extra_value(p.row, "grid") == "init" && p.row.activation == scaled(h, 1.0, false).label()) {
        s.x.push_back(double(p.row.N));
        s.y.push_back(p.row.value.mean / p.exact);
        s.lo.push_back(p.row.value.ci_lo / p.exact);
        s.hi.push_back(p.row.value.ci_hi / p.exact);
      }
    fig.series.push_back(s);
  }
  return fig;
}

// A 5% error (5 SE off identity's zero) measured with 100 times the trials; or the exact value itself.
void contradict_points(std::vector<ConstantPoint>& points) {
  for (auto& p : points) move_estimate(p.row.value, p.exact == 0 ? 5 * p.row.value.se : 1.05 * p.exact, 10);
}
void support_points(std::vector<ConstantPoint>& points) {
  for (auto& p : points) move_estimate(p.row.value, p.exact, 1);
}

ClaimRules<ConstantEvidence> constant_rules(std::string quantity, std::string name, std::string what, std::string title) {
  return {.measure = [quantity](const ClaimContext& ctx) { return constants(relu_sweep(ctx), quantity); },
          .judge = [name, what, title](const ConstantEvidence& e, const Thresholds& t) {
            auto out = constant_outcome(e, judge_exact(e.points, t, "gaussian_logit"), what);
            out.figures.push_back(constant_figure(e, name, title));
            return out;
          },
          .contradict = [](ConstantEvidence& e) { contradict_points(e.points); },
          .support = [](ConstantEvidence& e) { support_points(e.points); }};
}

// ---- the Gaussian-logit model ----------------------------------------------------------------

// The model's values (Gaussian logits of the ensemble's variance) against the ensemble's Monte-Carlo:
// row sums and E‖ϕ‖_F² of every h, and softmax's E‖P‖_F², whose Gaussian-logit value is N·E‖softmax(z)‖².
ConstantEvidence measure_gaussian_model(const ClaimContext& ctx) {
  const auto rows = relu_sweep(ctx);
  auto e = constants(rows, "row_sum");
  const auto frob = constants(rows, "frob2");
  e.points.insert(e.points.end(), frob.points.begin(), frob.points.end());
  e.quantity = "model";
  e.limits.clear();
  for (const auto& g : init_grids()) {
    const double sigma = std::sqrt(theory::logit_variance(grid_ensemble(g, 1), g.qk_layernorm));
    for (const auto& r : select_curve(rows, "frob2", softmax_reference(g.qk_layernorm).label(), g.name).rows) {
      const double model = double(r.N) * theory::softmax_row_norm2(double(r.N), sigma);
      e.points.push_back({r, std::nan(""), model});
    }
  }
  return e;
}

// A model of an approximation: it holds within the closed-form tolerance (or the 95% CI); a zero model
// (identity's mean) is held to the Bonferroni quantile instead, where any relative error would be 100%.
// The model's error itself is reported against the exact law (noise-free), softmax's against Monte-Carlo.
ClaimOutcome judge_gaussian_model(const ConstantEvidence& e, const Thresholds& t) {
  ClaimOutcome out{.verdict = Verdict::holds};
  std::int64_t trials = 0;
  Index largest_n = 0;
  for (const auto& p : e.points) trials = std::max<std::int64_t>(trials, p.row.trials), largest_n = std::max(largest_n, p.row.N);
  const double z_max = critical_z(t, e.points.size(), trials);
  std::size_t missed = 0;
  double headline_error = 0;
  std::map<std::string, std::pair<double, std::string>> largest;  // quantity and grid -> (model error, function)
  for (const auto& p : e.points) {
    const auto& mc = p.row.value;
    const bool zero = p.model == 0;
    const auto v = zero ? (std::abs(mc.mean) > z_max * mc.se ? Verdict::inexact : Verdict::holds)
                        : closed_form_verdict(p.model, mc, t);
    missed += v != Verdict::holds;
    out.verdict = worst(out.verdict, v);
    out.evidence.push_back(p.row);
    out.evidence.back().extra.push_back({"gaussian_logit", p.model});
    if (!std::isnan(p.exact)) out.evidence.back().extra.push_back({"exact", p.exact});
    if (zero) continue;
    const double error = relative_error(p.model, std::isnan(p.exact) ? mc.mean : p.exact);
    out.evidence.back().extra.push_back({"rel_err_model", sig(error, 3)});
    if (p.row.N != largest_n) continue;
    const bool softmax = p.row.activation.rfind("softmax", 0) == 0;
    auto& l = largest[text(softmax ? "softmax " : "", p.row.quantity, " ", extra_value(p.row, "grid"))];
    if (std::abs(error) > std::abs(l.first)) l = {error, p.row.activation};
    if (std::abs(error) > std::abs(headline_error)) {
      headline_error = error;
      out.measured = mc.mean, out.claimed = p.model, out.ci_lo = mc.ci_lo, out.ci_hi = mc.ci_hi;
    }
  }
  std::string by_kind;
  for (const auto& [kind, l] : largest) by_kind += text(" ", kind, " ", sig(l.first, 3), " (", l.second, ");");
  out.detail = text("Gaussian logits of the ensemble's variance against its Monte-Carlo at ", e.points.size(),
                    " points: outside the closed-form tolerance and the 95% CI at ", missed, " | the model's relative error at N = ",
                    largest_n, " (against the exact law; softmax against Monte-Carlo), largest per quantity and grid:", by_kind);
  return out;
}

ClaimRules<ConstantEvidence> gaussian_model_rules() {
  return {.measure = measure_gaussian_model,
          .judge = judge_gaussian_model,
          .contradict = [](ConstantEvidence& e) {  // every measured value a quarter above the model
            for (auto& p : e.points) scale_estimate(p.row.value, 1.25);
          },
          .support = [](ConstantEvidence& e) {
            for (auto& p : e.points) move_estimate(p.row.value, p.model, 1);
          }};
}

// ---- softmax's Frobenius level for Gaussian logits -------------------------------------------------

const std::vector<double> kSoftmaxScales{0.5, 1.0, 2.0};

// ‖softmax(A)‖_F² of A ∈ R^{N×N} with i.i.d. N(0, σ²) entries, sampled directly.
ConstantEvidence measure_softmax_level(const ClaimContext& ctx) {
  ConstantEvidence e{.quantity = "softmax_frob2"};
  const std::uint32_t trials = ctx.trials_or(32, 8);
  for (const double sigma : kSoftmaxScales) {
    for (const Index N : sizes(ctx.quick)) {
      const auto key = text("softmax-gaussian-level|N=", N, "|sigma=", sigma, "|seed=", ctx.seed, "|trials=", trials);
      const auto rows = cached(ctx.cache, key, [&] {
        const auto stream = hash_words({hash_string("softmax-gaussian-level"), std::uint64_t(N)});
        const auto mc = run_trials(
            trials, 1,
            [&](std::uint32_t t, std::span<double> out) {
              MatrixD A(N, N);
              fill_gaussian(A, GaussianStream(ctx.seed, stream, t, StreamTag::Logits), sigma);
              out[0] = softmax_matrix_norms(A).frob2;
            },
            true);
        ResultRow r{.study = "verify", .quantity = "frob2", .activation = "softmax", .N = N, .trials = trials, .value = mc[0]};
        r.extra = {{"logits", "iid_gaussian"}, {"logit_sd", sigma}};
        return std::vector<ResultRow>{r};
      });
      const double row_level = theory::softmax_row_norm2(double(N), sigma);
      e.points.push_back({rows[0], double(N) * row_level, theory::softmax_row_norm2_limit_times_n(sigma)});
    }
    e.limits += text(" sd ", sigma, ": e^(sd^2) = ", sig(theory::softmax_row_norm2_limit_times_n(sigma)), ", N E||p||^2 at N = ",
                     sizes(ctx.quick).back(), " ", sig(e.points.back().exact), ";");
  }
  return e;
}

ClaimOutcome judge_softmax_level(const ConstantEvidence& e, const Thresholds& t) {
  const auto j = judge_exact(e.points, t, "limit_e_sd2");
  ClaimOutcome out{.verdict = j.verdict, .evidence = j.rows};
  for (const auto& p : e.points)  // headline: σ = 1 at the largest N
    if (extra_value(p.row, "logit_sd") == "1") out.measured = p.row.value.mean, out.claimed = p.exact, out.ci_lo = p.row.value.ci_lo,
                                               out.ci_hi = p.row.value.ci_hi;
  out.detail = text("E||softmax(A)||_F^2 against N E||softmax(a)||^2 (Laplace-transform quadrature) at ", e.points.size(),
                    " points: ", e.points.size() - j.outside - j.unjudged, " within ", sig(j.z_max, 3), " SE (largest |z| ",
                    sig(std::abs(j.worst_z), 3), " at ", j.worst_point, ")",
                    j.unjudged ? text(", ", j.unjudged, " not judged (non-finite or no spread)") : "", " | limits:", e.limits);
  Figure fig{.name = "relu_softmax_level", .title = "E||softmax(A)||_F^2 for A ~ N(0, sd^2): Monte-Carlo and closed form",
             .xlabel = "N (A is N x N)", .ylabel = "E||softmax(A)||_F^2", .logx = true, .logy = true};
  for (const double sigma : kSoftmaxScales) {
    // Each scale's Monte-Carlo points and closed-form line in one colour.
    const std::string colour = kSeriesColours[fig.series.size() / 2 % std::size(kSeriesColours)];
    Series mc{.label = text("Monte-Carlo, sd ", sigma), .connect = false, .colour = colour},
        exact{.label = text("closed form, sd ", sigma), .colour = colour};
    for (const auto& p : e.points)
      if (extra_value(p.row, "logit_sd") == text(sigma)) {
        mc.x.push_back(double(p.row.N));
        mc.y.push_back(p.row.value.mean);
        mc.lo.push_back(p.row.value.ci_lo);
        mc.hi.push_back(p.row.value.ci_hi);
        exact.x.push_back(double(p.row.N));
        exact.y.push_back(p.exact);
      }
    fig.series.push_back(mc);
    fig.series.push_back(exact);
  }
  out.figures.push_back(fig);
  return out;
}

}  // namespace

void register_relu_claims(ClaimRegistry& r) {
  const std::string grids =
      " Ensemble X ~ N(0,1), D = d = 64, at initialisation: grid `init` takes Q, K ~ N(0, 1/D) so that q, k are "
      "O(1); grid `qkln` applies qk-layernorm. h in {" + listed(relu_functions()) + "}.";
  const std::string law =
      " The exact law of one logit (theory/logit_moments.hpp): S = tau Z with tau^2 a product of three scaled "
      "chi-squares on grid init, S = sqrt(d) t with (1 + t)/2 ~ Beta((d-2)/2, (d-2)/2) on grid qkln.";
  r.add(make_claim<SweepEvidence>(
      {.id = "relu.mean_weight", .source = kRelu,
       .statement = "with alpha = 1, E_j[alpha_ij] = O(1/L) at initialisation; relu^2 is the exception",
       .method = "mean attention weight of h(S)/N^alpha over N, fitted exponent per h, alpha and grid (claimed "
                 "-alpha); identity's mean is held to 0." + grids,
       .identity = "the law of S_ij = q_i.k_j/sqrt(d) does not depend on N, so E_ij[phi_ij] = N^-alpha ((N-1) E h(S_12) "
                   "+ E h(S_11))/N: exponent -alpha exactly; its constant is relu.row_sum_constant's. The exception: "
                   "relu is 1-homogeneous, relu^2 2-homogeneous, so E h(cS) grows like c and c^2 in the logit scale"},
      exponent_rules({"mean_weight", {0.5, 1.0}, true})));
  r.add(make_claim<SweepEvidence>(
      {.id = "relu.row_sum", .source = kRelu, .statement = "softmax rows sum to 1; measure the row sums of L^{-alpha} h",
       .method = "mean row sum of h(S)/N over N, fitted exponent per h and grid (claimed 0 at alpha = 1)." + grids,
       .identity = "a row sum is N times the mean weight: exponent 1 - alpha exactly (0 at alpha = 1); its value, "
                   "E h(S) and not softmax's 1, is relu.row_sum_constant"},
      exponent_rules({"row_sum", {1.0}})));
  r.add(make_claim<ConstantEvidence>(
      {.id = "relu.row_sum_constant", .source = "RELU §3 (softmax's row sums are 1); constant derived",
       .statement = "at alpha = 1 the mean row sum of h(S)/N is ((N-1) E h(S_12) + E h(S_11))/N -> E h(S), not 1",
       .method = "Monte-Carlo row sums per h, grid and N against the closed forms (Gaussian-scale-mixture and Beta "
                 "laws, theory/logit_moments.hpp), z per point with a Bonferroni quantile." + grids + law},
      constant_rules("row_sum", "relu_row_sum_constant", "row sums",
                     "row sums of h(S)/N: Monte-Carlo / exact (grid init)")));
  r.add(make_claim<SweepEvidence>(
      {.id = "relu.frob", .source = kRelu,
       .statement = "||L^{-alpha} h(S)||_F grows like N^{1-alpha}; alpha = 1 (RELU) against alpha = 1/2 (POLY)",
       .method = "E||h(S)/N^alpha||_F over N for alpha = 1 and 1/2, fitted exponent per h and grid (claimed 1 - alpha), "
                 "plotted with x^3/sqrtN, softmax and softmax's closed-form level for N(0,1) logits." + grids,
       .identity = "E||phi||_F^2 = N^-2alpha (N(N-1) E h(S_12)^2 + N E h(S_11)^2) exactly, and ||phi||_F/N^(1-alpha) "
                   "lies between its positive limit E sqrt(E[h^2 | Q, K]) and sqrt(E h^2) (Jensen): exponent 1 - alpha; "
                   "the constant is relu.frob_constant"},
      exponent_rules({"frob", {1.0, 0.5}})));
  r.add(make_claim<ConstantEvidence>(
      {.id = "relu.frob_constant", .source = "RELU + POLY; constant derived",
       .statement = "at alpha = 1, E||h(S)/N||_F^2 = ((N-1) E h(S_12)^2 + E h(S_11)^2)/N -> E h(S)^2",
       .method = "Monte-Carlo E||phi||_F^2 per h, grid and N against the closed forms, z per point with a "
                 "Bonferroni quantile (alpha = 1/2 is the same sample times N)." + grids + law},
      constant_rules("frob2", "relu_frob_constant", "E||h(S)/N||_F^2",
                     "E||h(S)/N||_F^2: Monte-Carlo / exact (grid init)")));
  r.add(make_claim<ConstantEvidence>(
      {.id = "relu.gaussian_logit_model",
       .source = "RELU §3 ('the elements of q and k are O(1) and so <q_i,k_j>/sqrt(d) will also be O(1)'), read as Gaussian logits",
       .statement = "the logits at initialisation are N(0, Var S): row sums -> E h(Z), E||h(S)/N||_F^2 -> E h(Z)^2, "
                    "E||softmax(S)||_F^2 = N E||softmax(z)||^2 with z i.i.d. N(0, Var S)",
       .method = "the model's values against the ensemble's Monte-Carlo per h, grid and N (row sums, E||phi||_F^2, "
                 "softmax's E||P||_F^2); the exact law's values beside them." + grids + law},
      gaussian_model_rules()));
  r.add(make_claim<ConstantEvidence>(
      {.id = "relu.softmax_frob_level", .source = "derived: softmax's level, which POLY compares x^p/sqrt(N) with and RELU replaces",
       .statement = "for A in R^{NxN} with i.i.d. N(0, sd^2) entries, E||softmax(A)||_F^2 = N^2 int_0^inf t F(t) L(t)^(N-1) dt "
                    "-> e^(sd^2), L(t) = E e^(-t e^a), F(t) = E e^(2a - t e^a)",
       .method = "Monte-Carlo of ||softmax(A)||_F^2 on Gaussian A sampled directly, sd = 0.5, 1, 2, against the "
                 "quadrature of the Laplace-transform form; z per point with a Bonferroni quantile"},
      {.measure = measure_softmax_level,
       .judge = judge_softmax_level,
       .contradict = [](ConstantEvidence& e) { contradict_points(e.points); },
       .support = [](ConstantEvidence& e) { support_points(e.points); }}));
}

}  // namespace attnlab
