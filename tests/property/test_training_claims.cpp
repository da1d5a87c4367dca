// The training claims judged on synthetic sweep rows whose answer is known by construction: accuracy curves
// that are exact parabolas with a chosen maximiser, tables with a chosen ordering, norms with chosen ratios.
// A wrong refinement, blocked fit, posterior draw, paired interval or label lookup moves the verdicts or the measured
// values.
#include <attnlab/core/text.hpp>
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/theory/claims.hpp>
#include <attnlab/theory/moments.hpp>

#include "support.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

using namespace attnlab;

namespace {

ResultRow accuracy_row(const std::string& activation, Index N, double accuracy, std::uint64_t seed, double validation,
                       ExtraColumns extra = {}) {
  ResultRow r;
  r.quantity = "val_accuracy";
  r.activation = activation;
  r.N = N, r.D = 32, r.d = 16;
  r.trials = 1;
  r.value = {1, 0, accuracy, 0, accuracy, accuracy};
  extra.insert(extra.begin(), {{"seed", seed}, {"validation", validation}});
  r.extra = std::move(extra);
  return r;
}

ClaimOutcome judge(const std::string& id, const std::string& sweep, const std::vector<ResultRow>& rows) {
  ClaimContext ctx{test::seed(), true, 0, nullptr, {}};
  ctx.training_rows = [&](const std::string& name) { return name == sweep ? rows : std::vector<ResultRow>{}; };
  return claim_registry().find(id).check(ctx);
}

// Noise ±δ that no seed effect explains: seed 1 above seed 2 at every other grid point, below it in between.
double crossing_noise(int point, std::uint64_t seed, double delta) {
  return (point % 2 == 0) == (seed == 1) ? delta : -delta;
}

const std::vector<Index> kSweepSizes{8, 16, 64, 256};

// Two seeds at ±noise around an exact parabola in log10 k with its maximum at k* = c N^b (crossing_noise, so that the
// seeds' mean is the parabola and their effects are zero).
std::vector<ResultRow> k_sweep_rows(double b, double curvature, double c = 0.3,
                                    const std::vector<Index>& sizes = kSweepSizes, double noise = 4e-3) {
  std::vector<ResultRow> rows;
  for (Index N : sizes)
    for (int i = 0; i < 13; ++i) {
      const double log_k = -3 + 0.5 * i, best = std::log10(c) + b * std::log10(double(N));
      for (std::uint64_t seed : {1, 2}) {
        auto r = accuracy_row("x^3/k", N,
                              0.8 - curvature * (log_k - best) * (log_k - best) + crossing_noise(i, seed, noise), seed,
                              10000);
        r.p = 3, r.k = KScale{false, std::pow(10, log_k)};
        rows.push_back(r);
      }
    }
  return rows;
}

}  // namespace

// The parabola through three points of a parabola is that parabola: the fitted slope is b exactly.
TEST(TrainingClaims, BestKSlopeRecoversTheConstructedExponent) {
  for (double b : {0.5, 0.0, 1.0}) {
    const auto out = judge("poly.k_vs_N", "k_sweep", k_sweep_rows(b, 0.1));
    EXPECT_TRUE(test::close(out.measured, b, 1e-6, 1e-6)) << "b = " << b;
    EXPECT_LE(out.ci_lo, b) << "b = " << b;
    EXPECT_GE(out.ci_hi, b) << "b = " << b;
    EXPECT_LT(out.ci_hi - out.ci_lo, 0.5) << "b = " << b << ": a sharp peak with small errors gives a narrow interval";
    EXPECT_EQ(out.verdict, b == 0.5 ? Verdict::holds : Verdict::violated) << "b = " << b << ": " << out.detail;
    ASSERT_EQ(out.figures.size(), 2u);
    EXPECT_EQ(out.figures[0].series.size(), 4u) << "one accuracy curve per N";
  }
}

// The sweep's p axis keeps powers apart: x/k rows with their best k on another law leave x^3's slope where it was.
TEST(TrainingClaims, BestKSlopeReadsTheCubeAlone) {
  auto rows = k_sweep_rows(0.5, 0.1);
  for (auto r : k_sweep_rows(1.5, 0.1)) {
    r.activation = "x/k", r.p = 1;
    r.value.mean += 0.05;  // above x^3's rows: an argmax over both powers would be x's
    rows.push_back(r);
  }
  const auto out = judge("poly.k_vs_N", "k_sweep", rows);
  EXPECT_TRUE(test::close(out.measured, 0.5, 1e-6, 1e-6)) << out.detail;
  EXPECT_EQ(out.verdict, Verdict::holds) << out.detail;
}

// The power of the design: from the interval's width and the seeds behind it, the seeds that would make it at most
// 0.4 wide (width ∝ 1/√seeds); an interval already that narrow says so.
TEST(TrainingClaims, BestKSlopeSaysTheSeedsANarrowIntervalNeeds) {
  for (double noise : {1e-3, 3e-2}) {
    auto rows = k_sweep_rows(0.5, 0.1);
    for (std::size_t j = 0; j < rows.size(); ++j)
      rows[j].value.mean += crossing_noise(int(j / 2), j % 2 == 0 ? 1 : 2, noise);
    const auto out = judge("poly.k_vs_N", "k_sweep", rows);
    const double width = out.ci_hi - out.ci_lo;
    if (width <= 0.4) {
      EXPECT_NE(out.detail.find("the interval is at most 0.4 wide"), std::string::npos) << out.detail;
    } else {
      const int needed = int(std::ceil(2 * std::pow(width / 0.4, 2)));
      EXPECT_NE(out.detail.find(text("needs about ", needed, " seeds at the refined points (2 now")), std::string::npos)
          << out.detail;
    }
    EXPECT_EQ(width > 0.4, noise > 1e-2) << "noise " << noise << ": width " << width << ", " << out.detail;
  }
}

// The seeds are paired across k, so a seed that trains better at every k is taken out as a block: a seed effect
// of ±3 points, which as crossing noise gives an interval wider than 0.4 (the test above), leaves the slope located
// as tightly as without it.
TEST(TrainingClaims, SeedEffectsAreTakenOutAsBlocks) {
  auto rows = k_sweep_rows(0.5, 0.1);
  for (auto& r : rows) r.value.mean += r.extra[0].second.str() == "1" ? 3e-2 : -3e-2;
  const auto blocked = judge("poly.k_vs_N", "k_sweep", rows),
             without = judge("poly.k_vs_N", "k_sweep", k_sweep_rows(0.5, 0.1));
  EXPECT_TRUE(test::close(blocked.measured, 0.5, 1e-6, 1e-6)) << blocked.detail;
  EXPECT_TRUE(test::close(blocked.ci_lo, without.ci_lo, 1e-9, 1e-9)) << blocked.detail << "\n" << without.detail;
  EXPECT_TRUE(test::close(blocked.ci_hi, without.ci_hi, 1e-9, 1e-9)) << blocked.detail << "\n" << without.detail;
  EXPECT_EQ(blocked.verdict, Verdict::holds) << blocked.detail;
  // Per N, 13 points × 2 seeds: seed 1's effect is fitted at δ/13 (7 points +δ, 6 −δ), leaving residuals 12δ/13 (14
  // runs) and 14δ/13 (12) over 26 − 14 degrees of freedom: sd = δ √(4368/169/12) = 0.59 points. With the seeds left
  // in, a point's two runs lie ±(3 + 0.4) or ±(3 − 0.4) points from its mean: sd √((7·2·3.4² + 6·2·2.6²)/13) = 4.3.
  EXPECT_NE(blocked.detail.find("a run's sd about the fit 0.59 points (4.3 with the seeds left in)"), std::string::npos)
      << blocked.detail;
}

// The refined design's winner's curse: refined k trained with seeds 3-5 as well, seeds that train 5 points worse
// wherever they run. Their points' own seed means fall 3 points below the parabola and the best k would move to a
// grid point; the blocked fit compares every point as if all five seeds had run it, and finds k* exactly.
TEST(TrainingClaims, RefinedPointsWithWorseSeedsCompareFairly) {
  const double b = 0.5, c = 0.3, curvature = 0.1;
  auto rows = k_sweep_rows(b, curvature, c);
  for (Index N : {8, 16, 64, 256}) {
    const double best = std::log10(c) + b * std::log10(double(N));
    for (double offset : {-0.2, -0.1, 0.1, 0.2})
      for (std::uint64_t seed = 1; seed <= 5; ++seed) {
        const double log_k = best + offset;
        auto r = accuracy_row("x^3/k", N,
                              0.8 - curvature * offset * offset +
                                  (seed == 1   ? 1e-3
                                   : seed == 2 ? -1e-3
                                               : -0.05),
                              seed, 10000);
        r.p = 3, r.k = KScale{false, std::pow(10, log_k)};
        rows.push_back(r);
      }
  }
  const auto out = judge("poly.k_vs_N", "k_sweep", rows);
  EXPECT_TRUE(test::close(out.measured, b, 1e-6, 1e-6)) << out.detail;
  for (const auto& r : out.evidence)
    EXPECT_TRUE(test::close(r.value.mean, c * std::pow(double(r.N), b), 1e-6, 1e-6))
        << "N = " << r.N << ": " << out.detail;
  EXPECT_EQ(out.verdict, Verdict::holds) << out.detail;
}

// A point trained with one seed while its neighbours have two (a campaign stopped half-way through its second seed) is
// judged through that seed's fitted effect, with a wider error than its neighbours'.
TEST(TrainingClaims, APointWithOneSeedIsJudgedThroughTheSeedEffect) {
  auto rows = k_sweep_rows(0.5, 0.1);
  std::erase_if(rows, [](const ResultRow& r) {
    return r.extra[0].second.str() == "2" && r.k->str() == text(std::pow(10, -3.0));
  });
  const auto out = judge("poly.k_vs_N", "k_sweep", rows);
  EXPECT_EQ(out.verdict, Verdict::holds) << out.detail;
  ASSERT_FALSE(out.figures.empty());
  for (const auto& s : out.figures[0].series)
    EXPECT_GT(s.hi[0] - s.lo[0], s.hi[1] - s.lo[1]) << s.label << ": k = 1e-3 has one seed, k = 10^-2.5 two";
}

