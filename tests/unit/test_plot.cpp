// What gnuplot is told: axes fitted to the data, fits in the legend, a colour-blind-safe palette, figures with
// nothing finite drawn as such, and verify's figure with one row per claim.
#include <attnlab/core/text.hpp>
#include <attnlab/io/plot.hpp>
#include <attnlab/io/report.hpp>
#include <attnlab/mc/sweep.hpp>

#include "support.hpp"

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <limits>
#include <regex>
#include <set>
#include <sstream>

using namespace attnlab;

namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();

std::string script_of(const Figure& f) { return io::gnuplot_input(f, "d.dat", "f.png").script; }

// The [lo:hi] of "set <axis>range" in a script.
std::pair<double, double> range_of(const std::string& script, const std::string& axis) {
  std::smatch m;
  const std::regex re("set " + axis + "range \\[([^:]+):([^\\]]+)\\]");
  if (!std::regex_search(script, m, re)) throw std::runtime_error("no " + axis + "range in:\n" + script);
  return {std::stod(m[1]), std::stod(m[2])};
}

Figure sweep_figure() {
  return {.name = "sweep",
          .title = "t",
          .xlabel = "N",
          .ylabel = "y",
          .logx = true,
          .logy = true,
          .series = {{.label = "softmax",
                      .x = {8, 16, 32, 64},
                      .y = {2, 3, 5, 7},
                      .lo = {1.9, 2.9, 4.9, 6.9},
                      .hi = {2.1, 3.1, 5.1, 7.1}}}};
}

}  // namespace

// The x axis spans the data (N = 8..64), not the decades around it (1..100): padded by 3% of its log-width on each
// side, 8 / 2^(3 * 0.03) and 64 * 2^(3 * 0.03), with a tick at each N.
TEST(Plot, AxisRangesFollowTheData) {
  const auto script = script_of(sweep_figure());
  const auto [lo, hi] = range_of(script, "x");
  const double pad = std::pow(2.0, 3 * 0.03);
  EXPECT_TRUE(test::close(lo, 8 / pad, 1e-9, 0)) << script;
  EXPECT_TRUE(test::close(hi, 64 * pad, 1e-9, 0)) << script;
  EXPECT_NE(script.find("set xtics (8, 16, 32, 64)"), std::string::npos) << script;
}

// A log axis over a few percent of a decade (527..564, no 1-1.5-2-3-5-7 mark inside) still gets labelled tics: at
// a round linear step, each inside the drawn range.
TEST(Plot, NarrowLogAxisIsLabelled) {
  Figure f = sweep_figure();
  f.series[0] = {.label = "s", .x = {4, 16, 64, 256}, .y = {527.6, 563.2, 563.7, 563.8}};
  const auto script = script_of(f);
  const auto [lo, hi] = range_of(script, "y");
  std::smatch m;
  const std::string tics_line = "set ytics \\(([^)]*)\\)";
  ASSERT_TRUE(std::regex_search(script, m, std::regex(tics_line))) << script;
  std::vector<double> tics;
  std::istringstream list(m[1].str());
  for (std::string v; std::getline(list, v, ',');) tics.push_back(std::stod(v));
  ASSERT_GE(tics.size(), 3u) << script;
  for (double v : tics) {
    EXPECT_GE(v, lo) << script;
    EXPECT_LE(v, hi) << script;
    EXPECT_EQ(std::fmod(v, 5.0), 0.0) << script;  // a quarter of the drawn 525.9..565.7 is 9.96: a step of 5
  }
}

// A curve at the data's largest value stays off the frame (5% of the range above it); one interval reaching far
// below the points (to 1e-5) is cut at half the points' width below them instead of squashing them.
TEST(Plot, CurvesStayOffTheFrameAndOneWideBarDoesNotSquashTheRest) {
  Figure flat{.name = "bound", .series = {{.label = "N = 2", .x = {1, 2, 3}, .y = {0.25, 0.25, 0.1}}}};
  const auto [lo, hi] = range_of(script_of(flat), "y");
  EXPECT_TRUE(test::close(hi, 0.25 + 0.05 * 0.15, 1e-12, 1e-15));
  EXPECT_TRUE(test::close(lo, 0.1 - 0.05 * 0.15, 1e-12, 1e-15));

  Figure wide{
      .name = "wide",
      .logy = true,
      .series = {{.label = "a", .x = {1, 2, 3}, .y = {1, 1.5, 2}, .lo = {1e-5, 1.4, 1.9}, .hi = {1.1, 1.6, 2.1}}}};
  const auto [wlo, whi] = range_of(script_of(wide), "y");
  // A flat curve (1 within rounding, on a log axis) gets a decade around it, padded by 5%: gnuplot refuses [1:1].
  Figure one{.name = "flat", .logy = true, .series = {{.label = "r", .x = {0, 1, 2}, .y = {1, 1 + 2e-16, 1 - 1e-16}}}};
  const auto [flo, fhi] = range_of(script_of(one), "y");
  EXPECT_TRUE(test::close(flo, std::pow(10, -0.55), 1e-6, 0)) << flo;
  EXPECT_TRUE(test::close(fhi, std::pow(10, 0.55), 1e-6, 0)) << fhi;
  // Points span log10 2; the long bar may reach half of that below 1, the others end at 2.1; then 5% of the whole
  // width on each side.
  const double width = std::log10(2.1) + 0.5 * std::log10(2.0), bottom = -0.5 * std::log10(2.0) - 0.05 * width;
  EXPECT_TRUE(test::close(wlo, std::pow(10, bottom), 1e-9, 0)) << wlo;
  EXPECT_TRUE(test::close(whi, std::pow(10, std::log10(2.1) + 0.05 * width), 1e-9, 0)) << whi;
}

