// REPOLY §5.1.2, Fig 10: every x^3 scale from 1/8 to 1/25 performs very well at N = 196 (ViT-B/16 and ViT-S/16 at
// 224 px): read on the k-sweep as a band of k in sqrt(N) units, [8/14, 25/14] sqrt(N), lying on each N's plateau.
#include "k_sweep.hpp"

namespace attnlab::training_claims {
namespace {

constexpr double kBandLow = 8.0 / 14, kBandHigh = 25.0 / 14;  // the paper's 1/8 .. 1/25 over its 1/14 = 1/sqrt(196)

double band_end(Index n, double share) { return std::log10(share * std::sqrt(double(n))); }

// A curve's value at `at` on its ascending grid, linear in log k between the points either side (NaN off the grid).
double value_at(const std::vector<double>& x, const Eigen::VectorXd& mu, double at) {
  if (at < x.front() || at > x.back()) return NAN;
  const auto hi = std::size_t(std::lower_bound(x.begin(), x.end(), at) - x.begin());
  if (x[hi] == at) return mu(Index(hi));
  const double w = (at - x[hi - 1]) / (x[hi] - x[hi - 1]);
  return (1 - w) * mu(Index(hi - 1)) + w * mu(Index(hi));
}

// The curve's accuracy at grid point `best` less its worst over the band: its ends and the grid points between them.
double band_gap(const std::vector<double>& x, const Eigen::VectorXd& mu, double lo, double hi, Index best) {
  double worst = std::min(value_at(x, mu, lo), value_at(x, mu, hi));
  for (std::size_t i = 0; i < x.size(); ++i)
    if (x[i] > lo && x[i] < hi) worst = std::min(worst, mu(Index(i)));
  return mu(best) - worst;
}

// The grid point of a fitted curve's best accuracy.
Index best_point(const Eigen::VectorXd& mu) {
  Index best = 0;
  mu.maxCoeff(&best);
  return best;
}

// The able N (dynamic range at least `least`) whose grid holds the band, fitted with the seeds as blocks.
struct BandCurves {
  std::vector<std::size_t> picked{};  // indices into the evidence's sizes
  std::vector<GridCurve> curves{};
  FittedCurves fitted{};
};

BandCurves band_curves(const KSweepEvidence& e, double least) {
  std::vector<std::size_t> within;
  for (std::size_t c : able_sizes(e, least))
    if (band_end(e.sizes[c], kBandLow) >= e.curves[c].x.front() &&
        band_end(e.sizes[c], kBandHigh) <= e.curves[c].x.back())
      within.push_back(c);
  Figure scratch;
  const auto all = kept_only(e.curves, within);
  std::vector<std::string> labels;  // name the curves a fit leaves out
  for (std::size_t c : within) labels.push_back(text("N = ", e.sizes[c]));
  BandCurves b{.fitted = fit_curves(
                   all, labels, [](double x) { return x; }, scratch)};
  b.curves = kept_only(all, b.fitted.kept), b.picked = kept_only(within, b.fitted.kept);
  return b;
}

std::string no_band_curve(const BandCurves& b, const std::string& range_text) {
  return text("no N that can show the effect has a fitted curve whose grid holds the band [", sig(kBandLow, 3), ", ",
              sig(kBandHigh, 3), "] sqrt(N)", b.fitted.left_out.empty() ? "" : "; " + b.fitted.left_out, "; ",
              range_text);
}

ClaimOutcome judge_k_band(const KSweepEvidence& e, const Thresholds& t) {
  if (e.curves.empty()) return no_regime_rows(e.regime, sweep::k);
  const double share = t(kEdgeDelta), least = t(kMinDynamicRange);
  ClaimOutcome out;
  const auto range_text = task_and_ranges(e);
  if (able_sizes(e, least).empty()) {
    out.detail = cannot_show(least, range_text, 1);
    return out;
  }
  const auto b = band_curves(e, least);
  const auto& picked = b.picked;
  const auto& curves = b.curves;
  const auto& fitted = b.fitted;
  if (curves.empty()) {
    out.detail = no_band_curve(b, range_text);
    return out;
  }
  // Each draw is read at the fit's best grid point: a draw's own maximum over a long flat plateau sits well above
  // the fit's (the largest of many noisy equals), and its interval excluded its own estimate.
  std::vector<Index> best;
  for (const auto& fit : fitted.fits) best.push_back(best_point(fit.mu));
  const auto gap_of = [&](std::size_t c, const Eigen::VectorXd& mu) {
    const Index n = e.sizes[picked[c]];
    return band_gap(curves[c].x, mu, band_end(n, kBandLow), band_end(n, kBandHigh), best[c]);
  };
  const auto draws = posterior_draws(fitted.fits, e.seed, "poly.k_band" + e.regime.suffix("."), gap_of);
  Verdict v = Verdict::holds;
  std::vector<Verdict> per_n_verdicts;
  std::vector<double> gaps;
  std::vector<bool> trained_at;
  std::string per_n, table =
                         "| N | band k | dynamic range | delta | best less the band's worst | 95% interval | |\n"
                         "|---|---|---|---|---|---|---|\n";
  for (std::size_t c = 0; c < curves.size(); ++c) {
    const Index n = e.sizes[picked[c]];
    const double delta = share * *e.ranges[picked[c]].value();
    const double gap = gaps.emplace_back(gap_of(c, fitted.fits[c].mu));
    const auto [lo, hi] = draw_interval(draws, c);
    // A curve whose best stays under content-free attention plus delta trained at no k: level at chance is no plateau.
    const bool trained = fitted.fits[c].mu.maxCoeff() >= *e.ranges[picked[c]].content_free() + delta;
    const Verdict at = trained ? equivalence_verdict(lo, hi, -HUGE_VAL, delta) : Verdict::inconclusive;
    v = worst(v, at);
    per_n_verdicts.push_back(at), trained_at.push_back(trained);
    per_n += text(per_n.empty() ? "" : ", ", "N=", n, ": ", sig(100 * gap, 3), " [", sig(100 * lo, 3), ", ",
                  sig(100 * hi, 3), "] points against ", sig(100 * delta, 3), trained ? "" : " (trained at no k)");
    table += text("| ", n, " | ", sig(kBandLow * std::sqrt(double(n)), 3), " .. ",
                  sig(kBandHigh * std::sqrt(double(n)), 3), " | ", e.ranges[picked[c]].describe(), " | ",
                  sig(100 * delta, 3), " points | ", sig(100 * gap, 3), " points | [", sig(100 * lo, 3), ", ",
                  sig(100 * hi, 3), "] | ", to_string(at), " |\n");
  }
  out.verdict = v;
  // The estimate is the deciding N's: of those whose own verdict is the claim's, a trained curve before one at chance,
  // then the one that loses most over the band.
  const auto rank = [&](std::size_t c) { return std::tuple(per_n_verdicts[c] == v, bool(trained_at[c]), gaps[c]); };
  std::size_t deciding = 0;
  for (std::size_t c = 1; c < curves.size(); ++c)
    if (rank(c) > rank(deciding)) deciding = c;
  std::string estimate;
  if (!draws.empty()) {
    out.measured = gaps[deciding];
    std::tie(out.ci_lo, out.ci_hi) = draw_interval(draws, deciding);
    estimate = text("; the estimate is N=", e.sizes[picked[deciding]],
                    "'s, the N whose verdict is the claim's and whose loss is largest (a trained curve first)");
  }
  out.detail = text(e.regime.label(), ": the best accuracy less the worst over k in [", sig(kBandLow, 3), ", ",
                    sig(kBandHigh, 3), "] sqrt(N): ", per_n, estimate, " (holds: every interval below delta = ", share,
                    " of the dynamic range; violated: one above it; a curve whose best stays under content-free "
                    "attention plus delta trained at no k: inconclusive there)",
                    fitted.left_out.empty() ? "" : "; " + fitted.left_out, "; ", range_text);
  out.markdown = text(
      "Per N whose dynamic range can show the effect and whose grid holds the band: the seed-adjusted "
      "accuracy's best grid value less its worst over the band (its ends interpolated linearly in log k, "
      "and the grid points between), with a 95% interval from ",
      kReplicates,
      " draws of the seed-blocked fit's posterior, each read at the fit's best grid point (changed on 2026-11-29, "
      "after the recall sweeps' data: a draw's own maximum over a flat plateau lies above the fit's, and N = 16's "
      "interval had excluded its estimate). An N whose fitted best stays under the better content-free control plus "
      "delta trained at no k and is inconclusive, not level (added on 2026-12-01, after recall-query-noclip's N = 128 "
      "read level at chance; it can only turn holds into inconclusive). The estimate and interval reported are the "
      "deciding N's: of the N whose verdict is the claim's, a trained curve first, then the largest loss (changed on "
      "2026-12-08, after seeing the data, from the largest N's, which on recall-query-lowlr was a curve at chance; no "
      "verdict depends on it).\n\n",
      table, e.setup);
  return out;
}

// Every N's curve a ramp reaching the plateau `shares[c]` x 3 decades above the band's lower end (so its accuracy
// there lies shares[c] x range under the top) on a task of dynamic range `range`.
void place_band(KSweepEvidence& e, double range, double largest_share) {
  place_edge(e, 0.5, range);
  for (std::size_t c = 0; c < e.curves.size(); ++c) {
    const double share = c + 1 == e.curves.size() ? largest_share : 0;
    ramp(e.curves[c], band_end(e.sizes[c], kBandLow) + 3 * share, range);
  }
}

// ---- poly.k_best.linear: REPOLY §5.1.2, "1/14 is also the best scale for x" ----------------------

ClaimOutcome judge_linear_best(const KSweepEvidence& e, const Thresholds& t) {
  if (e.curves.empty()) return no_regime_rows(e.regime, sweep::k, "--p 1");
  const double least = t(kMinDynamicRange), share = t(kEdgeDelta);
  ClaimOutcome out{.claimed = 1};
  const auto range_text = task_and_ranges(e);
  if (able_sizes(e, least).empty()) {
    out.detail = cannot_show(least, range_text, 1);
    return out;
  }
  const auto b = band_curves(e, least);
  if (b.curves.empty()) {
    out.detail = no_band_curve(b, range_text);
    return out;
  }
  const auto draws = posterior_argmax(b.curves, b.fitted.fits, e.seed, "poly.k_best.linear" + e.regime.suffix("."));
  Verdict v = Verdict::holds;
  std::string per_n, table =
                         "| N | band k | best k | 95% interval | best k / sqrt(N) | draws at a grid end | x/k's fall "
                         "over the grid | delta | |\n"
                         "|---|---|---|---|---|---|---|---|---|\n";
  for (std::size_t c = 0; c < b.curves.size(); ++c) {
    const Index n = e.sizes[b.picked[c]];
    const double best = refined_argmax(b.curves[c].x, b.fitted.fits[c].mu);
    const auto [lo, hi] = draw_interval(draws, c);
    const double at_end = double(draws_at_an_end(draws, b.curves, c)) / double(draws.size());
    // A curve that k moves by less than delta (x/k untrained, or saturated, at every k) has no best k to locate. A
    // best k at a grid end only bounds it, but a bound beyond the band still lies outside it: no censoring rule.
    const auto& mu = b.fitted.fits[c].mu;
    const double fall = mu.maxCoeff() - mu.minCoeff(), delta = share * *e.ranges[b.picked[c]].value();
    const Verdict at = fall < delta ? Verdict::inconclusive
                                    : equivalence_verdict(lo, hi, band_end(n, kBandLow), band_end(n, kBandHigh));
    v = worst(v, at);
    const double root = std::sqrt(double(n));
    out.measured = std::pow(10, best) / root;  // the largest N's, the last
    per_n += text(per_n.empty() ? "" : ", ", "N=", n, ": ", sig(std::pow(10, best), 3), " [", sig(std::pow(10, lo), 3),
                  ", ", sig(std::pow(10, hi), 3), "]",
                  fall < delta ? text(" (flat: falls ", sig(100 * fall, 3), " points)") : "");
    table += text("| ", n, " | ", sig(kBandLow * root, 3), " .. ", sig(kBandHigh * root, 3), " | ",
                  sig(std::pow(10, best), 3), " | [", sig(std::pow(10, lo), 3), ", ", sig(std::pow(10, hi), 3), "] | ",
                  sig(std::pow(10, best) / root, 3), " | ", sig(100 * at_end, 3), "% | ", sig(100 * fall, 3),
                  " points | ", sig(100 * delta, 3), " points | ", to_string(at), " |\n");
  }
  out.verdict = v;
  out.detail = text(e.regime.label(), ": best k of x/k ", per_n, " (holds: every interval inside [", sig(kBandLow, 3),
                    ", ", sig(kBandHigh, 3),
                    "] sqrt(N), REPOLY's 1/8 .. 1/25 around its 1/14 at N = 196; violated: "
                    "one wholly outside; an N whose x/k curve k moves by less than delta = ",
                    share, " of the dynamic range is flat: inconclusive there)",
                    b.fitted.left_out.empty() ? "" : "; " + b.fitted.left_out, "; ", range_text);
  out.markdown = text(best_scale_method("k per N", "log k"),
                      " Per N whose dynamic range can show the effect and whose grid holds the band, the best k of x/k "
                      "against the band REPOLY calls near-best for x^3; a curve that falls by less than delta from its "
                      "best over the whole grid (the seed-adjusted fit) has no best k to locate.\n\n",
                      table, e.setup);
  return out;
}

// Every N's x/k curve peaked at `shift` decades above sqrt(N) (a parabola in log k, flat two decades either side),
// scaled so that it falls exactly `fall` x the range from its best grid point to its worst, on a task of dynamic range
// 0.5.
void place_linear_best(KSweepEvidence& e, double shift, double fall) {
  constexpr double range = 0.5, top = 0.9;
  with_default_grid(e);
  for (std::size_t c = 0; c < e.curves.size(); ++c) {
    auto& curve = e.curves[c];
    const double peak = std::log10(std::sqrt(double(e.sizes[c])));
    std::vector<double> depth;  // below the peak, in (0, 1]
    for (double x : curve.x) depth.push_back(std::min(std::pow((x - peak - shift) / 2, 2), 1.0));
    const auto [least, most] = std::minmax_element(depth.begin(), depth.end());
    const auto at = [&](std::size_t i) { return top - fall * range * (depth[i] - *least) / (*most - *least); };
    for (std::size_t i = 0; i < curve.x.size(); ++i) curve.y[i] = without_spread(curve.y[i], at(i));
    for (auto& r : curve.runs) r.accuracy = at(r.point);
  }
  set_dynamic_range(e, range);
}

}  // namespace

void register_k_band_claim(ClaimRegistry& r, const Regime& regime, const std::string& init_text) {
  r.add(make_claim<KSweepEvidence>(
      {.id = "poly.k_band" + regime.suffix("."),
       .source = "REPOLY §5.1.2, Fig 10",
       .statement = "every scale of x^3 from 1/8 to 1/25 performs very well at N = 196 (read as k from 8/14 to 25/14 "
                    "sqrt(N) on the accuracy plateau)",
       .method = text(
           regime.source(sweep::k), " under ", init_text,
           ": per N, the best accuracy less the worst over the band, within plateau_edge_delta of the task's "
           "dynamic range, by draws from the seed-blocked fit"),
       .sweep = regime.sweep(sweep::k)},
      {.measure = [regime](const ClaimContext& ctx) { return measure_k_sweep(ctx, regime); },
       .judge = judge_k_band,
       .contradict = [](KSweepEvidence& e) { place_band(e, 0.5, 0.8); },
       .support = [](KSweepEvidence& e) { place_band(e, 0.5, 0); },
       .crossings = {{&kEdgeDelta, "the largest N's band end x of the range under its best", Verdict::holds,
                      Verdict::violated, [](KSweepEvidence& e, double x) { place_band(e, 0.5, x); }},
                     range_crossing([](KSweepEvidence& e, double range) { place_band(e, range, 0); })}}));
}

void register_linear_best_claim(ClaimRegistry& r, const Regime& regime, const std::string& init_text) {
  r.add(make_claim<KSweepEvidence>(
      {.id = "poly.k_best.linear" + regime.suffix("."),
       .source = "REPOLY §5.1.2",
       .statement = "1/14 is also the best scale for x (at N = 196: read as x/k's best k inside the band [8/14, 25/14] "
                    "sqrt(N) that REPOLY finds near-best for x^3)",
       .method = text(regime.source(sweep::k, "--p 1"), " under ", init_text,
                      ": per N that can show it, the best k of x/k by draws from the seed-blocked fit, its 95% "
                      "interval against the band"),
       .sweep = regime.sweep(sweep::k)},
      {.measure = [regime](const ClaimContext& ctx) { return measure_k_sweep(ctx, regime, 1); },
       .judge = judge_linear_best,
       .contradict = [](KSweepEvidence& e) { place_linear_best(e, 2, 0.8); },
       .support = [](KSweepEvidence& e) { place_linear_best(e, 0, 0.8); },
       .crossings = {{&kEdgeDelta, "every N's x/k curve falling x of the range over the grid", Verdict::inconclusive,
                      Verdict::holds, [](KSweepEvidence& e, double x) { place_linear_best(e, 0, x); }},
                     range_crossing([](KSweepEvidence& e, double range) {
                       place_linear_best(e, 0, 0.8);
                       set_dynamic_range(e, range);
                     })}}));
}

}  // namespace attnlab::training_claims