// N = 8's best grid k (1, nearest its k* = 0.3 · 8^0.5 = 0.85) keeps only seed 1: its table cell gives that run alone,
// with no spread to quote.
TEST(TrainingClaims, ATableCellOfOneSeedSaysSo) {
  auto rows = k_sweep_rows(0.5, 0.1);
  std::erase_if(rows, [](const ResultRow& r) {
    return r.N == 8 && r.extra[0].second.str() == "2" && r.k->str() == text(std::pow(10, 0.0));
  });
  const auto out = judge("poly.k_vs_N", "k_sweep", rows);
  EXPECT_NE(out.markdown.find("(its one seed alone: "), std::string::npos) << out.markdown;
  EXPECT_EQ(out.markdown.find("its 1 seeds"), std::string::npos) << out.markdown;
}

// Points that share no seed with the rest have no common baseline for the seeds' effects: that N is left out, said
// so, and the slope comes from the others (exact parabolas: 0.5 exactly).
TEST(TrainingClaims, SeedsThatDoNotConnectThePointsLeaveTheirCurveOut) {
  auto rows = k_sweep_rows(0.5, 0.1);
  for (auto& r : rows)
    if (r.N == 16 && r.k->resolve(16) > 1.5) r.extra[0].second = r.extra[0].second.str() == "1" ? 3 : 4;
  const auto out = judge("poly.k_vs_N", "k_sweep", rows);
  EXPECT_NE(out.detail.find("left out: N = 16, whose seeds do not connect the points"), std::string::npos)
      << out.detail;
  EXPECT_NE(out.detail.find("best k N=8: "), std::string::npos) << out.detail;
  EXPECT_EQ(out.detail.substr(0, out.detail.find("; log k*")).find("N=16: "), std::string::npos) << out.detail;
  EXPECT_TRUE(test::close(out.measured, 0.5, 1e-6, 1e-6)) << out.detail;
  EXPECT_EQ(out.verdict, Verdict::holds) << out.detail;
  ASSERT_FALSE(out.figures.empty());
  EXPECT_EQ(out.figures[0].series.size(), 4u) << "the curve left out is still drawn";
}

// Each report names the paper's setup next to ours, ours read off the rows: 3,600 steps of batch 64 over the
// 60,000 − 10,000 images the rows' validation column leaves are 3600 · 64 / 50000 = 4.6 epochs.
TEST(TrainingClaims, ReportNamesThePapersSetupNextToOurs) {
  auto rows = k_sweep_rows(0.5, 0.1);
  for (auto& r : rows) r.extra.insert(r.extra.end(), {{"steps", 3600}, {"batch", 64}, {"depth", 2}});
  ResultRow evidence;  // a sweep's CSV also carries its claims' evidence rows, which describe no run
  evidence.quantity = "best_k";
  rows.push_back(evidence);
  const auto out = judge("poly.k_vs_N", "k_sweep", rows);
  EXPECT_NE(out.markdown.find("Setup. Paper: ViT-Tiny (D 192, depth 12"), std::string::npos) << out.markdown;
  EXPECT_NE(
      out.markdown.find("Ours: Fashion-MNIST padded to 32x32, D 32, depth 2, head dim 16, 3600 AdamW steps of batch "
                        "64 (4.6 epochs of 50000 images).\n"),
      std::string::npos)
      << out.markdown;
}

// A flat accuracy landscape cannot locate k*: the interval of the slope is wide.
TEST(TrainingClaims, FlatAccuracyInKIsInconclusive) {
  const auto out = judge("poly.k_vs_N", "k_sweep", k_sweep_rows(0.5, 1e-6));
  EXPECT_EQ(out.verdict, Verdict::inconclusive) << out.detail;
}

// A maximum below the grid at small N only bounds k* there: no verdict on the slope, and the detail says why.
TEST(TrainingClaims, BestKAtTheEndOfTheGridIsCensored) {
  const auto out = judge("poly.k_vs_N", "k_sweep", k_sweep_rows(0.5, 0.1, 1e-4));  // k* < 1e-3 for N < 100
  EXPECT_EQ(out.verdict, Verdict::inconclusive) << out.detail;
  EXPECT_NE(out.detail.find("end of the grid for N = 8, 16, 64"), std::string::npos) << out.detail;
}

// One seed has no seed-to-seed spread: the binomial error alone would claim too much.
TEST(TrainingClaims, OneSeedLeavesTheBestScaleInconclusive) {
  auto rows = k_sweep_rows(0.5, 0.1);
  std::erase_if(rows, [](const ResultRow& r) { return r.extra[0].second.str() == "2"; });
  const auto out = judge("poly.k_vs_N", "k_sweep", rows);
  EXPECT_EQ(out.verdict, Verdict::inconclusive);
  EXPECT_NE(out.detail.find("one seed at every point"), std::string::npos) << out.detail;
}

// Each regime is judged from its own rows: timm's slope 1 (rows with init timm, or none) is violated while the
// unit rows' slope 0.5 holds, in the same CSV; without unit rows poly.k_vs_N.unit says what to run.
TEST(TrainingClaims, EachInitIsJudgedFromItsOwnRows) {
  auto rows = k_sweep_rows(1.0, 0.1);
  for (auto r : k_sweep_rows(0.5, 0.1)) {
    r.extra.push_back({"init", "unit"});
    rows.push_back(r);
  }
  for (std::size_t i = 0; i < rows.size() / 4; ++i) rows[i].extra.push_back({"init", "timm"});
  const auto timm = judge("poly.k_vs_N", "k_sweep", rows), unit = judge("poly.k_vs_N.unit", "k_sweep", rows);
  EXPECT_TRUE(test::close(timm.measured, 1.0, 1e-6, 1e-6)) << timm.detail;
  EXPECT_EQ(timm.verdict, Verdict::violated) << timm.detail;
  EXPECT_TRUE(test::close(unit.measured, 0.5, 1e-6, 1e-6)) << unit.detail;
  EXPECT_EQ(unit.verdict, Verdict::holds) << unit.detail;
  EXPECT_EQ(unit.figures.at(0).name, "k_sweep_unit");
  const auto missing = judge("poly.k_vs_N.unit", "k_sweep", k_sweep_rows(0.5, 0.1));
  EXPECT_EQ(missing.verdict, Verdict::inconclusive);
  EXPECT_NE(missing.detail.find("--init timm,unit"), std::string::npos) << missing.detail;
}

// ViT-Tiny's k-sweep is judged from results/vit-tiny/'s rows alone, and the sweeps' model's claim never reads them.
TEST(TrainingClaims, VitTinyKSweepIsJudgedFromItsOwnFolder) {
  const auto tiny = judge("poly.k_vs_N.vit_tiny", "vit-tiny/k_sweep", k_sweep_rows(1.0, 0.1));
  EXPECT_TRUE(test::close(tiny.measured, 1.0, 1e-6, 1e-6)) << tiny.detail;
  EXPECT_EQ(tiny.verdict, Verdict::violated) << tiny.detail;
  EXPECT_EQ(tiny.figures.at(0).name, "k_sweep_vit_tiny");
  const auto elsewhere = judge("poly.k_vs_N.vit_tiny", "k_sweep", k_sweep_rows(1.0, 0.1));
  EXPECT_EQ(elsewhere.verdict, Verdict::inconclusive);
  EXPECT_NE(elsewhere.detail.find("no vit-tiny/k_sweep rows"), std::string::npos) << elsewhere.detail;
  const auto small = judge("poly.k_vs_N", "vit-tiny/k_sweep", k_sweep_rows(1.0, 0.1));
  EXPECT_EQ(small.verdict, Verdict::inconclusive);
  EXPECT_NE(small.detail.find("no k_sweep results"), std::string::npos) << small.detail;
}

// The equivalence rule on the exponent's interval: the same exact parabolas with k* ∝ N^b, the interval under 0.2 wide,
// hold inside [0.25, 0.75] and are violated outside it (the rule's own edges are tested a hair either side in
// test_verdicts.cpp).
TEST(TrainingClaims, BestKSlopeIsAnEquivalenceTestAgainstItsBand) {
  for (const auto& [b, verdict] : std::vector<std::pair<double, Verdict>>{
           {0.4, Verdict::holds}, {0.6, Verdict::holds}, {0.05, Verdict::violated}, {0.95, Verdict::violated}}) {
    const auto out = judge("poly.k_vs_N", "k_sweep", k_sweep_rows(b, 0.1));
    ASSERT_LT(out.ci_hi - out.ci_lo, 0.2) << out.detail;
    EXPECT_EQ(out.verdict, verdict) << "b = " << b << ": " << out.detail;
  }
  // An interval that crosses an edge is not evidence either way.
  auto rows = k_sweep_rows(0.75, 0.1);
  for (std::size_t j = 0; j < rows.size(); ++j)
    rows[j].value.mean += crossing_noise(int(j / 2), j % 2 == 0 ? 1 : 2, 1e-2);
  const auto crossing = judge("poly.k_vs_N", "k_sweep", rows);
  ASSERT_LT(crossing.ci_lo, 0.75) << crossing.detail;
  ASSERT_GT(crossing.ci_hi, 0.75) << crossing.detail;
  EXPECT_EQ(crossing.verdict, Verdict::inconclusive) << crossing.detail;
}

namespace {

// Control runs at every N of k_sweep_rows: softmax at its curves' best (0.8), uniform and off `range` below.
std::vector<ResultRow> control_rows(double range, const std::vector<Index>& sizes = kSweepSizes) {
  std::vector<ResultRow> rows;
  for (Index N : sizes)
    for (const auto& [function, accuracy] :
         {std::pair{"softmax", 0.8}, {"uniform", 0.8 - range}, {"off", 0.8 - range - 0.01}})
      for (std::uint64_t seed : {1, 2})
        rows.push_back(accuracy_row(function, N, accuracy, seed, 10000, {{"function", function}, {"control", "yes"}}));
  return rows;
}

// Two seeds at ±4e-3 (crossing_noise) around a plateau of 0.8 for log k ≥ e = log c + b log N, falling linearly to 0.4
// at e − 1 and flat below, on the grid of k_sweep_rows; with the controls of a dynamic range `range`.
std::vector<ResultRow> edge_rows(double b, double c, double range) {
  std::vector<ResultRow> rows = control_rows(range);
  for (Index N : {8, 16, 64, 256})
    for (int i = 0; i < 13; ++i) {
      const double log_k = -3 + 0.5 * i, edge = std::log10(c) + b * std::log10(double(N));
      for (std::uint64_t seed : {1, 2}) {
        auto r = accuracy_row("x^3/k", N,
                              0.8 - 0.4 * std::clamp(edge - log_k, 0.0, 1.0) + crossing_noise(i, seed, 4e-3), seed,
                              10000, {{"function", "poly"}});
        r.p = 3, r.k = KScale{false, std::pow(10, log_k)};
        rows.push_back(r);
      }
    }
  return rows;
}

}  // namespace

