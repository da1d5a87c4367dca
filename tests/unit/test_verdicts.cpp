// The shared verdict rules at their thresholds: evidence a hair inside and a hair outside each one, the inconclusive
// bands reached, and non-finite evidence. The numbers are the thresholds' documented values (report.md), so loosening
// one in theory/verdicts.hpp moves a case across its edge and fails here.
#include <attnlab/theory/verdicts.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace attnlab;

namespace {

constexpr double kHair = 1e-6;

PowerLawFit fit(double lo, double hi) { return {.exponent = 0.5 * (lo + hi), .ci_lo = lo, .ci_hi = hi}; }

Estimate estimate(double mean, double half_width) {
  return {.count = 100, .mean = mean, .se = half_width / 1.96, .ci_lo = mean - half_width, .ci_hi = mean + half_width};
}

}  // namespace

// O(N^a) with a = 1: tolerance 0.05 either side, an interval at most 0.5 wide.
TEST(GrowthVerdict, ToleranceAndWidthEdges) {
  const Thresholds t;
  EXPECT_EQ(growth_verdict(fit(1.05 - kHair, 1.2), 1.0, t), Verdict::holds);
  EXPECT_EQ(growth_verdict(fit(1.05 + kHair, 1.2), 1.0, t), Verdict::violated);
  EXPECT_EQ(growth_verdict(fit(0.8, 0.95 + kHair), 1.0, t), Verdict::holds);
  EXPECT_EQ(growth_verdict(fit(0.8, 0.95 - kHair), 1.0, t), Verdict::loose);
  EXPECT_EQ(growth_verdict(fit(0.75, 1.25 - kHair), 1.0, t), Verdict::holds);
  EXPECT_EQ(growth_verdict(fit(0.75, 1.25 + kHair), 1.0, t), Verdict::inconclusive) << "wider than 0.5";
  EXPECT_EQ(growth_verdict(fit(1.3, 1.8 + kHair), 1.0, t), Verdict::inconclusive) << "wide, even when wholly above";
  EXPECT_EQ(growth_verdict({.exponent = NAN, .ci_lo = 0.9, .ci_hi = 1.1}, 1.0, t), Verdict::inconclusive);
}

// A bound: above 1 + 1e-12 violated, below 1 − 0.1 loose.
TEST(BoundVerdict, RoundingAndSlackEdges) {
  const Thresholds t;
  EXPECT_EQ(bound_verdict(1 + 0.5e-12, t), Verdict::holds);
  EXPECT_EQ(bound_verdict(1 + 2e-12, t), Verdict::violated);
  EXPECT_EQ(bound_verdict(0.9 + kHair, t), Verdict::holds);
  EXPECT_EQ(bound_verdict(0.9 - kHair, t), Verdict::loose);
  EXPECT_EQ(bound_verdict(NAN, t), Verdict::inconclusive);
  EXPECT_EQ(bound_verdict(HUGE_VAL, t), Verdict::inconclusive);
  const Threshold coarse{"coarse", 1e-4, "test"};  // a claim's own rounding allowance replaces the default
  EXPECT_EQ(bound_verdict(1 + 0.5e-4, t, coarse), Verdict::holds);
  EXPECT_EQ(bound_verdict(1 + 2e-4, t, coarse), Verdict::violated);
}

// A closed form: inexact only when outside the interval and more than 2% off.
TEST(ClosedFormVerdict, IntervalAndToleranceEdges) {
  const Thresholds t;
  EXPECT_EQ(closed_form_verdict(1.02 - kHair, estimate(1.0, 0.001), t), Verdict::holds) << "outside, within 2%";
  EXPECT_EQ(closed_form_verdict(1.02 + kHair, estimate(1.0, 0.001), t), Verdict::inexact);
  EXPECT_EQ(closed_form_verdict(0.98 - kHair, estimate(1.0, 0.001), t), Verdict::inexact);
  EXPECT_EQ(closed_form_verdict(1.05, estimate(1.0, 0.05 + kHair), t), Verdict::holds) << "inside the interval";
  EXPECT_EQ(closed_form_verdict(1.05, estimate(1.0, 0.05 - kHair), t), Verdict::inexact);
  Estimate lost = estimate(1.0, 0.001);
  lost.nonfinite = 1;
  EXPECT_EQ(closed_form_verdict(1.0, lost, t), Verdict::inconclusive);
}

// An equivalence test: inside the band holds, wholly outside violated, across an edge inconclusive.
TEST(EquivalenceVerdict, BandEdges) {
  EXPECT_EQ(equivalence_verdict(0.25, 0.75, 0.25, 0.75), Verdict::holds);
  EXPECT_EQ(equivalence_verdict(0.25 - kHair, 0.5, 0.25, 0.75), Verdict::inconclusive);
  EXPECT_EQ(equivalence_verdict(0.5, 0.75 + kHair, 0.25, 0.75), Verdict::inconclusive);
  EXPECT_EQ(equivalence_verdict(0.0, 1.0, 0.25, 0.75), Verdict::inconclusive) << "wider than the band";
  EXPECT_EQ(equivalence_verdict(0.75 + kHair, 2.0, 0.25, 0.75), Verdict::violated);
  EXPECT_EQ(equivalence_verdict(-1.0, 0.25 - kHair, 0.25, 0.75), Verdict::violated);
  EXPECT_EQ(equivalence_verdict(-HUGE_VAL, 0.5, 0.25, 0.75), Verdict::inconclusive);
  EXPECT_EQ(equivalence_verdict(NAN, 0.5, 0.25, 0.75), Verdict::inconclusive);
}

// The severity order worst() applies when a claim combines verdicts.
TEST(WorstVerdict, SeverityOrder) {
  EXPECT_EQ(worst(Verdict::holds, Verdict::loose), Verdict::loose);
  EXPECT_EQ(worst(Verdict::loose, Verdict::inconclusive), Verdict::inconclusive);
  EXPECT_EQ(worst(Verdict::inexact, Verdict::inconclusive), Verdict::inexact);
  EXPECT_EQ(worst(Verdict::inexact, Verdict::violated), Verdict::violated);
  EXPECT_EQ(worst(Verdict::violated, Verdict::holds), Verdict::violated);
}
