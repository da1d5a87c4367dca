// Gradient bounds: softmax's (as written and as used), sinsoftmax's score ratio and cosmax's gradient (A.5).
#include "rows.hpp"

#include <attnlab/core/linalg.hpp>

namespace attnlab::periodic_claims {
namespace {

const Threshold kUnstableGradient{
    "periodic_unstable_gradient", 100.0,
    "paper §3.2 'Cosmax is gradient unstable' as a number: a diagonal gradient a hundred times softmax's largest "
    "(1/4) within the paper's range x in [-pi/2, pi/2]"};

// ---- bounds: softmax's gradient, sinsoftmax's ratio ---------------------------------------

struct BoundEvidence {
  std::string id, function, quantity;
  double bound;
  std::string reading;  // what the bound is read as, for the detail line
  std::vector<Case> cases;
};

// The largest value found against the bound, its rows and its worst input; the verdict is the caller's.
ClaimOutcome bound_outcome(const BoundEvidence& e) {
  const auto& worst = largest(e.cases);
  ClaimOutcome out{.measured = worst.value, .claimed = e.bound};
  out.detail = text(e.reading, ": largest found ", sig(worst.value), " against ", sig(e.bound), " (ratio ",
                    sig(worst.value / e.bound, 4), "; ", worst.input, "); ", definition_note(e.function));
  for (const auto& c : e.cases)
    out.evidence.push_back(evidence_row(e.quantity, e.function, c.logits.size(), c.value,
                                        {{"input", c.input}, {"logits", logits_line(c.logits)}}));
  save_worst(out, e.id, worst);
  return out;
}

ClaimOutcome judge_bound(const BoundEvidence& e, const Thresholds& t) {
  auto out = bound_outcome(e);
  out.verdict = bound_verdict(out.measured / e.bound, t);
  return out;
}

// The worst case moved to `ratio` times the bound, the others in proportion.
void rescale_worst(BoundEvidence& e, double ratio) {
  const double worst = largest(e.cases).value;
  for (auto& c : e.cases) c.value *= ratio * e.bound / worst;
}

ClaimRules<BoundEvidence> bound_rules(std::function<BoundEvidence(const ClaimContext&)> measure) {
  return {.measure = std::move(measure),
          .judge = judge_bound,
          .contradict = [](BoundEvidence& e) { rescale_worst(e, 1.25); },  // an input a quarter above the bound
          .support = [](BoundEvidence& e) { rescale_worst(e, 0.99); },     // tight, never above
          .crossings = bound_crossings<BoundEvidence>(
              [](BoundEvidence& e, double r) { e.cases.back().value = r * e.bound; }, rescale_worst)};
}

BoundEvidence measure_softmax_diagonal(const ClaimContext& ctx) {
  const auto a = definition("softmax");
  const auto f = [a](const VectorD& x) { return forward(a, x).J.diagonal().maxCoeff(); };
  return {.id = "periodic.softmax_max_grad",
          .function = "softmax",
          .quantity = "max_diagonal_gradient",
          .bound = 0.25,
          .reading = "max_j ds_j/dx_j = s_j(1 - s_j)",
          .cases = worst_cases(ctx, "periodic-maxgrad", f,
                               ctx.sized(std::vector<Index>{2, 3, 8, 64}, std::vector<Index>{2, 8}))};
}

// ||J||_2 of softmax's row Jacobian diag(s) - s s^T: what backpropagation multiplies the incoming gradient by.
BoundEvidence measure_softmax_operator_norm(const ClaimContext& ctx, std::string id, double bound,
                                            std::string reading) {
  const auto a = definition("softmax");
  const auto f = [a](const VectorD& x) {
    const MatrixD J = forward(a, x).J.dense();
    return linalg::symmetric_eigenvalues(J).cwiseAbs().maxCoeff();
  };
  return {.id = std::move(id),
          .function = "softmax",
          .quantity = "jacobian_operator_norm",
          .bound = bound,
          .reading = std::move(reading),
          .cases = worst_cases(ctx, "periodic-opnorm", f,
                               ctx.sized(std::vector<Index>{2, 3, 8, 16}, std::vector<Index>{2, 8}))};
}

BoundEvidence measure_sinsoftmax_ratio(const ClaimContext& ctx, const std::string& function) {
  const auto a = definition(function);
  const auto f = [a](const VectorD& x) {
    VectorD y(x.size());
    row_forward(a, x.data(), x.size(), y.data());
    return y.maxCoeff() / y.minCoeff();
  };
  // sin = +1 and -1 at x = pi/2 and -pi/2 (the paper's) or m = x/c at those points (demo.py's)
  const double c = logit_scale(a);
  const std::array<double, 2> anchors{c * kPi / 2, -c * kPi / 2};
  return {.id = is_released(function) ? "periodic.sinsoftmax_ratio.released" : "periodic.sinsoftmax_ratio",
          .function = function,
          .quantity = "max_score_ratio",
          .bound = std::exp(2.0),
          .reading = "max_j s_j / min_j s_j",
          .cases = worst_cases(ctx, "periodic-ratio", f,
                               ctx.sized(std::vector<Index>{2, 8, 64}, std::vector<Index>{2, 8}), anchors)};
}

// ---- cosmax's gradient (A.5) -------------------------------------------------------------

// Within the paper's assumption x in [-pi/2, pi/2] (cos x >= 0): with C = sum over the others of cos x_j,
// ds_i/dx_i = -C sin x_i/(C + cos x_i)^2, increasing in |x_i|, so its supremum over x_i is 1/C, at the ends.
struct CosmaxGrowthEvidence {
  std::vector<double> n{}, mean{}, se{}, analytic{};
  Index rows = 0;  // rows per n behind each mean
};

CosmaxGrowthEvidence measure_cosmax_growth(const ClaimContext& ctx) {
  const auto a = definition("cosmax");
  CosmaxGrowthEvidence e{.rows = ctx.sized(24, 6)};
  const Index rows = e.rows;
  const int grid = ctx.sized(2000, 400);
  for (Index n :
       ctx.sized(std::vector<Index>{8, 16, 32, 64, 128, 256, 512, 1024}, std::vector<Index>{8, 32, 128, 512})) {
    const MatrixD Z = gaussian_rows(ctx, "periodic-a5", rows, n, 1.0);
    std::vector<double> sup, inverse_c;
    for (Index i = 0; i < rows; ++i) {
      VectorD x(n);  // the others uniform on [-pi/2, pi/2]: x = pi (Phi(z) - 1/2)
      for (Index j = 0; j < n; ++j) x[j] = kPi * (0.5 * std::erfc(-Z(i, j) / std::sqrt(2.0)) - 0.5);
      double best = 0;
      for (int k = 0; k <= grid; ++k) {
        x[0] = -kPi / 2 + kPi * double(k) / grid;
        best = std::max(best, std::abs(forward(a, x).J.diagonal()[0]));
      }
      sup.push_back(best);
      inverse_c.push_back(1 / (x.tail(n - 1).array().cos().sum()));
    }
    const auto es = estimate(sup);
    e.n.push_back(double(n)), e.mean.push_back(es.mean), e.se.push_back(es.se);
    e.analytic.push_back(estimate(inverse_c).mean);
  }
  return e;
}

ClaimOutcome judge_cosmax_growth(const CosmaxGrowthEvidence& e, const Thresholds& t) {
  const auto fit = fit_power_law(e.n, e.mean, e.se);
  const double tol = t(kExponentTolerance);
  ClaimOutcome out{.verdict = fit.ci_lo > tol    ? Verdict::holds
                              : fit.ci_hi < -tol ? Verdict::violated
                                                 : Verdict::inconclusive,
                   .measured = fit.exponent,
                   .ci_lo = fit.ci_lo,
                   .ci_hi = fit.ci_hi};
  const double t95 = student_t_quantile(0.975, double(e.rows - 1));
  Series grid{.label = "grid search", .x = e.n, .y = e.mean, .fit = SeriesFit{.law = fit}};
  for (std::size_t i = 0; i < e.n.size(); ++i) {
    grid.lo.push_back(e.mean[i] - t95 * e.se[i]), grid.hi.push_back(e.mean[i] + t95 * e.se[i]);
    auto row = evidence_row("sup_diagonal_gradient", "cosmax", Index(e.n[i]), e.mean[i],
                            {{"analytic_mean_1_over_C", e.analytic[i]}});
    row.value = {.count = e.rows, .mean = e.mean[i], .se = e.se[i], .ci_lo = grid.lo[i], .ci_hi = grid.hi[i]};
    out.evidence.push_back(row);
  }
  out.detail = text(
      "cosmax (the paper's, layer file's and demo.py's definition alike), others uniform on the paper's "
      "[-pi/2, pi/2]: the extreme of ds_i/dx_i over x_i goes like n^",
      sig(fit.exponent, 3), " [", sig(fit.ci_lo, 3), ", ", sig(fit.ci_hi, 3),
      "] (analytic: 1/sum_(j != i) "
      "cos x_j ~ pi/(2(n - 1))); the paper (A.5, formula lost) says the extreme grows with n: holds "
      "when the exponent's CI lies above ",
      tol, ", violated below ", -tol);
  out.figures.push_back({.name = "periodic_a5_cosmax",
                         .title = "cosmax: sup over x_i of |ds_i/dx_i|, others uniform on [-pi/2, pi/2]",
                         .xlabel = "n (row length)",
                         .ylabel = "mean over rows, 95% CI",
                         .logx = true,
                         .logy = true,
                         .series = {grid, {.label = "1/C (analytic)", .x = e.n, .y = e.analytic}}});
  return out;
}

void set_growth(CosmaxGrowthEvidence& e, double exponent) {
  for (std::size_t i = 0; i < e.n.size(); ++i) e.mean[i] = std::pow(e.n[i], exponent), e.se[i] = 1e-3 * e.mean[i];
}

// The means tilted by n^shift: the fit's exponent and interval move by shift, the interval's width stays.
void tilt(CosmaxGrowthEvidence& e, double shift) {
  for (std::size_t i = 0; i < e.n.size(); ++i) {
    const double f = std::pow(e.n[i], shift);
    e.mean[i] *= f, e.se[i] *= f;
  }
}

// judge_cosmax_growth's two edges: the interval's lower end at x (grows beyond), its upper end at -x (falls beyond).
std::vector<Crossing<CosmaxGrowthEvidence>> cosmax_growth_crossings() {
  using E = CosmaxGrowthEvidence;
  const auto fit = [](const E& e) { return fit_power_law(e.n, e.mean, e.se); };
  return {{&kExponentTolerance, "the growth's interval above 0", Verdict::inconclusive, Verdict::holds,
           [fit](E& e, double x) { tilt(e, x - fit(e).ci_lo); }},
          {&kExponentTolerance, "the growth's interval below 0", Verdict::inconclusive, Verdict::violated,
           [fit](E& e, double x) { tilt(e, -x - fit(e).ci_hi); }}};
}

// "Cosmax is gradient unstable": the largest |ds_j/dx_j| over rows inside the paper's range.
BoundEvidence measure_cosmax_unstable(const ClaimContext& ctx) {
  const auto a = definition("cosmax");
  const auto f = [a](const VectorD& x) {
    if (x.cwiseAbs().maxCoeff() > kPi / 2) return -HUGE_VAL;  // outside the paper's range
    return forward(a, x).J.diagonal().cwiseAbs().maxCoeff();
  };
  // Rows mapped into [-pi/2, pi/2] by (pi/2) tanh: the search runs unconstrained.
  const auto inside = [](const VectorD& y) { return VectorD((kPi / 2) * y.array().tanh()); };
  std::vector<Case> cases;
  if (!ctx.logits.empty()) {
    cases = worst_cases(ctx, "periodic-a5", f, {});
  } else {
    for (auto c : worst_cases(
             ctx, "periodic-a5", [&](const VectorD& y) { return f(inside(y)); },
             ctx.sized(std::vector<Index>{8, 64}, std::vector<Index>{8}))) {
      c.logits = inside(c.logits);
      cases.push_back(std::move(c));
    }
  }
  return {.id = "periodic.a5_cosmax_grad.as_used",
          .function = "cosmax",
          .quantity = "max_abs_diagonal_gradient",
          .bound = 0.25,
          .reading = "max_j |ds_j/dx_j| of cosmax with x in [-pi/2, pi/2] against softmax's 1/4",
          .cases = std::move(cases)};
}

// Instability is not a bound: the bound's thresholds are not read.
ClaimOutcome judge_cosmax_unstable(const BoundEvidence& e, const Thresholds& t) {
  auto out = bound_outcome(e);
  const double limit = t(kUnstableGradient) * e.bound;
  // -inf: no row inside the paper's range (a --logits-file row outside it is not judged)
  out.verdict = !std::isfinite(out.measured) ? Verdict::inconclusive
                : out.measured > limit       ? Verdict::holds
                                             : Verdict::violated;
  out.claimed = std::numeric_limits<double>::quiet_NaN();  // the paper states no number
  out.detail += text("; 'gradient unstable' holds above ", limit, " (unbounded as the others' cosines sum to 0)");
  return out;
}

}  // namespace

void register_softmax_gradient_claims(ClaimRegistry& r) {
  r.add(make_claim<BoundEvidence>(
      {.id = "periodic.softmax_max_grad",
       .source = "PERIODIC §3.1",
       .statement = "max ds_i/dx_i of softmax is 0.25",
       .method =
           "largest diagonal Jacobian entry over Gaussian rows at scales 0.1..30 and an adversarial search at n = "
           "2..64 (bound rule; tight when the worst case reaches 0.9 of it)",
       .identity =
           "ds_j/dx_j = s_j(1 - s_j) <= 1/4 for s_j in [0, 1] (equality at s_j = 1/2): a proof, so the search can "
           "show the bound tight or loose, never exceeded",
       .judges_logits = true},
      bound_rules(measure_softmax_diagonal)));
  r.add(make_claim<BoundEvidence>(
      {.id = "periodic.softmax_max_grad.as_used",
       .source = "PERIODIC §3.1",
       .statement = "'the max gradient of Softmax is 0.25, so it will not cause gradient explosions', read as: a "
                    "gradient backpropagated through softmax shrinks by 0.25 at least (||ds/dx||_2 <= 0.25)",
       .method = "largest eigenvalue of the row Jacobian diag(s) - ss^T over Gaussian rows and an adversarial search "
                 "(bound rule)",
       .judges_logits = true},
      bound_rules([](const ClaimContext& ctx) {
        return measure_softmax_operator_norm(ctx, "periodic.softmax_max_grad.as_used", 0.25,
                                             "||ds/dx||_2 (the factor on a backpropagated gradient)");
      })));
  r.add(make_claim<BoundEvidence>(
      {.id = "periodic.softmax_max_grad.no_explosion",
       .source = "PERIODIC §3.1",
       .statement = "'so it will not cause gradient explosions', read as what the sentence needs: a gradient "
                    "backpropagated through softmax does not grow (||ds/dx||_2 <= 1)",
       .method = "as periodic.softmax_max_grad.as_used against 1 (bound rule)",
       .identity =
           "J = diag(s) - ss^T is symmetric positive semi-definite with J <= diag(s), so ||J||_2 <= max_j s_j <= 1: "
           "a proof, so the search can show the bound tight or loose, never exceeded",
       .judges_logits = true},
      bound_rules([](const ClaimContext& ctx) {
        return measure_softmax_operator_norm(
            ctx, "periodic.softmax_max_grad.no_explosion", 1.0,
            "||ds/dx||_2 against 1, the factor above which a backpropagated gradient grows");
      })));
}

void register_sinsoftmax_ratio_claims(ClaimRegistry& r) {
  r.add(make_claim<BoundEvidence>(
      {.id = "periodic.sinsoftmax_ratio",
       .source = "PERIODIC §3.4",
       .statement = "sinsoftmax: the largest score is at most e^2 times the smallest",
       .method = "largest max/min score ratio over Gaussian rows and an adversarial search (bound rule), the paper's "
                 "softmax(sin x)",
       .identity = "s_i/s_j = e^(sin x_i - sin x_j) <= e^(1 - (-1)) = e^2: a proof, so the search can show the bound "
                   "tight or loose, never exceeded",
       .judges_logits = true},
      bound_rules([](const ClaimContext& ctx) { return measure_sinsoftmax_ratio(ctx, "sinsoftmax"); })));
  r.add(make_claim<BoundEvidence>(
      {.id = "periodic.sinsoftmax_ratio.released",
       .source = "PERIODIC §3.4; demo.py",
       .statement = "the same for demo.py's softmax(sin(m)/sqrt(d)) (d = 64)",
       .method = "as periodic.sinsoftmax_ratio; the tight constant is e^(2/sqrt(d))",
       .identity =
           "s_i/s_j = e^((sin m_i - sin m_j)/sqrt(d)) <= e^(2/sqrt(d)) <= e^2: a proof; the search shows how loose",
       .judges_logits = true},
      bound_rules([](const ClaimContext& ctx) { return measure_sinsoftmax_ratio(ctx, "sinsoftmax-released"); })));
}

void register_cosmax_claims(ClaimRegistry& r) {
  r.add(make_claim<CosmaxGrowthEvidence>(
      {.id = "periodic.a5_cosmax_grad",
       .source = "PERIODIC §3.2, A.5",
       .statement =
           "as n increases, the extreme of cosmax's ds_i/dx_i grows (the text lost its variables: 'As [] "
           "increases, Extreme approaches []'; read here as n, the row length; read as the others' cosine sum C, "
           "the extreme is 1/C, unbounded as C falls to 0: periodic.a5_cosmax_grad.as_used judges that reading)",
       .method = "sup over x_i in [-pi/2, pi/2] of |ds_i/dx_i| on a grid, the others uniform on the paper's [-pi/2, "
                 "pi/2], mean over rows, log-log fit over n = 8..1024"},
      {.measure = measure_cosmax_growth,
       .judge = judge_cosmax_growth,
       .contradict = [](CosmaxGrowthEvidence& e) { set_growth(e, -1); },
       .support = [](CosmaxGrowthEvidence& e) { set_growth(e, 1); },
       .crossings = cosmax_growth_crossings()}));
  r.add(make_claim<BoundEvidence>(
      {.id = "periodic.a5_cosmax_grad.as_used",
       .source = "PERIODIC §3.2, A.5",
       .statement = "'Cosmax is gradient unstable': its diagonal gradient is unbounded within the paper's range",
       .method = "largest |ds_j/dx_j| over Gaussian rows and an adversarial search mapped into [-pi/2, pi/2]",
       .judges_logits = true},
      {.measure = measure_cosmax_unstable,
       .judge = judge_cosmax_unstable,
       .contradict = [](BoundEvidence& e) { rescale_worst(e, 1.0); },
       .support = [](BoundEvidence& e) { rescale_worst(e, 1e6); },
       .crossings = {{&kUnstableGradient, "the last case at x times the bound, the others at the bound",
                      Verdict::violated, Verdict::holds, [](BoundEvidence& e, double x) {
                        for (auto& c : e.cases) c.value = e.bound;
                        e.cases.back().value = x * e.bound;
                      }}}}));
}

}  // namespace attnlab::periodic_claims
