// The RELU, PERIODIC and SOFT claim checks against facts derived by hand, in quick mode: a check that
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
  EXPECT_EQ(out.verdict, Verdict::identity) << "a proven bound, found tight";
}

// exp(sin a − sin b) ≤ e², with equality at sin a = 1, sin b = −1.
TEST(PeriodicClaims, SinsoftmaxRatioReachesButNeverExceedsESquared) {
  const auto out = check("periodic.sinsoftmax_ratio");
  EXPECT_LE(out.measured, std::exp(2.0) * (1 + 1e-12));
  EXPECT_GE(out.measured, std::exp(2.0) * 0.99);
  EXPECT_EQ(out.verdict, Verdict::identity) << "a proven bound, found tight";
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

// E‖N^{−α}h(S)‖_F² = N^{2−2α} E h² exactly, so the fitted exponents are 1 − α for every h: an identity.
TEST(ReluClaims, FrobeniusGrowsLikeNToTheOneMinusAlpha) {
  const auto out = check("relu.frob");
  EXPECT_EQ(out.verdict, Verdict::identity) << out.detail;
  EXPECT_NEAR(out.measured, 0.0, 0.05);
}

// With α = 1 the mean weight is E h(S)/N: exponent −1 for every h with E h ≠ 0.
TEST(ReluClaims, MeanWeightFallsLikeOneOverN) {
  const auto out = check("relu.mean_weight");
  EXPECT_EQ(out.verdict, Verdict::identity) << out.detail;
  EXPECT_NE(out.detail.find("relu2 2;"), std::string::npos) << out.detail;  // E relu(cZ)² ∝ c²
}

// Gaussian logits of variance 1 give E relu(Z)⁴ = 3/2, but the init grid's logits are a scale mixture with
// E τ⁴ = ((D+2)/D)²(d+2)/d = 1.097 at D = d = 64: relu²'s E‖ϕ‖_F² sits 8.8% above the model, beyond 2%.
TEST(ReluClaims, GaussianLogitModelMissesTheMixturesFourthMoment) {
  const auto out = check("relu.gaussian_logit_model");
  EXPECT_EQ(out.verdict, Verdict::inexact) << out.detail;
  EXPECT_DOUBLE_EQ(out.claimed, 1.5) << out.detail;
  EXPECT_NE(out.detail.find("frob2 init -0.08"), std::string::npos) << out.detail;
}

// The row sums' constants come from the exact law, so they hold; the headline is relu on grid init.
TEST(ReluClaims, RowSumConstantIsTheExactMixtureMean) {
  const auto out = check("relu.row_sum_constant");
  EXPECT_EQ(out.verdict, Verdict::holds) << out.detail;
  // E relu(τZ) = E τ/√(2π) with m = E√(χ²_64/64) = √2 Γ(32.5)/(8 Γ(32)): E τ = m³ off the diagonal and
  // E(χ²_64/64)·m = m on it; the largest quick N is 128.
  const double m = std::sqrt(2.0) * std::exp(std::lgamma(32.5) - std::lgamma(32.0)) / 8;
  const double expected = (127 * m * m * m + m) / 128 / std::sqrt(2 * M_PI);
  EXPECT_TRUE(test::close(out.claimed, expected, 1e-10, 0)) << out.detail;
}

// Diagonal F attain ‖F‖₂ = ‖F‖₁; symmetric F never exceed it (‖F‖₂ ≤ √(‖F‖₁‖F‖∞) = ‖F‖₁): an identity, tight.
TEST(SoftClaims, LemmaOneIsTightAndHolds) {
  const auto out = check("soft.lemma1");
  EXPECT_EQ(out.verdict, Verdict::identity) << out.detail;
  EXPECT_LE(out.measured, 1 + 1e-12);
  EXPECT_GE(out.measured, 1 - 1e-12);
  ASSERT_EQ(out.files.size(), 1u);
  EXPECT_EQ(out.files[0].first, "worst_inputs/soft.lemma1.csv");
}

// The Neumann bound ‖(I − F)⁻¹‖ ≤ 1/(1 − ‖F‖) is attained by F = cI, which the samples contain as
// diagonal matrices whose largest |entry| is positive.
TEST(SoftClaims, LemmaTwoIsTightAndHolds) {
  const auto out = check("soft.lemma2");
  EXPECT_EQ(out.verdict, Verdict::identity) << out.detail;
  EXPECT_LE(out.measured, 1 + 1e-9);
  EXPECT_GE(out.measured, 1 - 1e-9);
}

// One token: A = [1], α = 2/‖A‖₁² = 2, so A₁ = 2·2 − 2·1·2 = 0 and A_k = 0 for every k ≥ 1, never A⁺ = 1; with
// α = 1/σ₁² = 1, A₀ = 1 = A⁺ at once.
TEST(SoftClaims, AlphaRuleFailsOnOneTokenWhereASmallerAlphaSucceeds) {
  const auto rule = check("soft.prop1.alpha_rule");
  EXPECT_EQ(rule.verdict, Verdict::violated) << rule.detail;
  EXPECT_NE(rule.detail.find("one_token m=1: ||A_k - A+||/||A+|| = 1 "), std::string::npos) << rule.detail;
  const auto small = check("soft.prop1.small_alpha");
  EXPECT_EQ(small.detail.find("one_token m=1:"), std::string::npos) << small.detail;
}

// One token: α = 2 gives e₀ = 1 − αλ² = −1 and e ← e² stays at 1 (A_k = 0): the residual ‖A·0·A − A‖/‖A‖ = 1 never
// falls. Above the limit 2/σ₁² the iteration diverges.
TEST(SoftClaims, NewtonSchulzStallsOnOneTokenAndDivergesAboveTheLimit) {
  const auto monotone = check("soft.prop2_monotone");
  EXPECT_EQ(monotone.verdict, Verdict::violated) << monotone.detail;
  EXPECT_NE(monotone.detail.find("one_token m=1 (residual 1)"), std::string::npos) << monotone.detail;
  EXPECT_NE(monotone.detail.find("diverged"), std::string::npos) << "alpha above 2/sigma_1^2 must diverge";
}

// K = Q: S = D⁻¹E with E = exp(QQᵀ/√d) positive definite, so S is similar to D^{-1/2}ED^{-1/2}: real,
// non-negative eigenvalues; row-stochastic, so λ₁ = 1. An identity.
TEST(SoftClaims, SoftmaxSelfAttentionSpectrumIsInTheUnitInterval) {
  const auto out = check("soft.prop3.literal");
  EXPECT_EQ(out.verdict, Verdict::identity) << out.detail;
  EXPECT_NEAR(out.measured, 1.0, 1e-9);
  EXPECT_GE(out.ci_lo, -1e-9);
}

// The outlier every query attends to: S → 1 e₀ᵀ, whose spectral norm is √n (8 at n = 64), while ‖S‖₂ ≤
// √(‖S‖₁‖S‖∞) = √(max column sum) ≤ √n bounds every input.
TEST(SoftClaims, SoftmaxSpectralNormReachesRootNOnAnOutlier) {
  const auto out = check("soft.prop3.as_used");
  EXPECT_EQ(out.verdict, Verdict::violated) << out.detail;
  EXPECT_GT(out.measured, 0.9 * 8);
  EXPECT_LE(out.measured, 8 * (1 + 1e-12));
  EXPECT_NE(out.detail.find("outlier n=64"), std::string::npos) << out.detail;
}

// One token, A = [1]: the released code inverts R = 1.01 (α = 1.8 from A's row sum 1, e₀ = 1 − 1.8·1.01² < 0.9 in
// magnitude, so 20 steps converge): against R the residual is rounding, against A it is |1/1.01 − 1| = 0.01/1.01.
TEST(SoftClaims, ReleasedResidualIsReportedAgainstAAndAgainstTheShiftedMatrix) {
  const auto out = check("soft.fig5.released");
  bool found = false;
  for (const auto& row : out.evidence) {
    if (row.activation != "released/one_token") continue;
    found = true;
    EXPECT_NEAR(row.value.mean, 0.01 / 1.01, 1e-15);
    EXPECT_LE(extra_number(row, "residual_shifted"), 1e-15);
  }
  EXPECT_TRUE(found) << "no one-token row";
  // Judged on what the shifted iteration can reach: the count at the floor against A + sI, not against A.
  int at_floor = 0;
  for (const auto& row : out.evidence)
    at_floor += extra_number(row, "residual_shifted") <= extra_number(row, "float32_floor");
  EXPECT_EQ(out.measured, at_floor) << out.detail;
  EXPECT_EQ(out.verdict, at_floor == int(out.evidence.size()) ? Verdict::holds : Verdict::violated) << out.detail;
}

// The paper's β rule is met exactly on column-diagonally-dominant bottlenecks (derived in test_pinv_rules.cpp), so
// its count of met inputs equals the count of dominant ones; unit-diagonal kernels of nearby tokens are not.
TEST(SoftClaims, BetaRuleIsMetExactlyOnTheDiagonallyDominantBottlenecks) {
  const auto out = check("soft.beta_rule.satisfiable");
  EXPECT_EQ(out.verdict, Verdict::violated) << out.detail;
  int met = 0, dominant = 0;
  for (const auto& row : out.evidence)
    met += row.value.mean == 1, dominant += extra_value(row, "column_dominant") == "true";
  EXPECT_EQ(met, dominant);
  EXPECT_EQ(double(met), out.measured);
}

// Kernel entries lie in (0, 1], so λ₁ ≤ max row sum ≤ n; identical tokens make every entry 1 (λ₁ = n).
TEST(SoftClaims, GaussianKernelTopEigenvalueIsAtMostN) {
  const auto out = check("soft.prop4_gauss_eig");
  EXPECT_EQ(out.verdict, Verdict::identity) << out.detail;
  EXPECT_LE(out.measured, 1.0 + 1e-12);
  EXPECT_GT(out.measured, 1 - 1e-9);
}

// ∂⟨G, X⁻¹⟩/∂X = −X⁻ᵀGX⁻ᵀ; central differences with step 1e-6 agree to about 1e-9.
TEST(SoftClaims, InverseGradientMatchesFiniteDifferences) {
  const auto out = check("soft.eq12");
  EXPECT_EQ(out.verdict, Verdict::identity) << out.detail;
  EXPECT_LT(out.measured, 1e-6);
}

// Nystrom's S_hat = P^T A+ P of a positive semi-definite kernel leaves S - S_hat a Schur complement, also positive
// semi-definite: ||S_hat||_2 <= ||S||_2 <= n at every m, so the norm cannot keep growing like m^2.
TEST(SoftClaims, NystromReconstructionNormStaysBelowTheKernels) {
  const auto out = check("soft.prop5_s_hat_growth");
  ASSERT_FALSE(out.evidence.empty());
  for (const auto& r : out.evidence)
    EXPECT_LE(r.value.mean, extra_number(r, "s_norm") * (1 + 1e-6)) << "m = " << extra_value(r, "m");
  EXPECT_EQ(out.verdict, Verdict::violated) << out.detail;
}

// ||D^-1 A+||_2 <= ||D^-1||_2 ||A+||_2 always (submultiplicativity); the proof's equality fails on some bottleneck.
TEST(SoftClaims, ProofOfPropSixUsesAnInequalityAsAnEquality) {
  const auto out = check("soft.prop6.proof_step");
  for (const auto& r : out.evidence) EXPECT_LE(r.value.mean, 1 + 1e-12);
  EXPECT_LT(out.measured, 1);
  EXPECT_EQ(out.verdict, Verdict::violated) << out.detail;
}

// Algorithm 2 on the one-token bottleneck A = [1]: alpha = 2/||A||_1^2 = 2 gives A_0 = 2, A_1 = 2 A_0 - A_0 A A_0 = 0,
// a fixed point: the residual stays at 1, levelled off though never converged. Levelled counts every bottleneck at the
// floor.
TEST(SoftClaims, StalledNewtonRunLevelsOffWithoutConverging) {
  const auto levelled = check("soft.fig5.alg2.levelled");
  EXPECT_GE(levelled.measured, check("soft.fig5.alg2").measured);
  const auto moving = levelled.detail.find("still moving");
  EXPECT_EQ(levelled.detail.find("one_token", moving == std::string::npos ? 0 : moving), std::string::npos)
      << levelled.detail;
}

// S - S_hat of eq 9 is a Schur complement of the positive semi-definite kernel, so ||S_hat||_2 <= ||S||_2 <= n (Prop 4)
// at every length; the strided landmarks are one per r x r cell of the token grid, m = n/r^2.
TEST(SoftClaims, SoftNormStaysBelowNAndStridedLandmarksKeepTheirCells) {
  const auto out = check("soft.table6_long_n");
  ASSERT_FALSE(out.evidence.empty());
  for (const auto& r : out.evidence) {
    const double n = double(r.N), m = extra_number(r, "m"), stride = extra_number(r, "stride");
    if (r.quantity == "s_hat_norm_eq9") {
      EXPECT_LE(r.value.mean, n * (1 + 1e-6)) << r.activation << " n = " << n;
    }
    if (stride > 0) {
      EXPECT_EQ(m * stride * stride, n) << r.activation;
    }
  }
}
