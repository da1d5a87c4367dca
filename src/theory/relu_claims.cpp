// The RELU claims that need no training: attention weights and row sums of L^{-α}h at
// initialisation, and the growth of ‖L^{-α}h(S)‖_F in N (α = 1 for RELU, α = 1/2 as POLY scales).
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/theory/claims.hpp>
#include <attnlab/theory/verdicts.hpp>

#include <algorithm>
#include <cmath>

namespace attnlab {
namespace {

constexpr const char* kRelu = "RELU";
const std::vector<std::string> kFunctions{"relu", "relu2", "gelu", "softplus", "identity", "relu6", "sigmoid"};

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

ActivationSpec scaled(const std::string& h, double alpha, bool qkln) {
  auto spec = ActivationSpec::parse(qkln ? h + "+qkln" : h);
  spec.alpha = alpha;
  return spec;
}

ActivationSpec poly_reference(bool qkln) {
  return {"poly", 3, KScale::parse("sqrtN"), Convention::inside, 1.0, {.qk_layernorm = qkln}};
}

// Every h at α = 1/2 and 1, and POLY's x³/√N, on both grids, each N cached on its own.
std::vector<ResultRow> relu_sweep(const ClaimContext& ctx) {
  std::vector<ResultRow> rows;
  for (const auto& g : init_grids())
    for (Index N : sizes(ctx.quick)) {
      std::vector<ActivationSpec> acts;
      for (const auto& h : kFunctions)
        for (double alpha : {0.5, 1.0}) acts.push_back(scaled(h, alpha, g.qk_layernorm));
      acts.push_back(poly_reference(g.qk_layernorm));
      AttentionMcConfig c{{N, kDim, kDim, 1.0, g.sigma_t}, acts, ctx.seed, ctx.trials_or(32, 8), Precision::float64,
                          "verify"};
      auto part = cached(ctx.cache, cache_key(c), [&] {
        return run_attention_norms(c, ctx.progress_for(text("relu grid ", g.name, " N=", N)));
      });
      for (auto& r : part) r.extra.push_back({"grid", g.name});
      rows.insert(rows.end(), part.begin(), part.end());
    }
  return rows;
}

// Fits quantity ~ N^a for every h on both grids against `claimed`; curves whose mean is zero within
// their CI at some N (identity: E[S] = 0) cannot be fitted on a log scale and are reported as such.
struct FitAll {
  Verdict verdict = Verdict::holds;
  std::string detail;
  PowerLawFit relu_init;  // relu on the init grid: the headline number
};

FitAll fit_every_function(const std::vector<ResultRow>& rows, const std::string& quantity,
                          double alpha, double claimed, ClaimOutcome& out, Figure* fig) {
  FitAll all;
  for (const auto& g : init_grids())
    for (const auto& h : kFunctions) {
      const auto c = select_curve(rows, quantity, scaled(h, alpha, g.qk_layernorm).label());
      out.evidence.insert(out.evidence.end(), c.rows.begin(), c.rows.end());
      const bool signless = std::any_of(c.lo.begin(), c.lo.end(), [](double lo) { return lo <= 0; });
      if (c.nonfinite > 0 || signless) {
        all.detail += text(" ", g.name, "/", h, ": ", c.nonfinite > 0 ? "non-finite trials" : "zero within CI", ";");
        if (c.nonfinite > 0) all.verdict = worst(all.verdict, Verdict::inconclusive);
        continue;
      }
      const auto fit = fit_power_law(c.x, c.y, c.se);
      all.verdict = worst(all.verdict, growth_verdict(fit, claimed, Thresholds{}));
      all.detail += text(" ", g.name, "/", h, " ", sig(fit.exponent, 3), " [", sig(fit.ci_lo, 3), ", ",
                         sig(fit.ci_hi, 3), "];");
      if (g.name == "init" && h == "relu") all.relu_init = fit;
      if (fig && g.name == "init" && (h == "relu" || h == "relu2" || h == "gelu"))
        fig->series.push_back({text(h, "/N^", alpha), c.x, c.y, c.lo, c.hi, true});
    }
  return all;
}

void headline(ClaimOutcome& out, const FitAll& all, double claimed) {
  out.verdict = all.verdict;
  out.claimed = claimed;
  out.measured = all.relu_init.exponent;
  out.ci_lo = all.relu_init.ci_lo;
  out.ci_hi = all.relu_init.ci_hi;
}

ClaimOutcome check_mean_weight(const ClaimContext& ctx) {
  const auto rows = relu_sweep(ctx);
  ClaimOutcome out;
  Figure fig{"relu_mean_weight", "mean attention weight E_ij[h(S_ij)/N] at initialisation (grid init)", "N",
             "mean weight with 95% CI", true, true, {}, {}};
  const auto all = fit_every_function(rows, "mean_weight", 1.0, -1.0, out, &fig);
  headline(out, all, -1.0);
  // The footnote's exception: h(c·Z) grows like c for relu (O(1) in, O(1) out) but like c² for relu².
  std::string homogeneity;
  for (const auto& h : kFunctions) {
    std::vector<double> c{1, 2, 4, 8}, y, se;
    for (double scale : c) {
      double sum = 0, sum2 = 0;
      const Index n = ctx.quick ? 4096 : 65536;
      const GaussianStream z(ctx.seed, hash_string("relu-homogeneity"), 0, StreamTag::Logits);
      const auto act = ActivationSpec::parse(h).resolve(1, 1);
      for (Index i = 0; i < n; ++i) {
        double v, dv;
        evaluate(std::get<ElementwiseActivation>(act.fn).fn, 1, scale * z.normal(std::uint64_t(i)), v, dv);
        sum += v, sum2 += v * v;
      }
      const double mean = sum / double(n);
      y.push_back(mean);
      se.push_back(std::sqrt(std::max(0.0, sum2 / double(n) - mean * mean) / double(n)));
    }
    if (y.front() <= 0) {
      homogeneity += text(" ", h, ": mean 0;");
      continue;
    }
    homogeneity += text(" ", h, " ", sig(fit_power_law(c, y, se).exponent, 3), ";");
  }
  out.detail = text("fitted exponent of the mean weight in N with alpha = 1 (claimed -1):", all.detail,
                    " | exponent of E h(cZ) in the logit scale c = 1..8 (relu2 is the exception):", homogeneity);
  out.figures.push_back(fig);
  return out;
}

ClaimOutcome check_row_sum(const ClaimContext& ctx) {
  const auto rows = relu_sweep(ctx);
  ClaimOutcome out;
  Figure fig{"relu_row_sum", "row sums sum_j h(S_ij)/N at initialisation (grid init); softmax's are 1", "N",
             "mean row sum with 95% CI", true, false, {}, {}};
  const auto all = fit_every_function(rows, "row_sum", 1.0, 0.0, out, &fig);
  headline(out, all, 0.0);
  std::string sums;
  const Index largest = sizes(ctx.quick).back();
  for (const auto& h : kFunctions) {
    const auto c = select_curve(rows, "row_sum", scaled(h, 1.0, false).label(), "init");
    const auto c2 = select_curve(rows, "row_sum2", scaled(h, 1.0, false).label(), "init");
    if (c.y.empty() || c2.y.empty()) continue;
    const double spread = std::sqrt(std::max(0.0, c2.y.back() - c.y.back() * c.y.back()));
    sums += text(" ", h, " ", sig(c.y.back(), 3), " (sd over rows ", sig(spread, 2), ");");
  }
  out.detail = text("row sums are O(1) in N (fitted exponent, claimed 0):", all.detail, " | row sums at N = ", largest,
                    ", grid init (softmax: exactly 1):", sums);
  out.figures.push_back(fig);
  return out;
}

ClaimOutcome check_frob(const ClaimContext& ctx) {
  const auto rows = relu_sweep(ctx);
  ClaimOutcome out;
  Figure fig{"relu_frob", "E||h(S)/N^alpha||_F: RELU's alpha = 1 against POLY's 1/sqrt(N) (grid init)", "N",
             "mean with 95% CI", true, true, {}, {}};
  const auto one = fit_every_function(rows, "frob", 1.0, 0.0, out, &fig);
  const auto half = fit_every_function(rows, "frob", 0.5, 0.5, out, &fig);
  const auto poly = select_curve(rows, "frob", poly_reference(false).label(), "init");
  fig.series.push_back({"x^3/sqrtN (POLY)", poly.x, poly.y, poly.lo, poly.hi, true});
  out.evidence.insert(out.evidence.end(), poly.rows.begin(), poly.rows.end());
  headline(out, one, 0.0);
  out.verdict = worst(one.verdict, half.verdict);
  out.detail = text("fitted exponent of E||.||_F in N; alpha = 1 (claimed 0):", one.detail,
                    " | alpha = 1/2 (claimed 0.5):", half.detail);
  out.figures.push_back(fig);
  return out;
}

}  // namespace

void register_relu_claims(ClaimRegistry& r) {
  const std::string grids =
      " Ensemble X ~ N(0,1), D = d = 64, at initialisation: grid `init` takes Q, K ~ N(0, 1/D) so that q, k are "
      "O(1); grid `qkln` applies qk-layernorm. h ∈ {relu, relu2, gelu, softplus, identity, relu6, sigmoid}.";
  r.add(unconverted_claim({.id = "relu.mean_weight", .source = kRelu, .statement = "with alpha = 1, E_j[alpha_ij] = O(1/L) at initialisation; relu^2 is the exception", .method = "mean attention weight of h(S)/N over N, fitted exponent per h (claimed -1); the exception is read off the "
         "exponent of E h(cZ) in the logit scale c." + grids}, check_mean_weight));
  r.add(unconverted_claim({.id = "relu.row_sum", .source = kRelu, .statement = "softmax rows sum to 1; measure the row sums of L^{-alpha} h", .method = "mean row sum of h(S)/N over N (claimed O(1): exponent 0) and its value and spread at the largest N." + grids}, check_row_sum));
  r.add(unconverted_claim({.id = "relu.frob", .source = kRelu, .statement = "||L^{-alpha} h(S)||_F grows like N^{1-alpha}; alpha = 1 (RELU) against alpha = 1/2 (POLY)", .method = "E||h(S)/N^alpha||_F over N for alpha = 1 and 1/2, fitted exponent per h and grid (claimed 1 - alpha), "
         "plotted with x^3/sqrtN." + grids}, check_frob));
}

}  // namespace attnlab