// A fitted series has its exponent and interval in its legend entry (3 significant digits) and a line c x^a.
TEST(Plot, FittedSlopeAndIntervalAreInTheLegend) {
  auto f = sweep_figure();
  f.series[0].fit = SeriesFit{.law = {.exponent = 0.4987, .ci_lo = 0.4712, .ci_hi = 0.5263, .prefactor = 0.7}};
  const auto in = io::gnuplot_input(f, "d.dat", "f.png");
  EXPECT_NE(in.script.find("title 'softmax: slope 0.499 [0.471, 0.526]'"), std::string::npos) << in.script;
  EXPECT_NE(in.script.find("index 1 using 1:2 with lines"), std::string::npos) << "the fitted line is drawn";
  // The line's block (after the series') starts at x = 8 with 0.7 * 8^0.4987.
  const auto line = in.data.substr(in.data.find("\n\n\n") + 3);
  std::istringstream first(line);
  double x = 0, y = 0;
  first >> x >> y;
  EXPECT_EQ(x, 8);
  EXPECT_TRUE(test::close(y, 0.7 * std::pow(8.0, 0.4987), 1e-9, 0));
}

// A reference slope N^s runs over the figure's N through the geometric mean of the curves at the smallest N (here
// sqrt(2 * 4) = 2.83 at N = 8, so 2.83 * 8^0.5 at N = 64), and is drawn last, dashed grey, with its own legend entry
// and without taking a colour from the data's palette.
TEST(Plot, ReferenceSlopesRunThroughTheCurvesAtTheSmallestNAndAreDrawnLast) {
  auto f = sweep_figure();
  f.series.push_back({.label = "x", .x = {8, 64}, .y = {4, 9}});
  f.series[0].fit = SeriesFit{.law = {.exponent = 0.5, .ci_lo = 0.4, .ci_hi = 0.6, .prefactor = 0.7}};
  add_reference_slopes(f, {0.5});
  ASSERT_EQ(f.series.size(), 3u);
  const auto& guide = f.series.back();
  EXPECT_TRUE(guide.reference);
  EXPECT_EQ(guide.x, (std::vector<double>{8, 64}));
  ASSERT_EQ(guide.y.size(), 2u);
  EXPECT_TRUE(test::close(guide.y[0], std::sqrt(8.0), 1e-12, 0));
  EXPECT_TRUE(test::close(guide.y[1], std::sqrt(8.0) * std::sqrt(8.0), 1e-12, 0));
  const auto script = script_of(f);
  const auto last = script.substr(script.rfind("\\\n"));
  EXPECT_NE(last.find("index 2 using 1:2 with lines lw 1.5 dt 2 lc rgb '#666666' title 'N^0.5 (reference)'"),
            std::string::npos)
      << script;
  EXPECT_NE(script.find("'#D55E00'"), std::string::npos) << "the second curve keeps the palette's second colour";
  Figure single{.name = "single", .series = {{.label = "one N", .x = {8}, .y = {1}}}};
  add_reference_slopes(single, {1});
  EXPECT_EQ(single.series.size(), 1u) << "no line through a single N";
}

// Okabe-Ito without yellow, a distinct colour for each of the first seven series; the eighth repeats a colour
// with a dashed line and another point shape.
TEST(Plot, PaletteIsColourBlindSafeWithoutFaintColours) {
  Figure f{.name = "many"};
  for (int i = 0; i < 8; ++i) f.series.push_back({.label = text("s", i), .x = {1, 2}, .y = {1.0 + i, 2.0 + i}});
  const auto script = script_of(f);
  EXPECT_EQ(script.find("#F0E442"), std::string::npos) << "Okabe-Ito's yellow is faint on white";
  std::set<std::string> colours;
  const std::regex re("lc rgb '(#[0-9A-F]{6})' pt (\\d+) ps 1 lw 1.5 dt (\\d)");
  std::vector<std::string> dash;
  std::set<std::pair<std::string, std::string>> colour_and_shape;
  for (auto it = std::sregex_iterator(script.begin(), script.end(), re); it != std::sregex_iterator(); ++it) {
    if (colours.size() < 7) colours.insert((*it)[1]);
    colour_and_shape.emplace((*it)[1], (*it)[2]);
    dash.push_back((*it)[3]);
  }
  EXPECT_EQ(colours.size(), 7u);
  EXPECT_EQ(colour_and_shape.size(), 8u) << "the eighth series shares its colour with the first, not its shape";
  ASSERT_EQ(dash.size(), 8u);
  EXPECT_EQ(dash[0], "1");
  EXPECT_EQ(dash[7], "2");
}