// Within δ = 0.2 (half the dynamic range 0.4) of the top, the plateau of edge_rows begins at e − 0.5, on the linear
// ramp between two grid points, where the interpolation is exact: the edge's exponent in N is b exactly.
TEST(TrainingClaims, PlateauEdgeRecoversTheConstructedExponent) {
  for (const auto& [b, verdict] : std::vector<std::pair<double, Verdict>>{
           {0.5, Verdict::holds}, {0.0, Verdict::violated}, {1.0, Verdict::violated}}) {
    const auto out = judge("poly.k_edge_vs_N", "k_sweep", edge_rows(b, 3, 0.4));
    EXPECT_TRUE(test::close(out.measured, b, 1e-9, 1e-9)) << "b = " << b << ": " << out.detail;
    EXPECT_LE(out.ci_lo, b);
    EXPECT_GE(out.ci_hi, b);
    EXPECT_EQ(out.verdict, verdict) << "b = " << b << ": " << out.detail;
    ASSERT_EQ(out.evidence.size(), 4u);
    const double expected = std::log10(3.0) + b * std::log10(8.0) - 0.5;
    EXPECT_TRUE(test::close(std::log10(out.evidence[0].value.mean), expected, 1e-9, 1e-9)) << out.detail;
    EXPECT_NE(
        out.detail.find("dynamic range (softmax above the better content-free control) N=8: 40 points (softmax 80%, "
                        "uniform 40%, off 39%)"),
        std::string::npos)
        << out.detail;
    // The figure marks each edge at the height that defines it, delta = 0.2 under its curve's best, in the colour the
    // plot gives that curve (series c takes the palette's colour c).
    ASSERT_EQ(out.figures.size(), 1u);
    const auto& series = out.figures[0].series;
    ASSERT_EQ(series.size(), 8u);
    for (std::size_t c = 0; c < 4; ++c) {
      const auto& mark = series[4 + c];
      ASSERT_EQ(mark.x.size(), 1u) << mark.label;
      EXPECT_EQ(mark.x[0], out.evidence[c].value.mean);
      EXPECT_TRUE(mark.lo[0] <= mark.x[0] && mark.x[0] <= mark.hi[0]);
      const auto& curve = series[c].y;
      EXPECT_TRUE(test::close(mark.y[0], *std::max_element(curve.begin(), curve.end()) - 0.2, 1e-9, 1e-9));
      EXPECT_TRUE(series[c].colour.empty()) << series[c].label;
      EXPECT_EQ(mark.colour, kSeriesColours[c]) << mark.label;
    }
  }
}

// Without controls, or with a softmax that beats content-free attention by less than 10 points, the task cannot show
// the effect: inconclusive, and the detail says why with the numbers. 11 points is enough.
TEST(TrainingClaims, PlateauEdgeNeedsATaskThatCanShowIt) {
  auto none = edge_rows(0.5, 3, 0.4);
  std::erase_if(none, [](const ResultRow& r) { return r.activation != "x^3/k"; });
  const auto without = judge("poly.k_edge_vs_N", "k_sweep", none);
  EXPECT_EQ(without.verdict, Verdict::inconclusive);
  EXPECT_NE(without.detail.find("the task cannot show it"), std::string::npos) << without.detail;
  EXPECT_NE(without.detail.find("not measured (no control runs)"), std::string::npos) << without.detail;
  const auto narrow = judge("poly.k_edge_vs_N", "k_sweep", edge_rows(0.5, 3, 0.09));
  EXPECT_EQ(narrow.verdict, Verdict::inconclusive);
  EXPECT_NE(narrow.detail.find("N=8: 9 points"), std::string::npos) << narrow.detail;
  const auto enough = judge("poly.k_edge_vs_N", "k_sweep", edge_rows(0.5, 3, 0.11));
  EXPECT_EQ(enough.verdict, Verdict::holds) << enough.detail;
}

// REPOLY's band, k from 8/14 to 25/14 sqrt(N): on a plateau starting at 0.5 sqrt(N) (below the band) it holds; on one
// starting at 3 sqrt(N) the band's lower end lies 0.4 x clamp(log10(3 x 14/8), 0, 1) = 0.29 under the top, above
// delta = 0.2 (half the range): violated; a task without range cannot show it.
TEST(TrainingClaims, ScaleBandIsJudgedAgainstThePlateau) {
  const auto inside = judge("poly.k_band", "k_sweep", edge_rows(0.5, 0.5, 0.4));
  EXPECT_EQ(inside.verdict, Verdict::holds) << inside.detail;
  EXPECT_LT(inside.measured, 0.2) << "under delta at the N that decides: " << inside.detail;
  // The estimate is the N that loses most over the band (N = 8's 3.51 points here, N = 256's 1.25 the least).
  EXPECT_NE(inside.detail.find("the estimate is N=8's"), std::string::npos) << inside.detail;
  EXPECT_NE(inside.detail.find(text("N=8: ", sig(100 * inside.measured, 3), " [")), std::string::npos) << inside.detail;
  const auto outside = judge("poly.k_band", "k_sweep", edge_rows(0.5, 3, 0.4));
  EXPECT_EQ(outside.verdict, Verdict::violated) << outside.detail;
  EXPECT_GT(outside.measured, 0.2) << outside.detail;
  const auto narrow = judge("poly.k_band", "k_sweep", edge_rows(0.5, 0.5, 0.09));
  EXPECT_EQ(narrow.verdict, Verdict::inconclusive);
  EXPECT_NE(narrow.detail.find("the task cannot show it"), std::string::npos) << narrow.detail;
}

// A curve level at content-free attention's accuracy over the whole band loses nothing there, but trained at no k: it
// is no plateau, and the band that holds at every other N is inconclusive (it read level, holds, before).
TEST(TrainingClaims, ScaleBandOfACurveThatNeverTrainsIsInconclusive) {
  auto rows = edge_rows(0.5, 0.5, 0.4);
  for (auto& r : rows)
    if (r.N == 256 && r.activation == "x^3/k") r.value = {1, 0, 0.4, 0, 0.4, 0.4};  // uniform's level
  const auto out = judge("poly.k_band", "k_sweep", rows);
  EXPECT_EQ(out.verdict, Verdict::inconclusive) << out.detail;
  EXPECT_LT(std::abs(out.measured), 1e-9) << "level over the band: " << out.detail;
  EXPECT_NE(out.detail.find("against 20 (trained at no k)"), std::string::npos) << out.detail;
}

// On a plateau that covers the whole grid the band loses nothing, and the interval holds that estimate: each draw is
// read at the fit's best point (a draw's own maximum over 13 noisy equals lay above it, and the interval missed 0).
TEST(TrainingClaims, ScaleBandIntervalHoldsItsEstimateOnAFlatPlateau) {
  const auto out = judge("poly.k_band", "k_sweep", edge_rows(0.5, 1e-4, 0.4));
  EXPECT_EQ(out.verdict, Verdict::holds) << out.detail;
  EXPECT_LT(std::abs(out.measured), 1e-9) << out.detail;
  EXPECT_LE(out.ci_lo, out.measured) << out.detail;
  EXPECT_GE(out.ci_hi, out.measured) << out.detail;
}

// An edge below the grid (the first k already within δ of the best) only bounds k_edge: censored, inconclusive.
TEST(TrainingClaims, PlateauEdgeBelowTheGridIsCensored) {
  const auto out = judge("poly.k_edge_vs_N", "k_sweep", edge_rows(0.5, 1e-4, 0.4));
  EXPECT_EQ(out.verdict, Verdict::inconclusive) << out.detail;
  EXPECT_NE(out.detail.find("the edge lies beyond the grid for N = 8"), std::string::npos) << out.detail;
  EXPECT_NE(out.detail.find("N=8: below the grid"), std::string::npos) << out.detail;
}

// A curve that stays at content-free attention's level at every k (its best under that level plus δ) has no plateau
// in the grid: its edge lies above it (it read "below the grid" before, every point being within δ of a best at
// chance). Only bounded there, the largest N still bounds the exponent from below: clamped to the grid's last log k,
// 3, from its law's 0.5 log 256 + log 3 − 0.5, it adds its shift times (log 256 − mean log N) / Σ (log N − mean)² to
// the slope 0.5, which lies beyond the band. A smallest N that never trains either pulls the other way: no bound.
TEST(TrainingClaims, PlateauEdgeOfACurveThatNeverTrainsIsAboveTheGrid) {
  const std::vector<double> log_n{std::log10(8.0), std::log10(16.0), std::log10(64.0), std::log10(256.0)};
  const double mean = std::accumulate(log_n.begin(), log_n.end(), 0.0) / 4;
  double sxx = 0;
  for (double x : log_n) sxx += (x - mean) * (x - mean);
  const double shift = 3 - (0.5 * log_n[3] + std::log10(3.0) - 0.5);
  const double bound = 0.5 + shift * (log_n[3] - mean) / sxx;
  const auto never_trains = [](std::vector<ResultRow>& rows, Index n) {
    for (auto& r : rows)
      if (r.N == n && r.activation == "x^3/k") r.value = {1, 0, 0.4, 0, 0.4, 0.4};  // the ramp's floor, uniform's level
  };
  auto rows = edge_rows(0.5, 3, 0.4);
  never_trains(rows, 256);
  const auto out = judge("poly.k_edge_vs_N", "k_sweep", rows);
  EXPECT_EQ(out.verdict, Verdict::violated) << out.detail;
  EXPECT_TRUE(test::close(out.ci_lo, bound, 0.02, 0)) << "bound " << bound << ": " << out.detail;
  EXPECT_EQ(out.ci_hi, HUGE_VAL) << out.detail;
  EXPECT_NE(out.detail.find("N=256: above the grid (trained at no k)"), std::string::npos) << out.detail;
  EXPECT_NE(out.detail.find("the edge lies beyond the grid for N = 256"), std::string::npos) << out.detail;
  never_trains(rows, 8);
  const auto both = judge("poly.k_edge_vs_N", "k_sweep", rows);
  EXPECT_EQ(both.verdict, Verdict::inconclusive) << both.detail;
  EXPECT_EQ(both.ci_lo, -HUGE_VAL) << both.detail;
  EXPECT_EQ(both.ci_hi, HUGE_VAL) << both.detail;
}

