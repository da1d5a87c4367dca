// The POLY claims that read a proof's bound, a second reading of a sentence or the mechanism behind a training
// outcome, against facts derived by hand (quick mode).
#include <attnlab/theory/claims.hpp>
#include <attnlab/theory/moments.hpp>

#include "support.hpp"

#include <cmath>

using namespace attnlab;

namespace {

ClaimOutcome check(const std::string& id) {
  const ClaimContext ctx{.seed = test::seed(), .quick = true};
  return claim_registry().find(id).check(ctx);
}

const ResultRow& row_of(const ClaimOutcome& out, const std::string& quantity, Index D, int p) {
  for (const auto& r : out.evidence)
    if (r.quantity == quantity && r.D == D && r.p == p) return r;
  throw std::runtime_error("no row " + quantity);
}

}  // namespace

// Exact over bound = (2p-1)!![D]_p / ((2p-1)!! D^p) = prod_(k<p) (1 + 2k/D): 1 at p = 1, above 1 from p = 2; the
// largest of quick mode's D = 4, 16 and p = 1..8 is at D = 4, p = 8: 1 x 1.5 x 2 x ... x 4.5 = 1417.5.
TEST(PolyClaims, ProofBoundAfterEq43IsExceededByTheRisingFactorial) {
  const auto out = check("poly.proof_pp_bound");
  ASSERT_FALSE(out.evidence.empty());
  for (const auto& r : out.evidence) {
    double product = 1;
    for (int k = 0; k < r.p; ++k) product *= 1 + 2.0 * k / double(r.D);
    EXPECT_TRUE(test::close(r.value.mean, product, test::tol.exact_rel, 0)) << "D = " << r.D << ", p = " << r.p;
  }
  double largest = 1;
  for (int k = 0; k < 8; ++k) largest *= 1 + 2.0 * k / 4;
  EXPECT_TRUE(test::close(out.measured, largest, test::tol.exact_rel, 0));
  EXPECT_EQ(out.verdict, Verdict::violated) << out.detail;
  // The data, not only the algebra: at D = 4, p = 2 the moment is 1.5 times the bound, far outside Monte-Carlo's error.
  const auto& r = row_of(out, "c11_moment_over_proof_bound", 4, 2);
  EXPECT_GT(extra_number(r, "monte_carlo_ci_lo"), extra_number(r, "bound"));
}

// E||x^p/sqrt(N)||_F^2 = (N - 1) a + b for the off-diagonal and diagonal moments a, b of S^p: the norm grows like
// sqrt(N), the order of softmax's bound sqrt(N), while the norms themselves differ by a factor N^(1/2) (the .literal
// reading poly.level_vs_softmax, violated on the same samples).
TEST(PolyClaims, LevelReadAsBoundsHoldsWhereTheNormsReadingFails) {
  const auto bounds = check("poly.level_vs_softmax.bounds");
  EXPECT_EQ(bounds.verdict, Verdict::holds) << bounds.detail;
  EXPECT_EQ(bounds.claimed, 0.5);
  EXPECT_EQ(check("poly.level_vs_softmax").verdict, Verdict::violated);
}

// At timm's init z = S/sqrt(d) has rms D sigma_t^2 (0.0128 at D = 32): ||d z^2/dz||_F / ||d z/dz||_F = 2 ||z||_F / N,
// which is 2 rms(z) up to Jensen's gap (about 1% for N^2 entries driven by 32 x 32 Q and K); at the unit init rms(z)
// = 1 and the same step doubles the norm.
TEST(PolyClaims, HighPowersVanishAtTimmInitAndGrowAtUnitInit) {
  const auto timm = check("poly.high_p.init_norms");
  EXPECT_EQ(timm.verdict, Verdict::holds) << timm.detail;
  EXPECT_LT(timm.measured, 1);
  const theory::Ensemble ens{.N = 32, .D = 32, .d = 32, .sigma_x = 1, .sigma_t = 0.02};
  const double rms = std::sqrt(theory::frobenius2_exact(ens, 1) / ens.d) / ens.N;  // ||XQK^TX^T||_F^2 / d, per entry
  const ResultRow *p1 = nullptr, *p2 = nullptr;
  for (const auto& r : timm.evidence) {
    if (r.quantity != "jac") continue;
    if (r.p == 1) p1 = &r;
    if (r.p == 2) p2 = &r;
  }
  ASSERT_TRUE(p1 && p2);
  const double ratio = p2->value.mean / p1->value.mean,
               se = ratio * std::hypot(p1->value.se / p1->value.mean, p2->value.se / p2->value.mean);
  EXPECT_NEAR(ratio, 2 * rms, 4 * se + 0.01 * 2 * rms);
  const auto unit = check("poly.high_p.init_norms.unit");
  EXPECT_EQ(unit.verdict, Verdict::violated) << unit.detail;
  EXPECT_GT(unit.measured, 1);
}
