// SOFT eq 12, the gradient of the inverse, against central differences.
#include "inputs.hpp"

#include <attnlab/core/linalg.hpp>

namespace attnlab::soft_claims {
namespace {

const Threshold kFdTolerance{
    "eq12_fd_tolerance", 1e-6,
    "derived: central differences with step h = 1e-6 on well-conditioned X (X + mI) err by about h^2 ||d^3|| + "
    "eps ||f||/h ~ 1e-10 relative; a wrong sign or transpose errs by O(1)"};

// ---- eq 12: the gradient of the inverse ---------------------------------------------------------

struct GradientEvidence {
  std::vector<std::pair<Index, double>> errors{};  // m, largest |fd − analytic| / largest |analytic|
};

GradientEvidence measure_eq12(const ClaimContext& ctx) {
  GradientEvidence e;
  for (Index m : {3, 8, 20}) {
    MatrixD X(m, m), G(m, m);
    fill_gaussian(X, GaussianStream(ctx.seed, hash_words({hash_string("eq12"), std::uint64_t(m)}), 0, StreamTag::A),
                  1.0);
    fill_gaussian(G, GaussianStream(ctx.seed, hash_words({hash_string("eq12"), std::uint64_t(m)}), 0, StreamTag::B),
                  1.0);
    X += double(m) * MatrixD::Identity(m, m);  // well conditioned
    const MatrixD Y = linalg::inverse(X);
    const MatrixD analytic = -Y.transpose() * G * Y.transpose();
    double err = 0;
    for (Index a = 0; a < m; ++a)
      for (Index b = 0; b < m; ++b) {
        const double h = 1e-6;
        MatrixD Xp = X, Xm = X;
        Xp(a, b) += h;
        Xm(a, b) -= h;
        const double fd = (G.cwiseProduct(linalg::inverse(Xp)).sum() - G.cwiseProduct(linalg::inverse(Xm)).sum()) /
                          (2 * h);
        err = std::max(err, std::abs(fd - analytic(a, b)));
      }
    e.errors.push_back({m, err / analytic.cwiseAbs().maxCoeff()});
  }
  return e;
}

ClaimOutcome judge_eq12(const GradientEvidence& e, const Thresholds& t) {
  ClaimOutcome out;
  double worst = 0;
  for (const auto& [m, err] : e.errors) {
    worst = std::max(worst, err);
    out.evidence.push_back(soft_row("max_relative_fd_error", "eq12", m, m, err));
  }
  out.verdict = worst <= t(kFdTolerance) ? Verdict::holds : Verdict::violated;
  out.measured = worst;
  out.detail = text(
      "largest |finite difference - (-Y^T G Y^T)| relative to the gradient's largest entry, m = 3, 8, 20: ",
      sig(worst, 3), " (central differences, step 1e-6; holds at or below eq12_fd_tolerance)");
  return out;
}

}  // namespace

void register_eq12_claims(ClaimRegistry& r) {
  r.add(make_claim<GradientEvidence>(
      {.id = "soft.eq12",
       .source = "SOFT (12)",
       .statement = "grad_X L = -Y^T (grad_Y L) Y^T for Y = X^-1",
       .method = "central differences of <G, X^-1> against -X^-T G X^-T for m = 3, 8, 20",
       .identity = "differentiating XY = I gives dY = -Y dX Y, and <G, -Y dX Y> = <-Y^T G Y^T, dX>"},
      {.measure = measure_eq12,
       .judge = judge_eq12,
       .contradict =
           [](GradientEvidence& e) {
             e.errors.push_back({2, 1e-2});
           },
       .support =
           [](GradientEvidence& e) {
             for (auto& [m, err] : e.errors) err = 0;
           },
       .crossings = {{&kFdTolerance, "the largest m's error at x", Verdict::holds, Verdict::violated,
                      [](GradientEvidence& e, double x) {
                        for (auto& [m, err] : e.errors) err = 0;
                        e.errors.back().second = x;
                      }}}}));
}

}  // namespace attnlab::soft_claims