namespace {

// The recall task read at its query token (recall-query/k_sweep, unit init): per N, 8 seeds at log k = m_N ± 0.25,
// ± 0.75, ± 1.25 with m_N = log10 3 + b log10 N, of which `retrieving` (0, 0, 2, 6, 8, 8 of 8) end at softmax's 0.8
// and the others at uniform's 0.4; controls of a 40-point range.
std::vector<ResultRow> retrieval_rows(double b, const std::vector<std::uint64_t>& retrieving = {0, 0, 2, 6, 8, 8}) {
  const std::vector<double> offsets{-1.25, -0.75, -0.25, 0.25, 0.75, 1.25};
  std::vector<ResultRow> rows = control_rows(0.4);
  for (Index N : kSweepSizes)
    for (std::size_t i = 0; i < offsets.size(); ++i)
      for (std::uint64_t seed = 1; seed <= 8; ++seed) {
        const double log_k = std::log10(3.0) + b * std::log10(double(N)) + offsets[i];
        auto r = accuracy_row("x^3/k", N, seed <= retrieving[i] ? 0.8 : 0.4, seed, 2000, {{"function", "poly"}});
        r.p = 3, r.k = KScale{false, std::pow(10, log_k)};
        rows.push_back(r);
      }
  for (auto& r : rows) r.extra.insert(r.extra.end(), {{"init", "unit"}, {"readout", "last"}});
  return rows;
}

constexpr const char* kRetrievalClaim = "poly.k_retrieval_vs_N.unit.recall_query";
constexpr const char* kRecallQuerySweep = "recall-query/k_sweep";

}  // namespace

// The design is symmetric about each m_N (the runs at m + t and m - t retrieve in complementary shares), and so is
// Firth's penalised likelihood: the shared-slope fit puts every half-point on m_N and the exponent on b.
TEST(TrainingClaims, RetrievalHalfPointRecoversTheConstructedExponent) {
  for (const auto& [b, verdict] : std::vector<std::pair<double, Verdict>>{
           {0.5, Verdict::holds}, {0.0, Verdict::violated}, {1.5, Verdict::violated}}) {
    const auto out = judge(kRetrievalClaim, kRecallQuerySweep, retrieval_rows(b));
    EXPECT_TRUE(test::close(out.measured, b, 1e-8, 1e-8)) << "b = " << b << ": " << out.detail;
    EXPECT_LE(out.ci_lo, b);
    EXPECT_GE(out.ci_hi, b);
    EXPECT_EQ(out.verdict, verdict) << "b = " << b << ": " << out.detail;
    ASSERT_EQ(out.evidence.size(), 4u);
    for (std::size_t c = 0; c < 4; ++c)
      EXPECT_TRUE(test::close(std::log10(out.evidence[c].value.mean),
                              std::log10(3.0) + b * std::log10(double(kSweepSizes[c])), 1e-8, 1e-8))
          << out.detail;
    EXPECT_NE(out.detail.find("N=8: 40 points (softmax 80%, uniform 40%, off 39%)"), std::string::npos) << out.detail;
    if (b == 0) {  // k = 3 × 10^offset at every N
      EXPECT_NE(out.markdown.find("| 0.169: 0/8, 0.533: 0/8, 1.69: 2/8, 5.33: 6/8, 16.9: 8/8, 53.3: 8/8 |"),
                std::string::npos)
          << out.markdown;
    }
  }
}

// At N = 8 every run retrieves: its half-point lies below its grid, and N = 8, under the mean log N, can only have
// pulled each replicate's slope down from the one through its grid's first k, log10 3 + 0.5 log10 8 - 1.25: the
// interval is bounded below only, by at most that slope, 0.5 + 1.25 (mean log N - log10 8) / Σ (log N - mean)².
TEST(TrainingClaims, RetrievalAtEveryKBoundsTheExponent) {
  const std::vector<double> log_n{std::log10(8.0), std::log10(16.0), std::log10(64.0), std::log10(256.0)};
  const double mean = std::accumulate(log_n.begin(), log_n.end(), 0.0) / 4;
  double sxx = 0;
  for (double x : log_n) sxx += (x - mean) * (x - mean);
  const double bound = 0.5 + 1.25 * (mean - log_n[0]) / sxx;
  auto rows = retrieval_rows(0.5);
  for (auto& r : rows)
    if (r.N == 8 && r.activation == "x^3/k") r.value = {1, 0, 0.8, 0, 0.8, 0.8};
  const auto out = judge(kRetrievalClaim, kRecallQuerySweep, rows);
  EXPECT_EQ(out.verdict, Verdict::violated) << out.detail;
  EXPECT_GT(out.ci_lo, 0.75) << out.detail;
  EXPECT_LE(out.ci_lo, bound) << "bound " << bound << ": " << out.detail;
  EXPECT_EQ(out.ci_hi, HUGE_VAL) << out.detail;
  EXPECT_NE(out.detail.find("N=8: below the grid (every run retrieves)"), std::string::npos) << out.detail;
  EXPECT_NE(out.detail.find("the half-point lies at an end of the grid for N = 8 "), std::string::npos) << out.detail;
}

// Runs that retrieve at small k and fail at large k have no half-point for a rising logistic: inconclusive, said so.
TEST(TrainingClaims, RetrievalThatFallsWithKLocatesNoHalfPoint) {
  const auto out = judge(kRetrievalClaim, kRecallQuerySweep, retrieval_rows(0.5, {8, 8, 6, 2, 0, 0}));
  EXPECT_EQ(out.verdict, Verdict::inconclusive) << out.detail;
  EXPECT_TRUE(std::isnan(out.measured)) << out.detail;
  EXPECT_NE(out.detail.find("N=8: not located"), std::string::npos) << out.detail;
  EXPECT_NE(out.detail.find("retrieval does not rise with k"), std::string::npos) << out.detail;
}

namespace {

// k_sweep_rows at N = 10^1..10^4, where sqrt(N) lies on the half-decade grid, with controls of a 40-point range.
std::vector<ResultRow> interaction_rows(double b, double noise) {
  const std::vector<Index> sizes{10, 100, 1000, 10000};
  auto rows = k_sweep_rows(b, 0.1, 1, sizes, noise);
  const auto controls = control_rows(0.4, sizes);
  rows.insert(rows.end(), controls.begin(), controls.end());
  return rows;
}

}  // namespace

// For the parabola 0.8 - a (log k - b L)² with L = log10 N, accuracy at k = sqrt(N) minus at k = 1 is a L² (b - 1/4),
// whose least-squares slope on L = 1..4 is 5 a (b - 1/4) exactly (crossing_noise cancels in the seeds' mean). A best k
// like sqrt(N) gains, a best k fixed at 1 loses, and b = 1/4 neither: inside the margin with little noise (violated:
// no growth), across it with much (inconclusive).
TEST(TrainingClaims, InteractionOfSqrtNWithNIsAPairedSlope) {
  for (const auto& [b, noise, verdict] :
       std::vector<std::tuple<double, double, Verdict>>{{0.5, 1e-3, Verdict::holds},
                                                        {0.0, 1e-3, Verdict::violated},
                                                        {0.25, 1e-3, Verdict::violated},
                                                        {0.25, 8e-3, Verdict::inconclusive}}) {
    const auto out = judge("poly.k_interaction_vs_N", "k_sweep", interaction_rows(b, noise));
    EXPECT_TRUE(test::close(out.measured, 5 * 0.1 * (b - 0.25), 1e-9, 1e-9)) << "b = " << b << ": " << out.detail;
    EXPECT_LE(out.ci_lo, out.measured);
    EXPECT_GE(out.ci_hi, out.measured);
    EXPECT_EQ(out.verdict, verdict) << "b = " << b << ", noise " << noise << ": " << out.detail;
  }
  auto without_controls = interaction_rows(0.5, 1e-3);
  std::erase_if(without_controls, [](const ResultRow& r) { return r.activation != "x^3/k"; });
  const auto blind = judge("poly.k_interaction_vs_N", "k_sweep", without_controls);
  EXPECT_EQ(blind.verdict, Verdict::inconclusive);
  EXPECT_NE(blind.detail.find("the task cannot show it"), std::string::npos) << blind.detail;
}

// The rules the training campaign is judged by, as committed before its points: a change shows here, and must be said.
TEST(TrainingClaims, TheCampaignsRulesArePinned) {
  const std::map<std::string, double> pinned{{"sqrt_exponent_band", 0.25},
                                             {"censored_draw_share", 0.025},
                                             {"plateau_edge_delta", 0.5},
                                             {"min_dynamic_range", 0.10},
                                             {"interaction_margin", 0.02}};
  std::map<std::string, double> read;
  for (const char* id : {"poly.k_vs_N", "poly.k_edge_vs_N", "poly.k_interaction_vs_N"}) {
    const auto out = judge(id, "k_sweep",
                           id == std::string("poly.k_vs_N") ? k_sweep_rows(0.5, 0.1) : interaction_rows(0.5, 1e-3));
    for (const auto* t : out.thresholds) read[t->name] = t->value;
  }
  for (const auto& [name, value] : pinned) {
    ASSERT_TRUE(read.contains(name)) << name << " is no longer read by the k-sweep claims";
    EXPECT_EQ(read.at(name), value) << name;
  }
}

TEST(TrainingClaims, MissingSweepIsInconclusiveAndSaysWhatToRun) {
  const auto out = judge("poly.k_vs_N", "other", {});
  EXPECT_EQ(out.verdict, Verdict::inconclusive);
  EXPECT_NE(out.detail.find("studies/k_sweep"), std::string::npos) << out.detail;
}