// A figure with nothing finite says so instead of failing in gnuplot; a series with nothing finite keeps its
// legend entry and says why it has no curve.
TEST(Plot, FigureWithoutFiniteValuesIsDrawnAndSaysSo) {
  Figure f{.name = "empty",
           .title = "nothing",
           .logy = true,
           .series = {{.label = "a", .x = {1, 2}, .y = {kNaN, -1}}, {.label = "b", .x = {1}, .y = {0}}}};
  const auto script = script_of(f);
  EXPECT_NE(script.find("no finite values to draw"), std::string::npos);
  EXPECT_NE(script.find("keyentry with points"), std::string::npos);
  EXPECT_NE(script.find("'a (no finite values)'"), std::string::npos);
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab_plot_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string warning;
  EXPECT_TRUE(io::draw_png(f, dir, warning)) << warning;  // gnuplot is installed by scripts/install-deps
  EXPECT_TRUE(std::filesystem::exists(dir / "empty.png"));
  std::filesystem::remove_all(dir);
}

// verify.png: one row per claim (its id on the y axis), grouped by family in catalogue order, the verdict and both
// numbers beside each row, a dot only where measured / claimed is a positive number, and every row inside the
// y range. The claims are chosen to cover a claim without a claimed value, one of the other sign and a training one.
TEST(Plot, VerdictFigureHasOneRowPerClaim) {
  const auto& reg = claim_registry();
  const std::vector<std::pair<const char*, ClaimOutcome>> chosen{
      {"soft.nystrom_error", {.verdict = Verdict::holds, .measured = -0.69, .ci_lo = -1.27, .ci_hi = -0.11}},
      {"poly.frob_growth",
       {.verdict = Verdict::holds, .measured = 0.997, .claimed = 1, .ci_lo = 0.986, .ci_hi = 1.008}},
      {"relu.alpha_sweep", {.verdict = Verdict::inconclusive, .measured = 0.044, .claimed = 1}},
      {"soft.prop6_normalized", {.verdict = Verdict::loose, .measured = -0.398, .claimed = 1}},
      {"poly.softmax_jac_bound", {.verdict = Verdict::loose, .measured = 0.5, .claimed = 2}}};
  std::vector<io::CheckedClaim> checked;
  for (const auto& [id, outcome] : chosen) checked.push_back({&reg.find(id), outcome});
  const auto f = io::verdict_figure(checked, "verify");

  std::vector<std::string> rows;
  for (const auto& [y, id] : f.ytics) rows.push_back(id);
  // POLY first, then SOFT, the training claim last; within a family in the order checked.
  EXPECT_EQ(rows, (std::vector<std::string>{"poly.frob_growth", "poly.softmax_jac_bound", "soft.nystrom_error",
                                            "soft.prop6_normalized", "relu.alpha_sweep"}));
  const auto label_at = [&](double y) {
    for (const auto& l : f.labels)
      if (l.y == y && l.x > 1) return l.text;
    return std::string();
  };
  EXPECT_EQ(label_at(f.ytics[0].first), "holds  0.997 vs 1");
  EXPECT_EQ(label_at(f.ytics[1].first), "loose  0.5 vs 2");
  EXPECT_EQ(label_at(f.ytics[2].first), "holds  -0.69");
  EXPECT_EQ(label_at(f.ytics[3].first), "loose  -0.398 vs 1");
  EXPECT_EQ(label_at(f.ytics[4].first), "inconclusive  0.044 vs 1");
  std::size_t dots = 0;
  for (const auto& s : f.series) dots += s.x.size();
  EXPECT_EQ(dots, 3u) << "no dot without a claimed value or with a negative ratio";
  std::vector<std::string> legend;
  for (const auto& s : f.series) legend.push_back(s.label);
  EXPECT_EQ(legend, (std::vector<std::string>{"holds (2)", "loose (2)", "inconclusive (1)"}))
      << "one entry per verdict with a dot, counting all its claims";

  const auto script = script_of(f);
  const auto [top, bottom] = range_of(script, "y");  // reversed: the first row at the top
  for (const auto& [y, id] : f.ytics) {
    EXPECT_GT(y, bottom) << id;
    EXPECT_LT(y, top) << id;
  }
  EXPECT_NE(script.find("'poly.frob_growth' 2"), std::string::npos) << "row 1 is the POLY header";
}

// When gnuplot fails anyway, the warning carries its own last words.
TEST(Plot, FailureWarningQuotesGnuplot) {
  Figure f{.name = "broken",
           .series = {{.label = "a", .x = {1, 2}, .y = {1, 2}}},
           .labels = {{.x = 0.5, .y = 1, .text = "x", .colour = "not-a-colour"}}};
  const auto dir = std::filesystem::temp_directory_path() / ("attnlab_plot_fail_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  std::string warning;
  EXPECT_FALSE(io::draw_png(f, dir, warning));
  EXPECT_EQ(warning.rfind("gnuplot failed: broken.png not drawn (gnuplot: ", 0), 0u) << warning;
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "no data, script or partial image left behind";
  std::filesystem::remove_all(dir);
}
