// Newton–Raphson pseudo-inverses as SOFT writes them and as its released code runs them: Prop 1 (the α rules) and
// Prop 2 (monotone traces), on the token ensembles' bottlenecks and matrices no kernel gives.
#include "inputs.hpp"

#include <attnlab/core/linalg.hpp>

namespace attnlab::soft_claims {
namespace {

// Matrices no Gaussian kernel gives, on which the released rules were never judged: a 30 x 30 symmetric positive
// definite matrix with negative entries and kappa_2 = 1e4 (Q diag(10^(-4 i/29)) Q^T, Q from a seeded Gaussian's QR),
// whose signed row sums can be far below sigma_1; and full-rank diagonal and symmetric circulant ones, whose
// ||A||_1 equals sigma_1.
std::vector<SoftMatrix> non_kernel_matrices(std::uint64_t seed) {
  constexpr Index n = 30;
  MatrixD G(n, n);
  fill_gaussian(G, GaussianStream(seed, hash_string("signed-spd"), 0, StreamTag::A), 1.0);
  const MatrixD Q = linalg::householder_q(G);
  VectorD lambda(n);
  for (Index i = 0; i < n; ++i) lambda(i) = std::pow(10.0, -4.0 * double(i) / double(n - 1));
  VectorD diagonal(16), first_row = VectorD::Zero(16);
  for (Index i = 0; i < 16; ++i) diagonal(i) = 1 - 0.05 * double(i);
  first_row(0) = 2, first_row(1) = first_row(15) = 0.5;  // eigenvalues 2 + cos(2 pi j/16) in [1, 3]
  MatrixD circulant(16, 16);
  for (Index i = 0; i < 16; ++i)
    for (Index j = 0; j < 16; ++j) circulant(i, j) = first_row((j - i + 16) % 16);
  return {{"signed_spd", n, Q * lambda.asDiagonal() * Q.transpose()},
          {"diagonal", 16, MatrixD(diagonal.asDiagonal())},
          {"circulant", 16, circulant}};
}

}  // namespace

// The structured extremes as bottlenecks: one token (A = [1]) and 16 tokens of each structured kind, all of them
// landmarks.
std::vector<SoftMatrix> newton_inputs(const ClaimContext& ctx, std::vector<Index> full_m, std::vector<Index> quick_m) {
  auto inputs = soft_pinv_inputs(ctx, ctx.sized(full_m, quick_m));
  if (ctx.soft.matrix.size() > 0 || has_tokens_file(ctx)) return inputs;
  const MatrixD one = structured_tokens("identical", 1, ctx.soft.d, ctx.seed);
  inputs.push_back({"one_token", 1, gaussian_kernel(one, one)});
  for (const auto& kind : kStructured) {
    const MatrixD T = structured_tokens(kind, 16, ctx.soft.d, ctx.seed);
    inputs.push_back({kind, 16, gaussian_kernel(T, T)});
  }
  for (auto& m : non_kernel_matrices(ctx.seed)) inputs.push_back(std::move(m));
  return inputs;
}

namespace {

const Threshold kTraceFloorFactor{
    "prop2_floor_factor", 10,
    "derived: rounding in A_k A A_k is about eps ||A_k|| ||A|| ~ eps/(sigma_min/sigma_1) relative, so below this many "
    "times that a trace is noise and cannot show monotonicity"};

const Threshold kTraceRise{
    "prop2_rise", 1e-12,
    "a rise of a traced norm counts when it exceeds this fraction of the trace's starting value: about 1e4 unit "
    "roundoffs, the allowance bound_rounding gives a ratio"};

// ---- Newton–Raphson: Prop 1, Prop 2 -------------------------------------------------------------

// One Newton–Schulz run with what double precision allows it: κ_r = σ₁/σ_r of the part of A the reference keeps.
struct NewtonCase {
  std::string input;
  Index m = 0, rank = 0;
  double alpha = 0, pinv_norm = 0, kappa = 1, sigma_ratio = 0;
  int iterations = 0;
  bool diverged = false;
  double sigma1 = 0;
  bool norm1_is_sigma1 =
      false;  // ||A||_1 = sigma_1 (diagonal, circulant, A = I, identical tokens): alpha sigma_1^2 = 2
  std::string status{};
  std::vector<PinvStep> trace{};
};

// `alpha_scale` 0: the method's own α; > 0: α = alpha_scale/σ₁².
NewtonCase newton_case(const SoftMatrix& in, PinvMethod method, int iterations, double alpha_scale) {
  const VectorD s = singular_values(in.A);
  const double cut = double(in.m) * kEps * s(0);
  NewtonCase c{.input = in.label, .m = in.m};
  c.rank = (s.array() > cut).count();
  c.kappa = s(0) / s(std::max<Index>(c.rank, 1) - 1);
  c.sigma_ratio = s(s.size() - 1) / s(0);
  c.sigma1 = s(0);
  c.norm1_is_sigma1 = in.A.cwiseAbs().colwise().sum().maxCoeff() <= s(0) * (1 + 1e-12);
  const auto r = pseudo_inverse(in.A, {.method = method,
                                       .max_iterations = iterations,
                                       .tolerance = 0,
                                       .alpha = alpha_scale > 0 ? alpha_scale / (s(0) * s(0)) : 0});
  c.alpha = r.alpha;
  c.iterations = r.iterations;
  c.diverged = r.diverged;
  c.status = r.status;
  c.pinv_norm = spectral_norm_svd(dense_pinv(in.A));
  c.trace = r.trace;
  return c;
}

struct NewtonEvidence {
  std::string reading;  // how α is chosen, for the detail
  std::vector<NewtonCase> cases{};
};

// Where double precision puts a converged iterate: relative error and residual about m eps κ_r.
double newton_floor(const NewtonCase& c, const Thresholds& t) {
  return t(kRoundingFactor) * double(c.m) * kEps * c.kappa;
}
// The first iterate within the floor of A+ in error and residual, or the trace's end. Only reaching is judged: on a
// rank-deficient A the error's block outside A's row and column spaces doubles each step, so once rounding seeds it
// the iterate leaves A+ again, and whether rounding seeds it depends on the CPU's summation order.
std::vector<PinvStep>::const_iterator first_at_pinv(const NewtonCase& c, const Thresholds& t) {
  const double floor = newton_floor(c, t);
  return std::find_if(c.trace.begin(), c.trace.end(),
                      [&](const PinvStep& s) { return s.error <= floor * c.pinv_norm && s.residual <= floor; });
}

// An input whose floor reaches 1 allows an error as large as A+ itself: A+ is not determined to working precision
// there, so nothing could fail it; such inputs are reported and left out of the count.
ClaimOutcome judge_newton(const NewtonEvidence& e, const Thresholds& t) {
  ClaimOutcome out;
  int reached = 0, resolvable = 0;
  std::string failures, unresolvable;
  for (const auto& c : e.cases) {
    const double floor = newton_floor(c, t);
    const auto reached_at = first_at_pinv(c, t);
    const bool ok = reached_at != c.trace.end();
    const PinvStep& step = ok ? *reached_at : c.trace.back();
    if (floor < 1) ++resolvable, reached += ok;
    const double best_error = std::min_element(c.trace.begin(), c.trace.end(), [](const auto& a, const auto& b) {
                                return a.error < b.error;
                              })->error;
    const std::string what = text(" ", c.input, " m=", c.m,
                                  ": ||A_k - A+||/||A+|| = ", sig(step.error / c.pinv_norm, 3), " (best ",
                                  sig(best_error / c.pinv_norm, 3), "), residual ", sig(step.residual, 3), ", floor ",
                                  sig(floor, 3), ", rank ", c.rank, "/", c.m, c.diverged ? ", diverged" : "",
                                  c.norm1_is_sigma1 && !ok && c.alpha * c.sigma1 * c.sigma1 > 1.99
                                      ? " (cause: ||A||_1 = sigma_1, so alpha sigma_1^2 = 2 and the top singular "
                                        "direction's error 1 - alpha sigma_1^2 = -1 never shrinks)"
                                      : "",
                                  ";");
    if (floor >= 1) unresolvable += what;
    else if (!ok) failures += what;
    out.evidence.push_back(
        soft_row("judged_relative_error", c.input, 0, c.m, step.error / c.pinv_norm,
                 {{"residual", step.residual},
                  {"best_relative_error", best_error / c.pinv_norm},
                  {"floor", floor},
                  {"alpha", c.alpha},
                  {"rank", c.rank},
                  {"kappa_kept", c.kappa},
                  {"sigma_min_over_sigma_1", c.sigma_ratio},
                  {"iterations", step.iteration},
                  {"pinv_status", ok ? text("reached A+ at iteration ", step.iteration) : c.status}}));
  }
  out.verdict = resolvable == 0 ? Verdict::inconclusive : reached == resolvable ? Verdict::holds : Verdict::violated;
  out.measured = reached;
  out.claimed = resolvable;
  out.detail = text(reached, " of ", resolvable, " bottlenecks reach A+ (", e.reading,
                    e.cases.empty() ? std::string() : text(", within ", e.cases.front().iterations, " iterations"),
                    ": some A_k has ||A_k - A+||_2 <= floor ||A+||_2 and ||A A_k A - A||/||A|| <= floor, floor = "
                    "soft_rounding_factor m eps kappa, kappa = sigma_1/sigma_r of the part the reference keeps)",
                    failures.empty() ? std::string(".") : text("; not reached:", failures),
                    unresolvable.empty()
                        ? std::string()
                        : text(" Not counted, A+ undetermined to working precision (floor >= 1):", unresolvable),
                    e.cases.empty() ? " No input in this class." : "");
  return out;
}

ClaimRules<NewtonEvidence> newton_rules(std::function<NewtonEvidence(const ClaimContext&)> measure) {
  return {.measure = std::move(measure),
          .judge = judge_newton,
          // One more well-conditioned input, left a tenth of A+ off (contradict) or reached (support; every other
          // input reached too).
          .contradict =
              [](NewtonEvidence& e) {
                e.cases.push_back({.input = "contradiction",
                                   .m = 2,
                                   .pinv_norm = 1,
                                   .trace = {{.iteration = 1, .residual = 0.1, .error = 0.1}}});
              },
          .support =
              [](NewtonEvidence& e) {
                for (auto& c : e.cases) c.trace = {{.iteration = 1}}, c.diverged = false;
                e.cases.push_back({.input = "support", .m = 2, .pinv_norm = 1, .trace = {{.iteration = 1}}});
              },
          // The last input's only iterate off A+ by x m eps kappa: within the floor below the factor's value x.
          .crossings = {{&kRoundingFactor, "the last input's error at its rounding floor", Verdict::holds,
                         Verdict::violated, [](NewtonEvidence& e, double x) {
                           auto& c = e.cases.back();
                           c.trace = {{.iteration = 1, .error = x * double(c.m) * kEps * c.kappa * c.pinv_norm}};
                         }}}};
}

NewtonEvidence measure_prop1(const ClaimContext& ctx, double alpha_scale, std::string reading) {
  NewtonEvidence e{std::move(reading)};
  for (const auto& in : newton_inputs(ctx, {16, 49, 100, 256}, {16, 49}))
    e.cases.push_back(newton_case(in, PinvMethod::newton, ctx.soft.max_iterations, alpha_scale));
  return e;
}

// The old check dropped bottlenecks whose rounding floor 10 eps/(sigma_min/sigma_1) reached the stopping tolerance.
NewtonEvidence measure_prop1_unresolved(const ClaimContext& ctx) {
  auto e = measure_prop1(ctx, 0,
                         "alpha = 2/||A||_1^2, bottlenecks with 10 eps/(sigma_min/sigma_1) >= --tolerance only");
  std::erase_if(e.cases, [&](const NewtonCase& c) { return 10 * kEps / c.sigma_ratio < ctx.soft.tolerance; });
  return e;
}

// Prop 2 on the same traces (α = 2/‖A‖₁², the paper's choice): the residual falls at every step until it reaches
// the trace floor and reaches it (decreases to 0); the error never rises by more than the rounding of A+.
struct MonotoneEvidence {
  std::vector<NewtonCase> cases;
  MatrixD limit_input;  // one bottleneck, run above the convergence limit 2/sigma_1^2
  PinvResult above_limit;
};

struct TraceJudgement {
  bool monotone = true, reaches_floor = true;
  std::string first_rise;
};

TraceJudgement judge_trace(const NewtonCase& c, const Thresholds& t) {
  TraceJudgement j;
  const auto& tr = c.trace;
  const double floor = t(kTraceFloorFactor) * kEps * c.kappa;
  const double error_noise = newton_floor(c, t) * c.pinv_norm;
  // Up to the first iterate at the floor: beyond it a rank-deficient A's error may grow again from rounding whose
  // seeding depends on the CPU (first_at_pinv).
  for (std::size_t k = 1; k < tr.size() && tr[k - 1].residual > floor; ++k) {
    const bool residual_rise = tr[k].residual - tr[k - 1].residual > t(kTraceRise) * tr[0].residual;
    const bool error_rise = tr[k].error - tr[k - 1].error > std::max(t(kTraceRise) * tr[0].error, error_noise);
    if ((residual_rise || error_rise) && j.monotone) {
      j.monotone = false;
      j.first_rise = text(c.input, " m=", c.m, ": ", residual_rise ? "residual" : "error", " rises at iteration ",
                          tr[k].iteration);
    }
  }
  j.reaches_floor = std::any_of(tr.begin(), tr.end(), [&](const PinvStep& s) { return s.residual <= floor; });
  return j;
}

ClaimOutcome judge_prop2(const MonotoneEvidence& e, const Thresholds& t) {
  ClaimOutcome out;
  int good = 0;
  std::string rises, stuck;
  for (const auto& c : e.cases) {
    const auto j = judge_trace(c, t);
    good += j.monotone && j.reaches_floor;
    if (!j.monotone) rises += " " + j.first_rise + ";";
    if (!j.reaches_floor) stuck += text(" ", c.input, " m=", c.m, " (residual ", sig(c.trace.back().residual, 3), ");");
    out.evidence.push_back(soft_row("monotone_to_floor", c.input, 0, c.m, j.monotone && j.reaches_floor,
                                    {{"monotone", j.monotone ? "true" : "false"},
                                     {"reaches_floor", j.reaches_floor ? "true" : "false"},
                                     {"first_rise", j.first_rise}}));
  }
  out.verdict = good == int(e.cases.size()) ? Verdict::holds : Verdict::violated;
  out.measured = good;
  out.claimed = double(e.cases.size());
  out.detail = text(good, " of ", e.cases.size(),
                    " traces (alpha = 2/||A||_1^2) fall monotonically in ||A A_k A - A||_2 (until "
                    "prop2_floor_factor eps kappa) and ||A_k - A+||_2 (beyond the rounding of A+) and reach the floor",
                    rises.empty() ? "" : "; rises:" + rises, stuck.empty() ? "" : "; never reach the floor:" + stuck,
                    " | with alpha = 1.05 x 2/sigma_1^2: ", e.above_limit.status);
  return out;
}

MonotoneEvidence measure_prop2(const ClaimContext& ctx) {
  MonotoneEvidence e;
  for (const auto& in : newton_inputs(ctx, {16, 49, 100, 256}, {16, 49}))
    e.cases.push_back(newton_case(in, PinvMethod::newton, ctx.soft.max_iterations, 0));
  // Above the limit α > 2/σ₁² the same iteration diverges: Prop 2's "sufficiently small" matters.
  const auto tokens = token_set(ctx, token_kinds(ctx).front(), ctx.soft.n, 0);
  e.limit_input = ctx.soft.matrix.size() > 0 ? ctx.soft.matrix
                                             : bottleneck_matrix(ctx, tokens, std::min<Index>(16, ctx.soft.n), 0);
  e.above_limit = pseudo_inverse(e.limit_input, {PinvMethod::newton, 60, 0, 1.05 * newton_alpha_limit(e.limit_input)});
  return e;
}

// A trace that falls by half each step to zero (support) or one that rises at step 1 (contradiction).
void set_traces(MonotoneEvidence& e, bool rising) {
  for (auto& c : e.cases) {
    for (std::size_t k = 0; k < c.trace.size(); ++k) {
      const double v = k + 1 == c.trace.size() ? 0.0 : std::ldexp(1.0, -int(k));
      c.trace[k].residual = rising && k == 1 ? 2.0 : v;
      c.trace[k].error = v * c.trace[0].error;
    }
    if (rising) break;
  }
}

// The last case's trace as (residual, error) steps.
void set_last_trace(MonotoneEvidence& e, const std::vector<std::pair<double, double>>& steps) {
  auto& tr = e.cases.back().trace;
  tr.clear();
  for (std::size_t k = 0; k < steps.size(); ++k)
    tr.push_back({.iteration = int(k), .residual = steps[k].first, .error = steps[k].second});
}

// Each threshold of judge_trace at its edge on the last trace: a residual rise of x (prop2_rise); a rise judged only
// when the step before it lies above the floor x eps kappa (prop2_floor_factor); an error rise of x m eps kappa ||A+||
// (soft_rounding_factor, the error's noise).
std::vector<Crossing<MonotoneEvidence>> trace_crossings() {
  return {{&kTraceRise, "a residual rise on the last trace", Verdict::holds, Verdict::violated,
           [](MonotoneEvidence& e, double x) {
             set_last_trace(e, {{1, 0}, {0.5, 0}, {0.5 + x, 0}, {0, 0}});
           }},
          {&kTraceFloorFactor, "the last trace's residual before a rise", Verdict::holds, Verdict::violated,
           [](MonotoneEvidence& e, double x) {
             const double y = x * kEps * e.cases.back().kappa;
             set_last_trace(e, {{1, 0}, {y, 0}, {y + 0.5, 0}, {0, 0}});
           }},
          {&kRoundingFactor, "an error rise on the last trace", Verdict::holds, Verdict::violated,
           [](MonotoneEvidence& e, double x) {
             const auto& c = e.cases.back();
             const double z = x * double(c.m) * kEps * c.kappa * c.pinv_norm;
             set_last_trace(e, {{1, 0}, {0.5, 0}, {0.25, z}, {0, z}});
           }}};
}

}  // namespace

void register_newton_claims(ClaimRegistry& r) {
  const std::string tokens =
      " Tokens of unit kernel bandwidth (entries N(0, d^-1/2), d = 64): i.i.d. Gaussian, 4 clusters (spread 0.1), "
      "rank 4, or a smooth 32 x 32 grid; bottlenecks pooled on grids, sampled at random otherwise; then the structured "
      "extremes as bottlenecks: one token, 16 identical tokens, 4 tokens repeated 4 times, tokens shrunk 1e-3 or "
      "grown 1e3, an outlier. --matrix replaces them all, as bottlenecks; --tokens-file, as tokens (landmarks at random).";
  const std::string newton = "Newton-Schulz (Alg. 2 iteration) for --max-iterations (200) steps without early stop, ";
  r.add(make_claim<NewtonEvidence>(
      {.id = "soft.prop1.alpha_rule",
       .source = "SOFT Prop 1, App. B",
       .statement =
           "alpha = 2/||A||_1^2 ensures A_k -> A+ (\"We set alpha = 2/||A||_1^2 to ensure it is small enough\")",
       .method =
           newton +
           "alpha = 2/||A||_1^2, on m in {16, 49, 100, 256}; judged on the first iterate within the floor of A+ in ||A_k - A+||_2 and the "
           "residual (a rank-deficient A's iterate can leave A+ again: the error's block outside A's row and column "
           "spaces doubles each step once rounding seeds it, and which CPU's rounding seeds it is not the claim's "
           "matter)." +
           tokens},
      newton_rules([](const ClaimContext& ctx) { return measure_prop1(ctx, 0, "alpha = 2/||A||_1^2"); })));
  r.add(make_claim<NewtonEvidence>(
      {.id = "soft.prop1.small_alpha",
       .source = "SOFT Prop 1",
       .statement = "when alpha is sufficiently small, A_k -> A+",
       .method = newton +
                 "alpha = 1/sigma_1^2 (half the limit 2/sigma_1^2 below which it converges in exact arithmetic), "
                 "same bottlenecks, same judgement"},
      newton_rules([](const ClaimContext& ctx) { return measure_prop1(ctx, 1, "alpha = 1/sigma_1^2"); })));
  r.add(make_claim<NewtonEvidence>(
      {.id = "soft.prop1.unresolved",
       .source = "SOFT Prop 1",
       .statement = "A_k -> A+ (alpha = 2/||A||_1^2) also on the bottlenecks a conditioning filter would drop",
       .method =
           "soft.prop1.alpha_rule restricted to the inputs whose rounding floor 10 eps/(sigma_min/sigma_1) reaches "
           "--tolerance: numerically singular and rank-deficient bottlenecks"},
      newton_rules(measure_prop1_unresolved)));
  r.add(make_claim<MonotoneEvidence>(
      {.id = "soft.prop2_monotone",
       .source = "SOFT Prop 2",
       .statement = "||A A_k A - A|| and ||A_k - A+|| decrease to 0 monotonously (alpha = 2/||A||_1^2)",
       .method =
           "the traces of soft.prop1.alpha_rule: every residual step falls until the floor prop2_floor_factor eps "
           "kappa, the trace reaches it, and no error step before it rises beyond the rounding of A+; plus one run above the "
           "convergence limit"},
      {.measure = measure_prop2,
       .judge = judge_prop2,
       .contradict = [](MonotoneEvidence& e) { set_traces(e, true); },
       .support = [](MonotoneEvidence& e) { set_traces(e, false); },
       .crossings = trace_crossings()}));
}

}  // namespace attnlab::soft_claims