namespace {

std::string label(const std::string& name, int p, const std::string& k) {
  ActivationSpec a{name, p, KScale::parse(k), Convention::inside};
  return a.label();
}

// Three seeds of every Table-1 activation at N = 64 and 256 around the given means, ±c·0.1 points with c = 1, 2 or 3
// by the label's length (softmax's 2): paired differences keep a spread, so a tie stays a tie.
// With the controls uniform and off `range` under softmax at each N (none for range 0), marked as controls.
std::vector<ResultRow> table_rows(const std::map<std::string, double>& means, double range = 0.4) {
  std::vector<ResultRow> rows;
  for (Index N : {64, 256}) {
    for (const auto& [activation, mean] : means) {
      const double c = double(activation.size() % 3 + 1);
      for (std::uint64_t seed : {1, 2, 3})
        rows.push_back(accuracy_row(activation, N, mean + 0.001 * c * (double(seed) - 2), seed, 10000));
    }
    if (range > 0)
      for (const char* control : {"uniform", "off"})
        for (std::uint64_t seed : {1, 2, 3})
          rows.push_back(accuracy_row(control, N, means.at("softmax") - range, seed, 10000,
                                      {{"function", control}, {"control", "yes"}}));
  }
  return rows;
}

std::map<std::string, double> paper_ordering() {
  return {{"softmax", 0.70},
          {label("poly", 3, "sqrtN"), 0.71},
          {label("poly", 3, "1"), 0.60},
          {label("poly", 1, "sqrtN"), 0.65},
          {label("poly", 1, "1"), 0.50},
          {label("poly", 5, "sqrtN"), 0.55},
          {label("poly-learned", 3, "sqrtN"), 0.72}};
}

}  // namespace

TEST(TrainingClaims, TableOrderingOfThePaperHolds) {
  const auto rows = table_rows(paper_ordering());
  const auto table1 = judge("poly.table1", "activation_table", rows);
  EXPECT_EQ(table1.verdict, Verdict::holds) << table1.detail;
  EXPECT_EQ(table1.measured, 6) << "three relations at two N";
  EXPECT_NE(table1.markdown.find("| softmax | 70 ± 0.2 | 70 ± 0.2 | 50.26 |"), std::string::npos) << table1.markdown;
  const auto scales = judge("poly.scales_table", "activation_table", rows);
  EXPECT_EQ(scales.verdict, Verdict::holds) << scales.detail;
  EXPECT_EQ(scales.claimed, 6) << "x and x^3 scaled against unscaled, learned x^3 against fixed, at two N";
  const auto high = judge("poly.high_p", "activation_table", rows);
  EXPECT_EQ(high.verdict, Verdict::holds) << high.detail;
  EXPECT_NE(high.detail.find("x^5/sqrtN"), std::string::npos) << high.detail;
}

TEST(TrainingClaims, ReversedOrderingIsViolated) {
  auto means = paper_ordering();
  std::swap(means[label("poly", 3, "sqrtN")], means[label("poly", 3, "1")]);
  means[label("poly", 5, "sqrtN")] = 0.9;
  const auto rows = table_rows(means);
  EXPECT_EQ(judge("poly.table1", "activation_table", rows).verdict, Verdict::violated);
  EXPECT_EQ(judge("poly.scales_table", "activation_table", rows).verdict, Verdict::violated);
  EXPECT_EQ(judge("poly.high_p", "activation_table", rows).verdict, Verdict::violated);
}

// "Comparable" is an equivalence test: a paired difference of 1 point lies inside ±2, one of 5 points wholly outside it
// (contradicted, even though x^3/sqrtN is the better one), and one of 2 points straddles the edge (unresolved).
// POLY Tables 2 and 5: scaled x^2..x^5 level with softmax and scaled x two points below hold; x^5 five points below
// (a power that trains worse, as in our table) violates; RELU's relu/N level with softmax holds, five points below
// violates.
TEST(TrainingClaims, ScaledPowersAndReluAreComparedWithSoftmax) {
  std::map<std::string, double> means{{"softmax", 0.8}, {label("poly", 1, "sqrtN"), 0.78}, {"relu/N^1", 0.8}};
  for (int p = 2; p <= 5; ++p) means[label("poly", p, "sqrtN")] = 0.8;
  const auto level = judge("poly.scaled_vs_softmax", "activation_table", table_rows(means));
  EXPECT_EQ(level.verdict, Verdict::holds) << level.detail;
  EXPECT_EQ(level.claimed, 10) << "five relations at two N";
  EXPECT_EQ(judge("relu.matches_softmax", "activation_table", table_rows(means)).verdict, Verdict::holds);
  means[label("poly", 5, "sqrtN")] = 0.75;
  means["relu/N^1"] = 0.75;
  const auto fifth = judge("poly.scaled_vs_softmax", "activation_table", table_rows(means));
  EXPECT_EQ(fifth.verdict, Verdict::violated) << fifth.detail;
  EXPECT_NE(fifth.markdown.find("x^5/sqrtN (inside) − softmax at N=64: -5 points"), std::string::npos)
      << fifth.markdown;
  EXPECT_EQ(judge("relu.matches_softmax", "activation_table", table_rows(means)).verdict, Verdict::violated);
}

// Level with softmax says nothing on a task where content-free attention is level too: under a 10-point dynamic range
// "comparable" is not reproduced (the task cannot show it), while a gap wider than the margin still contradicts.
TEST(TrainingClaims, ComparableNeedsATaskThatCanShowIt) {
  std::map<std::string, double> means{{"softmax", 0.8}, {"relu/N^1", 0.8}};
  const auto narrow = judge("relu.matches_softmax", "activation_table", table_rows(means, 0.05));
  EXPECT_EQ(narrow.verdict, Verdict::inconclusive) << narrow.detail;
  EXPECT_NE(narrow.detail.find("2 comparable within the margin on a task whose dynamic range there is under 10 points"),
            std::string::npos)
      << narrow.detail;
  EXPECT_NE(narrow.detail.find("N=64: 5 points"), std::string::npos) << narrow.detail;
  EXPECT_EQ(judge("relu.matches_softmax", "activation_table", table_rows(means, 0)).verdict, Verdict::inconclusive)
      << "no controls: the range is not measured";
  EXPECT_EQ(judge("relu.matches_softmax", "activation_table", table_rows(means, 0.11)).verdict, Verdict::holds);
  means["relu/N^1"] = 0.75;
  EXPECT_EQ(judge("relu.matches_softmax", "activation_table", table_rows(means, 0.05)).verdict, Verdict::violated);
}

// REPOLY Table 5's ordering (ViT-Base's column) holds; a pointwise function above softmax (GELU at 80.0) contradicts
// "softmax above GELU"; one 0.01 points below it with a spread (ELU) resolves nothing with three seeds.
TEST(TrainingClaims, RepolyTable5OrdersThePointwiseFunctionsBelowSoftmax) {
  std::map<std::string, double> means{{"softmax", 0.796},
                                      {label("poly", 3, "sqrtN"), 0.796},
                                      {label("poly", 1, "sqrtN"), 0.769},
                                      {"relu", 0.773},
                                      {"elu", 0.782},
                                      {"gelu", 0.782},
                                      {"tanh", 0.771},
                                      {"exp", 0.779}};
  const auto paper = judge("poly.repoly_table5", "activation_table", table_rows(means));
  EXPECT_EQ(paper.verdict, Verdict::holds) << paper.detail;
  EXPECT_EQ(paper.claimed, 24) << "twelve relations at two N";
  means["gelu"] = 0.8;
  EXPECT_EQ(judge("poly.repoly_table5", "activation_table", table_rows(means)).verdict, Verdict::violated);
  means["gelu"] = 0.782, means["elu"] = 0.7959;
  EXPECT_EQ(judge("poly.repoly_table5", "activation_table", table_rows(means)).verdict, Verdict::inconclusive);
}

// RELU Fig 2 and 3 at alpha = 1: each h level with relu holds, one five points above it contradicts "no clear best";
// relu above identity holds, identity level with it resolves nothing; qk-layernorm within a point of without holds.
TEST(TrainingClaims, ReluAblationsCompareAtAlphaOne) {
  std::map<std::string, double> means{{"softmax", 0.8},        {"relu/N^1", 0.8},      {"relu2/N^1", 0.805},
                                      {"gelu/N^1", 0.795},     {"softplus/N^1", 0.8},  {"identity/N^1", 0.75},
                                      {"relu/N^1+qkln", 0.81}, {"relu2/N^1+qkln", 0.8}};
  EXPECT_EQ(judge("relu.no_best_h", "activation_table", table_rows(means)).verdict, Verdict::holds);
  EXPECT_EQ(judge("relu.activation_needed", "activation_table", table_rows(means)).verdict, Verdict::holds);
  EXPECT_EQ(judge("relu.qk_layernorm", "activation_table", table_rows(means)).verdict, Verdict::holds);
  means["gelu/N^1"] = 0.85, means["identity/N^1"] = 0.8, means["relu2/N^1+qkln"] = 0.7;
  EXPECT_EQ(judge("relu.no_best_h", "activation_table", table_rows(means)).verdict, Verdict::violated);
  EXPECT_EQ(judge("relu.activation_needed", "activation_table", table_rows(means)).verdict, Verdict::inconclusive);
  EXPECT_EQ(judge("relu.qk_layernorm", "activation_table", table_rows(means)).verdict, Verdict::violated);
}

namespace {

// Three seeds of each function at depths 1 and 2 around the given means (as table_rows), those in `diverged` with
// a diverged_at on every run.
std::vector<ResultRow> periodic_rows(const std::map<std::string, double>& means,
                                     const std::set<std::string>& diverged = {}) {
  std::vector<ResultRow> rows;
  for (Index depth : {1, 2})
    for (const auto& [activation, mean] : means) {
      const double c = double(activation.size() % 3 + 1);
      for (std::uint64_t seed : {1, 2, 3}) {
        ExtraColumns extra{{"depth", depth}};
        if (diverged.contains(activation)) extra.push_back({"diverged_at", 40});
        rows.push_back(accuracy_row(activation, 64, mean + 0.001 * c * (double(seed) - 2), seed, 10000, extra));
      }
    }
  for (Index depth : {1, 2})  // the controls, 40 points under softmax
    for (const char* control : {"uniform", "off"})
      for (std::uint64_t seed : {1, 2, 3})
        rows.push_back(accuracy_row(control, 64, means.at("softmax") - 0.4, seed, 10000,
                                    {{"depth", depth}, {"function", control}, {"control", "yes"}}));
  return rows;
}

// PERIODIC Table 2 as the paper has it: the two best and prenormed Sirenmax two points above softmax, prenorm lifting
// softmax by one and leaving the two best level; the broken functions 30 points down.
std::map<std::string, double> periodic_table2() {
  std::map<std::string, double> means{{"softmax", 0.80},
                                      {"softmax+prenorm-released", 0.81},
                                      {"sin2max-shifted", 0.82},
                                      {"sin2max-shifted+prenorm-released", 0.815},
                                      {"sinsoftmax-released", 0.82},
                                      {"sinsoftmax-released+prenorm-released", 0.815},
                                      {"sirenmax+prenorm-released", 0.82}};
  for (const char* broken : {"cosmax", "sin2max-released", "sirenmax", "sinmax-constant", "cosmax+prenorm-released",
                             "sinmax-constant+prenorm-released"})
    means[broken] = 0.5;
  return means;
}

}  // namespace

