// The RELU claims on Gaussian logits: the model of the logits at initialisation as N(0, Var S) against the ensemble,
// and softmax's Frobenius level for Gaussian logits, the level RELU's h replaces.
#include "sweep.hpp"

namespace attnlab::relu_claims {
namespace {

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
  for (const auto& p : e.points)
    trials = std::max<std::int64_t>(trials, p.row.trials), largest_n = std::max(largest_n, p.row.N);
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
                    " points: outside the closed-form tolerance and the 95% CI at ", missed,
                    " | the model's relative error at N = ", largest_n,
                    " (against the exact law; softmax against Monte-Carlo), largest per quantity and grid:", by_kind);
  return out;
}

void support_model(ConstantEvidence& e) {
  for (auto& p : e.points) move_estimate(p.row.value, p.model, 1);
}

ClaimRules<ConstantEvidence> gaussian_model_rules() {
  return {.measure = measure_gaussian_model,
          .judge = judge_gaussian_model,
          .contradict =
              [](ConstantEvidence& e) {  // every measured value a quarter above the model
                for (auto& p : e.points) scale_estimate(p.row.value, 1.25);
              },
          .support = support_model,
          .crossings = {{&kClosedForm, "the last modelled point's Monte-Carlo mean, the model x off it", Verdict::holds,
                         Verdict::inexact,
                         [](ConstantEvidence& e, double x) {
                           support_model(e);
                           auto& p = *std::find_if(e.points.rbegin(), e.points.rend(),
                                                   [](const ConstantPoint& p) { return p.model != 0; });
                           move_estimate(p.row.value, p.model / (1 - x), 1e6);  // measured exactly: x decides
                         }},
                        {&kFamilyFalseAlarm, "the last zero-model point at the quantile of a false-alarm rate x",
                         Verdict::inexact, Verdict::holds, [](ConstantEvidence& e, double x) {
                           support_model(e);
                           std::int64_t trials = 0;
                           for (const auto& p : e.points) trials = std::max<std::int64_t>(trials, p.row.trials);
                           auto& p = *std::find_if(e.points.rbegin(), e.points.rend(),
                                                   [](const ConstantPoint& p) { return p.model == 0; });
                           move_estimate(p.row.value, z_at_false_alarm(x, e.points.size(), trials) * p.row.value.se, 1);
                         }}}};
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
        ResultRow r{
            .study = "verify", .quantity = "frob2", .activation = "softmax", .N = N, .trials = trials, .value = mc[0]};
        r.extra = {{"logits", "iid_gaussian"}, {"logit_sd", sigma}};
        return std::vector<ResultRow>{r};
      });
      const double row_level = theory::softmax_row_norm2(double(N), sigma);
      e.points.push_back({rows[0], double(N) * row_level, theory::softmax_row_norm2_limit_times_n(sigma)});
    }
    e.limits += text(" sd ", sigma, ": e^(sd^2) = ", sig(theory::softmax_row_norm2_limit_times_n(sigma)),
                     ", N E||p||^2 at N = ", sizes(ctx.quick).back(), " ", sig(e.points.back().exact), ";");
  }
  return e;
}

ClaimOutcome judge_softmax_level(const ConstantEvidence& e, const Thresholds& t) {
  const auto j = judge_exact(e.points, t, "limit_e_sd2");
  ClaimOutcome out{.verdict = j.verdict, .evidence = j.rows};
  for (const auto& p : e.points)  // headline: σ = 1 at the largest N
    if (extra_value(p.row, "logit_sd") == "1")
      out.measured = p.row.value.mean, out.claimed = p.exact, out.ci_lo = p.row.value.ci_lo,
      out.ci_hi = p.row.value.ci_hi;
  out.detail = text("E||softmax(A)||_F^2 against N E||softmax(a)||^2 (Laplace-transform quadrature) at ",
                    e.points.size(), " points: ", e.points.size() - j.outside - j.unjudged, " within ", sig(j.z_max, 3),
                    " SE (largest |z| ", sig(std::abs(j.worst_z), 3), " at ", j.worst_point, ")",
                    j.unjudged ? text(", ", j.unjudged, " not judged (non-finite or no spread)") : "",
                    " | limits:", e.limits);
  Figure fig{.name = "relu_softmax_level",
             .title = "E||softmax(A)||_F^2 for A ~ N(0, sd^2): Monte-Carlo and closed form",
             .xlabel = "N (A is N x N)",
             .ylabel = "E||softmax(A)||_F^2",
             .logx = true,
             .logy = true};
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

void register_gaussian_logit_claims(ClaimRegistry& r) {
  const std::string grids = grids_method(), law = law_method();
  r.add(make_claim<ConstantEvidence>(
      {.id = "relu.gaussian_logit_model",
       .source =
           "RELU §3 ('the elements of q and k are O(1) and so <q_i,k_j>/sqrt(d) will also be O(1)'), read as Gaussian logits",
       .statement = "the logits at initialisation are N(0, Var S): row sums -> E h(Z), E||h(S)/N||_F^2 -> E h(Z)^2, "
                    "E||softmax(S)||_F^2 = N E||softmax(z)||^2 with z i.i.d. N(0, Var S)",
       .method = "the model's values against the ensemble's Monte-Carlo per h, grid and N (row sums, E||phi||_F^2, "
                 "softmax's E||P||_F^2); the exact law's values beside them." +
                 grids + law},
      gaussian_model_rules()));
  r.add(make_claim<ConstantEvidence>(
      {.id = "relu.softmax_frob_level",
       .source = "derived: softmax's level, which POLY compares x^p/sqrt(N) with and RELU replaces",
       .statement =
           "for A in R^{NxN} with i.i.d. N(0, sd^2) entries, E||softmax(A)||_F^2 = N^2 int_0^inf t F(t) L(t)^(N-1) dt "
           "-> e^(sd^2), L(t) = E e^(-t e^a), F(t) = E e^(2a - t e^a)",
       .method = "Monte-Carlo of ||softmax(A)||_F^2 on Gaussian A sampled directly, sd = 0.5, 1, 2, against the "
                 "quadrature of the Laplace-transform form; z per point with a Bonferroni quantile"},
      {.measure = measure_softmax_level,
       .judge = judge_softmax_level,
       .contradict = [](ConstantEvidence& e) { contradict_points(e.points); },
       .support = [](ConstantEvidence& e) { support_points(e.points); },
       .crossings = {false_alarm_crossing()}}));
}

}  // namespace attnlab::relu_claims
