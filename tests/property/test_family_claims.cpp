// The RELU and PERIODIC claim checks against facts derived by hand, in quick mode: a check that
// regressed (a wrong Jacobian, a broken threshold) moves these numbers.
#include <attnlab/theory/claims.hpp>

#include "support.hpp"

#include <cmath>

using namespace attnlab;

namespace {
ClaimOutcome check(const std::string& id) {
  const ClaimContext ctx{test::seed(), true, 0, nullptr, {}};
  return claim_registry().find(id).check(ctx);
}
}  // namespace

// max_s s(1 − s) = 1/4 at s = 1/2, which two equal logits among very negative ones reach.
TEST(PeriodicClaims, SoftmaxDiagonalGradientPeaksAtOneQuarter) {
  const auto out = check("periodic.softmax_max_grad");
  EXPECT_LE(out.measured, 0.25 + 1e-12);
  EXPECT_GE(out.measured, 0.25 - 1e-6);
  EXPECT_EQ(out.verdict, Verdict::holds);
}

// exp(sin a − sin b) ≤ e², with equality at sin a = 1, sin b = −1.
TEST(PeriodicClaims, SinsoftmaxRatioReachesButNeverExceedsESquared) {
  const auto out = check("periodic.sinsoftmax_ratio");
  EXPECT_LE(out.measured, std::exp(2.0) * (1 + 1e-12));
  EXPECT_GE(out.measured, std::exp(2.0) * 0.99);
}

// 1 + sin 10x ∈ [0, 2] and Σ ≈ n: sup s_1 ≤ 2/(n − 1 + Σ others) falls like 1/n; softmax's reaches 1.
TEST(PeriodicClaims, SinmaxConstantInfluenceFallsLikeOneOverN) {
  const auto out = check("periodic.sinmax_submerged");
  EXPECT_NEAR(out.measured, -1.0, 0.1);
  EXPECT_EQ(out.verdict, Verdict::holds);
}

// s_1 = g/(g + R) with g ≈ 2/(x − π/2)² is smooth through the pole, so neighbouring steps shrink ~ h.
TEST(PeriodicClaims, SirenmaxScoresAreSmoothThroughThePole) {
  const auto out = check("periodic.sirenmax_poles");
  EXPECT_GT(out.measured, 0.8);
  EXPECT_EQ(out.verdict, Verdict::violated);
}

// The paper's cells that follow from g'(0): cosmax and sin2max have g'(0) = 0, so the zero-region
// gradient is bad; softmax at every scale keeps values in [0, 1] (nine of those agree by construction).
TEST(PeriodicClaims, PropertyTableAgreesWhereTheAnswerIsDerivable) {
  const auto out = check("periodic.property_table");
  EXPECT_NE(out.markdown.find("| cosmax | ✘/✓ (paper ✘/✓) | ✘/✓ (paper ✘/✓) | ✓ (paper ✓) | ✘ (paper ✘)"),
            std::string::npos)
      << out.markdown;
  EXPECT_NE(out.markdown.find("| softmax | ✓ (paper ✓) | ✓ (paper ✓) | ✘/✓ (paper ✘/✓) | ✓ (paper ✓) | ✓ (paper ✓) |"),
            std::string::npos);
  EXPECT_NE(out.markdown.find("| sin2max | ✓ (paper ✓) |"), std::string::npos);
  EXPECT_NE(out.markdown.find("✘ (paper ✘) | ✘ (paper ✓) |"), std::string::npos);  // sin2max zero region
}

// E‖N^{−α}h(S)‖_F² = N^{2−2α} E h² exactly, so the fitted exponents are 1 − α for every h.
TEST(ReluClaims, FrobeniusGrowsLikeNToTheOneMinusAlpha) {
  const auto out = check("relu.frob");
  EXPECT_EQ(out.verdict, Verdict::holds) << out.detail;
  EXPECT_NEAR(out.measured, 0.0, 0.05);
}

// With α = 1 the mean weight is E h(S)/N: exponent −1 for every h with E h ≠ 0.
TEST(ReluClaims, MeanWeightFallsLikeOneOverN) {
  const auto out = check("relu.mean_weight");
  EXPECT_EQ(out.verdict, Verdict::holds) << out.detail;
  EXPECT_NE(out.detail.find("relu2 2;"), std::string::npos) << out.detail;  // E relu(cZ)² ∝ c²
}