// Each relation is judged at each depth; a breakdown is a lead of softmax above breakdown_accuracy_gap or a run that
// diverged in every seed (whatever its accuracy); a function that trains level with softmax contradicts it, and one
// diverged in some seeds only resolves nothing.
TEST(TrainingClaims, PeriodicTable2RanksAndBreakdownsPerDepth) {
  auto means = periodic_table2();
  const auto ranking = judge("periodic.table2", "periodic_table", periodic_rows(means));
  EXPECT_EQ(ranking.verdict, Verdict::holds) << ranking.detail;
  EXPECT_EQ(ranking.claimed, 12) << "six relations at two depths";
  EXPECT_NE(ranking.markdown.find("| softmax | 80 ± 0.2 | 52.67 | 80 ± 0.2 | 58.21 |"), std::string::npos)
      << ranking.markdown;
  const auto broken = judge("periodic.table2.breakdown", "periodic_table", periodic_rows(means));
  EXPECT_EQ(broken.verdict, Verdict::holds) << broken.detail;
  EXPECT_EQ(broken.claimed, 12) << "six breakdowns at two depths";

  means["cosmax"] = 0.8;
  EXPECT_EQ(judge("periodic.table2.breakdown", "periodic_table", periodic_rows(means)).verdict, Verdict::violated);
  EXPECT_EQ(judge("periodic.table2.breakdown", "periodic_table", periodic_rows(means, {"cosmax"})).verdict,
            Verdict::holds)
      << "every seed diverged: a breakdown at any accuracy";
  auto rows = periodic_rows(means);
  for (auto& r : rows)
    if (r.activation == "cosmax" && r.extra[0].second.str() == "1") r.extra.push_back({"diverged_at", 40});
  EXPECT_EQ(judge("periodic.table2.breakdown", "periodic_table", rows).verdict, Verdict::inconclusive);

  means = periodic_table2();
  means["sinsoftmax-released"] = 0.78;
  EXPECT_EQ(judge("periodic.table2", "periodic_table", periodic_rows(means)).verdict, Verdict::violated);
}

TEST(TrainingClaims, ComparableIsAnEquivalenceTest) {
  const auto comparable_at = [](double gap) {
    auto means = paper_ordering();
    means[label("poly", 3, "sqrtN")] = means["softmax"] + gap;
    means[label("poly-learned", 3, "sqrtN")] = means["softmax"] + gap + 0.01;
    const auto out = judge("poly.table1", "activation_table", table_rows(means));
    return out.markdown.substr(out.markdown.find("x^3/sqrtN (inside) − softmax at N=64"), 120);
  };
  EXPECT_NE(comparable_at(0.01).find(": reproduced"), std::string::npos) << comparable_at(0.01);
  EXPECT_NE(comparable_at(0.05).find(": contradicted"), std::string::npos) << comparable_at(0.05);
  EXPECT_NE(comparable_at(0.02).find(": unresolved"), std::string::npos) << comparable_at(0.02);
}

// Differences inside the seeds' spread resolve nothing.
TEST(TrainingClaims, TiesWithinTheSpreadAreInconclusive) {
  auto means = paper_ordering();
  means[label("poly", 3, "1")] = means[label("poly", 3, "sqrtN")];
  const auto out = judge("poly.table1", "activation_table", table_rows(means));
  EXPECT_EQ(out.verdict, Verdict::inconclusive) << out.detail;
  EXPECT_EQ(out.measured, 4);
}

namespace {

// Four (h, N) curves, the i-th (relu 16, relu 64, identity 16, identity 64) an exact parabola with its maximum at
// best_alpha(i), two seeds at ±4e-3 around it (crossing_noise); controls of a 40-point range at N = 16 and 64.
std::vector<ResultRow> alpha_rows(const std::function<double(int)>& best_alpha, double curvature = 0.2) {
  std::vector<ResultRow> rows = control_rows(0.4, {16, 64});
  int curve = 0;
  for (const char* h : {"relu", "identity"})
    for (Index N : {16, 64}) {
      const double best = best_alpha(curve++);
      for (int i = 0; i <= 8; ++i)
        for (std::uint64_t seed : {1, 2}) {
          const double a = 0.25 * i;
          rows.push_back(accuracy_row(text(h, "/N^", a), N,
                                      0.7 - curvature * (a - best) * (a - best) + crossing_noise(i, seed, 4e-3), seed,
                                      10000, {{"h", h}, {"alpha", a}}));
        }
    }
  return rows;
}
std::vector<ResultRow> alpha_rows(double best_alpha, double curvature = 0.2) {
  return alpha_rows([best_alpha](int) { return best_alpha; }, curvature);
}

}  // namespace

TEST(TrainingClaims, BestAlphaIsRecoveredAndJudgedAgainstOne) {
  const auto near_one = judge("relu.alpha_sweep", "alpha_sweep", alpha_rows(1.1));
  EXPECT_TRUE(test::close(near_one.measured, 1.1, 1e-9, 1e-9));
  EXPECT_EQ(near_one.verdict, Verdict::holds) << near_one.detail;
  const auto far = judge("relu.alpha_sweep", "alpha_sweep", alpha_rows(0.3));
  EXPECT_TRUE(test::close(far.measured, 0.3, 1e-9, 1e-9));
  EXPECT_EQ(far.verdict, Verdict::violated) << far.detail;
  // A flat curve does not locate the best alpha, wherever its noisy maximum falls.
  const auto flat = judge("relu.alpha_sweep", "alpha_sweep", alpha_rows(1.0, 1e-6));
  EXPECT_EQ(flat.verdict, Verdict::inconclusive) << flat.detail;
}

// Only the curves at an N whose controls show a 10-point dynamic range are judged: without controls none is, and with
// N = 64's range narrowed to 5 points its two curves (best at 0.3, against 1.1 at N = 16) are left out and named.
TEST(TrainingClaims, BestAlphaIsJudgedWhereTheTaskCanShowIt) {
  const auto is_control = [](const ResultRow& r) {
    return r.activation == "softmax" || r.activation == "uniform" || r.activation == "off";
  };
  auto rows = alpha_rows([](int i) { return i % 2 ? 0.3 : 1.1; });
  auto without = rows;
  std::erase_if(without, is_control);
  const auto blind = judge("relu.alpha_sweep", "alpha_sweep", without);
  EXPECT_EQ(blind.verdict, Verdict::inconclusive) << blind.detail;
  EXPECT_NE(blind.detail.find("the task cannot show it: no N has a dynamic range of at least 10 points"),
            std::string::npos)
      << blind.detail;
  EXPECT_EQ(judge("relu.alpha_sweep", "alpha_sweep", rows).verdict, Verdict::inconclusive) << "two against two";
  for (auto& r : rows)
    if (is_control(r) && r.N == 64 && r.activation != "softmax") r.value = {1, 0, 0.75, 0, 0.75, 0.75};
  const auto narrowed = judge("relu.alpha_sweep", "alpha_sweep", rows);
  EXPECT_EQ(narrowed.verdict, Verdict::holds) << narrowed.detail;
  EXPECT_NE(narrowed.detail.find("2 curves at an N whose dynamic range is under 10 points left out"), std::string::npos)
      << narrowed.detail;
  EXPECT_NE(narrowed.detail.find("N=64: 5 points"), std::string::npos) << narrowed.detail;
}

// "Typically best near 1" is a majority of the (h, N) curves: three of four near 1 hold although the fourth is
// best at 0.3, three of four at 0.3 violate, and two against two is a majority neither way.
TEST(TrainingClaims, BestAlphaNearOneMustBeTypical) {
  const auto with_far = [](int far_curves) {
    return judge("relu.alpha_sweep", "alpha_sweep",
                 alpha_rows([far_curves](int i) { return i < far_curves ? 0.3 : 1.1; }));
  };
  const auto one_far = with_far(1);
  EXPECT_EQ(one_far.verdict, Verdict::holds) << one_far.detail;
  EXPECT_TRUE(test::close(one_far.measured, (0.3 + 3 * 1.1) / 4, 1e-9, 1e-9)) << "the mean best alpha";
  EXPECT_EQ(with_far(3).verdict, Verdict::violated);
  const auto split = with_far(2);
  EXPECT_EQ(split.verdict, Verdict::inconclusive) << split.detail;
  EXPECT_NE(split.detail.find("2 of 4 (h, N)"), std::string::npos) << split.detail;
}

// A best alpha at an end of the grid bounds it from one side only (censored). Three curves rising to alpha = 2 (their
// parabolas peak at 2.8) cannot say where they peak, but their intervals' lower ends lie far above 1.25: three lie
// wholly outside. A flat curve whose noisy maximum falls at an end reaches across the grid: neither inside nor outside.
TEST(TrainingClaims, BestAlphaAtTheEndOfTheGridBoundsItFromOneSide) {
  const auto rising = judge("relu.alpha_sweep", "alpha_sweep", alpha_rows([](int i) { return i == 0 ? 1.1 : 2.8; }));
  EXPECT_EQ(rising.verdict, Verdict::violated) << rising.detail;
  EXPECT_NE(rising.detail.find("1 of 4 (h, N)"), std::string::npos) << rising.detail;
  EXPECT_NE(rising.detail.find("3 lie wholly outside"), std::string::npos) << rising.detail;
  EXPECT_NE(rising.detail.find("never inside): identity at N = 16, identity at N = 64, relu at N = 64"),
            std::string::npos)
      << rising.detail;
  const auto falling = judge("relu.alpha_sweep", "alpha_sweep", alpha_rows(-0.5));
  EXPECT_EQ(falling.verdict, Verdict::violated) << falling.detail;
  EXPECT_NE(falling.detail.find("4 lie wholly outside"), std::string::npos) << falling.detail;
  const auto flat = judge("relu.alpha_sweep", "alpha_sweep", alpha_rows(-0.5, 1e-6));
  EXPECT_EQ(flat.verdict, Verdict::inconclusive) << flat.detail;
  EXPECT_NE(flat.detail.find("0 lie wholly outside"), std::string::npos) << flat.detail;
}

namespace {

ResultRow norm_row(const std::string& quantity, const std::string& activation, int p, const std::string& k, long step,
                   int layer, double value, std::uint64_t seed = 1) {
  ResultRow r;
  r.quantity = quantity;
  r.activation = activation;
  r.N = 16, r.D = 16, r.d = 8, r.p = p;
  if (!k.empty()) r.k = KScale::parse(k);
  r.value = {1, 0, value, 0, value, value};
  r.extra = {{"seed", seed}, {"function", p > 0 ? "poly" : activation},
             {"step", step}, {"layer", layer},
             {"tokens", 17}, {"weight_std", 0.02}};
  return r;
}

// Norms of softmax, x³/√N and x³ whose ratios to softmax are `scaled` and `unscaled` at every step and layer, seed 1's
// e^0.01 times that and seed 2's e^-0.01 times (geometric mean over the seeds: the ratio itself; 95% interval: the
// ratio times e^(±0.01 t(0.975, 1)), a factor 1.14).
std::vector<ResultRow> norm_rows(double scaled, double unscaled) {
  std::vector<ResultRow> rows;
  for (std::uint64_t seed : {1, 2})
    for (long step : {0L, 10L, 20L})
      for (int layer : {1, 2})
        for (const char* q : {"phi_fro", "jacobian_fro"}) {
          const double base = 1.0 + 0.1 * double(step) + layer + double(seed), off = std::exp(seed == 1 ? 0.01 : -0.01);
          rows.push_back(norm_row(q, "softmax", 0, "", step, layer, base, seed));
          rows.push_back(norm_row(q, label("poly", 3, "sqrtN"), 3, "sqrtN", step, layer, scaled * base * off, seed));
          rows.push_back(norm_row(q, label("poly", 3, "1"), 3, "1", step, layer, unscaled * base * off, seed));
        }
  return rows;
}

}  // namespace

TEST(TrainingClaims, TrainingNormRatiosDecideTheVerdict) {
  const auto holds = judge("poly.train_norms", "training_norms", norm_rows(1.5, 12));
  EXPECT_EQ(holds.verdict, Verdict::holds) << holds.detail;
  EXPECT_TRUE(test::close(holds.measured, 1.5, 1e-12, 0));
  EXPECT_EQ(judge("poly.train_norms", "training_norms", norm_rows(10, 12)).verdict, Verdict::violated);
  EXPECT_EQ(judge("poly.train_norms", "training_norms", norm_rows(1.5, 1.2)).verdict, Verdict::violated);
}

// A norm claim judges no accuracy, but names its task and the dynamic range its sweep's softmax runs (in the grid) and
// content-free controls give: 80% against uniform mixing's 60% and attention off's 10% is 20 points.
TEST(TrainingClaims, NormClaimsNameTheirTaskAndDynamicRange) {
  auto rows = norm_rows(1.5, 12);
  const auto bare = judge("poly.train_norms", "training_norms", rows);
  EXPECT_NE(bare.detail.find("task: Fashion-MNIST"), std::string::npos) << bare.detail;
  EXPECT_NE(bare.detail.find("dynamic range not measured"), std::string::npos) << bare.detail;
  for (const auto& [function, accuracy] : {std::pair{"softmax", 0.8}, {"uniform", 0.6}, {"off", 0.1}})
    for (std::uint64_t seed : {1, 2}) {
      auto r = accuracy_row(function, 16, accuracy, seed, 10000, {{"function", function}});
      if (std::string(function) != "softmax") r.extra.push_back({"control", "yes"});
      rows.push_back(r);
    }
  for (const char* id : {"poly.train_norms", "poly.iid_at_init"}) {
    const auto out = judge(id, "training_norms", rows);
    EXPECT_NE(out.detail.find("task: Fashion-MNIST"), std::string::npos) << id << ": " << out.detail;
    EXPECT_NE(out.detail.find("N=16: 20 points (softmax 80%, uniform 60%, off 10%)"), std::string::npos)
        << id << ": " << out.detail;
  }
  EXPECT_EQ(judge("poly.train_norms", "training_norms", rows).verdict, bare.verdict) << "the range decides nothing";
}

// The ratios are equivalence tests on intervals over seeds: one seed gives none, and a seed spread that carries the
// scaled ratio's interval across the level's edge (3) decides nothing. Ratio 2.8 with seeds at e^(±0.01): [2.46, 3.19].
TEST(TrainingClaims, TrainingNormRatiosAreJudgedOnTheirIntervalOverSeeds) {
  const auto near_edge = judge("poly.train_norms", "training_norms", norm_rows(2.8, 12));
  EXPECT_EQ(near_edge.verdict, Verdict::inconclusive) << near_edge.detail;
  EXPECT_TRUE(test::close(near_edge.measured, 2.8, 1e-12, 0));
  EXPECT_TRUE(test::close(near_edge.ci_hi, 2.8 * std::exp(0.01 * student_t_quantile(0.975, 1)), 1e-9, 0))
      << near_edge.detail;
  auto one_seed = norm_rows(1.5, 12);
  std::erase_if(one_seed, [](const ResultRow& r) { return r.extra[0].second.str() == "2"; });
  const auto alone = judge("poly.train_norms", "training_norms", one_seed);
  EXPECT_EQ(alone.verdict, Verdict::inconclusive) << alone.detail;
  EXPECT_NE(alone.detail.find("fewer than two seeds"), std::string::npos) << alone.detail;
}

// Under unit logits x^3/sqrtN is judged on what training adds to its step-0 ratio: twenty times softmax from step 0 on
// adds nothing (holds), where timm's rule would call it far from softmax's level; lifted from 20 to 200 by training, it
// is violated.
TEST(TrainingClaims, UnitNormRatiosAreJudgedOnWhatTrainingAdds) {
  const auto under_unit = [](std::vector<ResultRow> rows) {
    for (auto& r : rows) r.extra.emplace_back("init", "unit");
    return judge("poly.train_norms.unit", "training_norms", rows);
  };
  const auto unchanged = under_unit(norm_rows(20, 60));
  EXPECT_EQ(unchanged.verdict, Verdict::holds) << unchanged.detail;
  EXPECT_TRUE(test::close(unchanged.measured, 1, 1e-12, 1e-12)) << unchanged.detail;
  EXPECT_EQ(judge("poly.train_norms", "training_norms", norm_rows(20, 60)).verdict, Verdict::violated);
  auto lifted = norm_rows(20, 60);
  for (auto& r : lifted)
    if (r.p == 3 && r.k->str() == "sqrtN" && r.extra[2].second.str() != "0") r.value.mean *= 10;
  const auto out = under_unit(lifted);
  EXPECT_EQ(out.verdict, Verdict::violated) << out.detail;
  EXPECT_TRUE(test::close(out.measured, 10, 1e-12, 0)) << out.detail;
}

// ViT-Tiny's claim reads results/vit-tiny/'s rows alone, and the sweeps' model's claim never reads them.
TEST(TrainingClaims, VitTinyNormsAreJudgedFromTheirOwnFolder) {
  const auto tiny = judge("poly.train_norms.vit_tiny", "vit-tiny/training_norms", norm_rows(10, 12));
  EXPECT_EQ(tiny.verdict, Verdict::violated) << tiny.detail;
  EXPECT_NE(tiny.figures.at(0).name.find("_vit_tiny"), std::string::npos) << tiny.figures.at(0).name;
  EXPECT_EQ(judge("poly.train_norms.vit_tiny", "training_norms", norm_rows(10, 12)).verdict, Verdict::inconclusive);
  const auto small = judge("poly.train_norms", "vit-tiny/training_norms", norm_rows(1.5, 12));
  EXPECT_EQ(small.verdict, Verdict::inconclusive) << small.detail;
  EXPECT_NE(small.detail.find("no training_norms results"), std::string::npos) << small.detail;
}

// The ratios are taken over the second half of the run: x^3/sqrtN twenty times softmax at step 0 only still
// reaches softmax level (over all three steps the geometric mean would be (20 1.5 1.5)^(1/3) = 3.6, above 3).
TEST(TrainingClaims, TrainingNormRatiosSkipTheFirstHalfOfTheRun) {
  auto rows = norm_rows(1.5, 12);
  for (auto& r : rows)
    if (r.p == 3 && r.k->str() == "sqrtN" && r.extra[2].second.str() == "0") r.value.mean *= 20 / 1.5;
  const auto out = judge("poly.train_norms", "training_norms", rows);
  EXPECT_EQ(out.verdict, Verdict::holds) << out.detail;
  EXPECT_TRUE(test::close(out.measured, 1.5, 1e-12, 0));
  EXPECT_NE(out.detail.find("steps 10..20"), std::string::npos) << out.detail;
}

// A ratio that is not finite at the judged N (x³'s norms NaN, as when every seed diverged) decides nothing.
TEST(TrainingClaims, TrainingNormRatiosThatAreNotFiniteDecideNothing) {
  auto rows = norm_rows(1.5, 12);
  for (auto& r : rows)
    if (r.p == 3 && r.k->str() == "1") r.value.mean = std::nan("");
  const auto out = judge("poly.train_norms", "training_norms", rows);
  EXPECT_EQ(out.verdict, Verdict::inconclusive) << out.detail;
  EXPECT_NE(out.detail.find("fewer than two seeds with finite ratios"), std::string::npos) << out.detail;
}

// A run that diverged ends its series early: its own last step is its drift, and nothing is looked up past it.
TEST(TrainingClaims, DivergedRunsEndTheirOwnSeries) {
  auto rows = norm_rows(1.5, 12);
  std::erase_if(rows,
                [](const ResultRow& r) { return r.p == 3 && r.k->str() == "1" && r.extra[2].second.str() == "20"; });
  const auto out = judge("poly.iid_at_init", "training_norms", rows);
  EXPECT_FALSE(out.markdown.empty()) << out.detail;
  EXPECT_EQ(judge("poly.train_norms", "training_norms", rows).verdict, Verdict::holds);
}

// Step-0 norms equal to the engine's own estimate for the same shapes agree exactly; half of it does not.
TEST(TrainingClaims, StepZeroNormsAreComparedWithTheMonteCarloPrediction) {
  const auto rows_scaled_by = [](double factor) {
    std::vector<ResultRow> rows;
    for (const auto& [name, p, k] : {std::tuple{"softmax", 0, ""}, {"poly", 3, "sqrtN"}}) {
      ActivationSpec spec = p > 0 ? ActivationSpec{"poly", p, KScale{false, std::sqrt(16.0)}, Convention::inside}
                                  : ActivationSpec::parse(name);
      AttentionMcConfig mc{{17, 16, 8, 1.0, 0.02}, {spec}, test::seed(), 8, Precision::float64, "verify"};
      mc.exact_mean = theory::squared_norm_exact;  // as ClaimContext::attention_norms estimates it
      std::map<std::string, double> predicted;
      for (const auto& r : run_attention_norms(mc)) predicted[r.quantity] = r.value.mean;
      const std::string activation = p > 0 ? label("poly", 3, "sqrtN") : std::string("softmax");
      for (long step : {0L, 5L}) {
        rows.push_back(norm_row("phi_fro", activation, p, k, step, 1, factor * predicted["frob"] * (step ? 3 : 1)));
        rows.push_back(norm_row("jacobian_fro", activation, p, k, step, 1, factor * predicted["jac"]));
      }
    }
    return rows;
  };
  const auto agree = judge("poly.iid_at_init", "training_norms", rows_scaled_by(1.0));
  EXPECT_TRUE(test::close(agree.measured, 1.0, 1e-9, 0)) << agree.detail;
  EXPECT_EQ(agree.verdict, Verdict::holds) << agree.detail;
  EXPECT_NE(agree.markdown.find("| 1 | 3 |"), std::string::npos) << "the drift to 3x at the last step\n"
                                                                 << agree.markdown;
  const auto apart = judge("poly.iid_at_init", "training_norms", rows_scaled_by(0.5));
  EXPECT_TRUE(test::close(apart.measured, 0.5, 1e-9, 0));
  EXPECT_EQ(apart.verdict, Verdict::inexact);
}

namespace {

// Softmax, x³/√N and x³ norms at N = 8, 16, 64, 256 (two seeds, layers 1 and 2, steps 0 … 100) that follow
// c N^a by construction over the last tenth of each run, the seeds a factor e^0.05 either side of it;
// step 0 sits far off the law, so a fit that read the whole run would not recover a.
std::vector<ResultRow> growth_rows(double scaled_exponent, double unscaled_exponent) {
  std::vector<ResultRow> rows;
  for (Index n : {8, 16, 64, 256})
    for (const int seed : {1, 2})
      for (long step : {0L, 50L, 90L, 100L})
        for (int layer : {1, 2})
          for (const char* q : {"phi_fro", "jacobian_fro"})
            for (const auto& [activation, p, k, a] : {std::tuple{std::string("softmax"), 0, "", 0.1},
                                                      {label("poly", 3, "sqrtN"), 3, "sqrtN", scaled_exponent},
                                                      {label("poly", 3, "1"), 3, "1", unscaled_exponent}}) {
              const double wobble = std::exp(seed == 2 ? 0.05 : -0.05);
              const double value = step < 90 ? 1e3 : layer * std::pow(double(n), a) * wobble;
              auto r = norm_row(q, activation, p, k, step, layer, value);
              r.N = n;
              r.extra[0].second = seed;
              r.extra[4].second = n + 1;
              rows.push_back(r);
            }
  return rows;
}

}  // namespace

// Norms growing as Thm 4.2 and Cor 4.1 say (x³ like N, x³/√N like √N) hold, and the fitted exponent of x³/√N's
// ||ϕ||_F is the one constructed; x³/√N growing like N is half a power above its corollary and violates it.
TEST(TrainingClaims, NormGrowthInNIsFittedOverTheEndOfEachRun) {
  const auto holds = judge("poly.train_growth.timm", "training_norms", growth_rows(0.5, 1.0));
  EXPECT_EQ(holds.verdict, Verdict::holds) << holds.detail;
  EXPECT_TRUE(test::close(holds.measured, 0.5, 1e-9, 1e-9)) << holds.detail;
  EXPECT_LT(holds.ci_lo, 0.5);
  EXPECT_GT(holds.ci_hi, 0.5);
  const auto violated = judge("poly.train_growth.timm", "training_norms", growth_rows(1.0, 1.0));
  EXPECT_EQ(violated.verdict, Verdict::violated) << violated.detail;
  EXPECT_TRUE(test::close(violated.measured, 1.0, 1e-9, 1e-9));
  // Slower than the theorem (x³ flat in N) is loose, not violated: O(N) bounds the growth from above.
  EXPECT_EQ(judge("poly.train_growth.timm", "training_norms", growth_rows(0.5, 0.0)).verdict, Verdict::loose);
  // The rows carry no init column, so they are timm's: the unit regime has none.
  const auto unit = judge("poly.train_growth.unit", "training_norms", growth_rows(0.5, 1.0));
  EXPECT_EQ(unit.verdict, Verdict::inconclusive);
  EXPECT_NE(unit.detail.find("no training_norms rows trained under init unit"), std::string::npos) << unit.detail;
}

// Softmax's exponent is held against Thm 4.1's bound of 1/2 from above: an interval below it holds, one that straddles
// it (seeds scattering by e^±1.5) says nothing.
TEST(TrainingClaims, SoftmaxGrowthHoldsOnlyWithItsIntervalBelowTheBound) {
  const auto narrow = judge("poly.train_growth.timm", "training_norms", growth_rows(0.5, 1.0));
  EXPECT_NE(narrow.markdown.find("| <= 0.5 (bound) | holds |"), std::string::npos) << narrow.markdown;
  auto rows = growth_rows(0.5, 1.0);
  for (auto& r : rows)
    if (r.activation == "softmax" && r.extra[2].second.str() != "0")
      r.value.mean *= std::exp(r.extra[0].second.str() == "2" ? 1.5 : -1.5);
  const auto wide = judge("poly.train_growth.timm", "training_norms", rows);
  EXPECT_EQ(wide.markdown.find("| <= 0.5 (bound) | holds |"), std::string::npos) << wide.markdown;
  EXPECT_NE(wide.markdown.find("| <= 0.5 (bound) | inconclusive |"), std::string::npos) << wide.markdown;
}

// Two N cannot fit an exponent with an interval: fewer than three is inconclusive, whatever the values.
TEST(TrainingClaims, NormGrowthNeedsThreeSequenceLengths) {
  auto rows = growth_rows(0.5, 1.0);
  std::erase_if(rows, [](const ResultRow& r) { return r.N > 16; });
  const auto out = judge("poly.train_growth.timm", "training_norms", rows);
  EXPECT_EQ(out.verdict, Verdict::inconclusive) << out.detail;
  EXPECT_NE(out.markdown.find("fewer than 3 N"), std::string::npos) << out.markdown;
}

namespace {

// Softmax's largest per-matrix norms at N = 16 (T = 17 tokens), set to `ratio` times Thm 4.1's bounds at one
// (layer 2, step 10) and to half of them elsewhere.
std::vector<ResultRow> bound_rows(double ratio) {
  std::vector<ResultRow> rows;
  for (long step : {0L, 10L})
    for (int layer : {1, 2})
      for (const auto& [q, bound] :
           {std::pair{"phi_fro_max", std::sqrt(17.0)}, std::pair{"jacobian_fro_max", 2 * std::sqrt(17.0)}})
        rows.push_back(norm_row(q, "softmax", 0, "", step, layer, (step == 10 && layer == 2 ? ratio : 0.5) * bound));
  return rows;
}

}  // namespace

// Thm 4.1 on every logged matrix: the largest ratio decides (at the bound holds, above it is violated, far below
// is loose) and is located; runs without the per-matrix maxima are counted, not checked.
TEST(TrainingClaims, SoftmaxBoundsAreCheckedOnTheLargestLoggedMatrix) {
  const auto at = judge("poly.train_softmax_bounds", "training_norms", bound_rows(1.0));
  EXPECT_EQ(at.verdict, Verdict::holds) << at.detail;
  EXPECT_TRUE(test::close(at.measured, 1.0, 1e-12, 0));
  EXPECT_NE(at.detail.find("timm N = 16 seed 1, layer 2, step 10"), std::string::npos) << at.detail;
  EXPECT_EQ(judge("poly.train_softmax_bounds", "training_norms", bound_rows(1.001)).verdict, Verdict::violated);
  // A one-hot softmax attains bound (6); its norm computed in float reads up to (T + 2) 2^-24 above it.
  EXPECT_EQ(judge("poly.train_softmax_bounds", "training_norms", bound_rows(1 + 19 * 0x1p-24)).verdict, Verdict::holds);
  const auto tiny = judge("poly.train_softmax_bounds", "vit-tiny/training_norms", bound_rows(1.001));
  EXPECT_EQ(tiny.verdict, Verdict::violated) << "ViT-Tiny's softmax matrices are checked too";
  EXPECT_NE(tiny.detail.find("vit-tiny, timm N = 16"), std::string::npos) << tiny.detail;
  EXPECT_EQ(judge("poly.train_softmax_bounds", "training_norms", bound_rows(0.6)).verdict, Verdict::loose);
  const auto none = judge("poly.train_softmax_bounds", "training_norms", norm_rows(1.5, 12));
  EXPECT_EQ(none.verdict, Verdict::inconclusive);
  EXPECT_NE(none.detail.find("predate"), std::string::npos) << none.detail;
}

// Each of the two bounds decides alone: the Jacobian's ratio above its bound, or far below it with the Frobenius bound
// attained, sets the verdict, and the measured column is then the Jacobian's ratio.
TEST(TrainingClaims, SoftmaxJacobianBoundDecidesAlone) {
  const auto with_jacobian = [](double ratio) {
    auto rows = bound_rows(1.0);
    for (auto& r : rows)
      if (r.quantity == "jacobian_fro_max")
        r.value.mean = ratio * 2 * std::sqrt(17.0), r.value.ci_lo = r.value.ci_hi = r.value.mean;
    return judge("poly.train_softmax_bounds", "training_norms", rows);
  };
  const auto above = with_jacobian(1.001), below = with_jacobian(0.25);
  EXPECT_EQ(above.verdict, Verdict::violated) << above.detail;
  EXPECT_TRUE(test::close(above.measured, 1.001, 1e-12, 0)) << above.detail;
  EXPECT_EQ(below.verdict, Verdict::loose) << below.detail;
  EXPECT_TRUE(test::close(below.measured, 0.25, 1e-12, 0)) << below.detail;
  EXPECT_NE(below.detail.find("measured: the Jacobian bound's ratio"), std::string::npos) << below.detail;
}
