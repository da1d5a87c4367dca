// The falsify cases of the k-sweep claims: designs that hold, fail, or sit on one threshold's edge, built on the
// measured grid where its curves can be fitted and on the default grid where they cannot.
#include "k_sweep.hpp"

namespace attnlab::training_claims {

void default_grid(KSweepEvidence& e) {
  e.sizes.clear(), e.curves.clear(), e.ranges.clear();
  for (Index n : {16, 64, 256, 1024}) {
    GridCurve c;
    for (int i = 0; i < 13; ++i) {
      c.x.push_back(-3 + 0.5 * i);
      c.y.push_back(seed_mean(0.5, 0, 2, 2000));
      for (std::uint64_t seed : {1, 2}) c.runs.push_back({.point = std::size_t(i), .seed = seed, .accuracy = 0.5});
    }
    e.sizes.push_back(n), e.curves.push_back(c), e.ranges.emplace_back();
  }
}

// A regime with fewer than two N, or an N whose seeds do not connect its points (a sweep trained at one N, or stopped
// early at the next), has no design for the falsify cases to reshape: give it the default grid.
void with_default_grid(KSweepEvidence& e) {
  if (e.curves.size() < 2 ||
      !std::all_of(e.curves.begin(), e.curves.end(), [](const GridCurve& c) { return fit_blocks(c).has_value(); }))
    default_grid(e);
}

namespace {

double best_mean(const GridCurve& c) {
  double best = 0;
  for (const auto& y : c.y) best = std::max(best, y.mean);
  return best;
}

void set_range_of(KSweepEvidence& e, std::size_t c, double range) {
  const double best = best_mean(e.curves[c]);
  e.ranges[c] = range_under(without_spread(e.curves[c].y.front(), best), range);
}

// Per N, the middle of the grid every N shares shifted by exponent × (log10 N less its mean over the N): a law of that
// exponent, whatever each N's own grid (N = 16 trained over more decades than N = 64, say).
std::vector<double> on_a_law(const KSweepEvidence& e, double exponent) {
  double mean_log_n = 0, shared_lo = -HUGE_VAL, shared_hi = HUGE_VAL;
  for (std::size_t c = 0; c < e.curves.size(); ++c) {
    mean_log_n += std::log10(double(e.sizes[c])) / double(e.sizes.size());
    shared_lo = std::max(shared_lo, e.curves[c].x.front()), shared_hi = std::min(shared_hi, e.curves[c].x.back());
  }
  std::vector<double> at;
  for (std::size_t c = 0; c < e.curves.size(); ++c)
    at.push_back(0.5 * (shared_lo + shared_hi) + exponent * (std::log10(double(e.sizes[c])) - mean_log_n));
  return at;
}

// A seed-by-point interaction of ±spread: the seeds' blocks cannot absorb it, so the fit has a residual to draw from.
void add_spread(GridCurve& c, double spread) {
  for (auto& r : c.runs) r.accuracy += (r.seed + r.point) % 2 ? spread : -spread;
}

// How many of a judge's draws put the largest N's estimate at an end of its grid, the curves fitted as the judge
// fits them.
std::size_t at_an_end(const std::vector<GridCurve>& all, const KSweepEvidence& e, bool edges) {
  Figure scratch;
  const auto fitted = fit_curves(
      all, std::vector<std::string>(all.size()), [](double x) { return x; }, scratch);
  const auto curves = kept_only(all, fitted.kept);
  std::vector<double> deltas, trained;
  for (std::size_t c : fitted.kept) {
    deltas.push_back(edges ? kEdgeDelta.value * *e.ranges[c].value() : 0);
    trained.push_back(edges ? *e.ranges[c].content_free() + deltas.back() : 0);
  }
  const auto draws = edges ? edge_draws(e, curves, fitted.fits, deltas, trained) : best_k_draws(e, curves, fitted.fits);
  return draws_at_an_end(draws, curves, curves.size() - 1);
}

// The largest N's curve given a second mode at an end of its grid, `gap` below the estimate's own (`second(curve, gap)`
// sets it), and a spread: at the gap where the estimate lies at that end in floor(share × draws) + 1 of the draws,
// just over `share`, while the point estimate stays where it was.
void censor_largest(KSweepEvidence& e, double share, bool edges,
                    const std::function<void(GridCurve&, double)>& second) {
  const auto target = std::size_t(std::floor(share * kReplicates)) + 1;
  const auto with_gap = [&](double gap) {
    auto moved = e;
    auto& c = moved.curves.back();
    second(c, gap);
    for (auto& r : c.runs) r.accuracy = c.y[r.point].mean;
    add_spread(c, 1e-4);
    return moved;
  };
  const auto count = [&](double gap) {
    const auto moved = with_gap(gap);
    return at_an_end(moved.curves, moved, edges);
  };
  // At no gap about half the draws sit at the end, at 100 times the spread none.
  e = with_gap(gap_reaching(0, 0.01, target, count));
}

}  // namespace

double gap_reaching(double lo, double hi, std::size_t target, const std::function<std::size_t(double)>& count) {
  if (count(lo) < target || count(hi) >= target)
    throw std::logic_error("the censored share cannot be placed on this evidence");
  for (int i = 0; i < 60; ++i) {
    const double mid = 0.5 * (lo + hi);
    const auto at_mid = count(mid);
    if (at_mid == target) return mid;
    (at_mid > target ? lo : hi) = mid;
  }
  return lo;
}

void ramp(GridCurve& curve, double edge, double range) {
  const double top = best_mean(curve);
  const auto at = [&](std::size_t i) { return top - range * std::clamp((edge - curve.x[i]) / 3, 0.0, 1.0); };
  for (std::size_t i = 0; i < curve.x.size(); ++i) curve.y[i] = without_spread(curve.y[i], at(i));
  for (auto& r : curve.runs) r.accuracy = at(r.point);
}

void set_dynamic_range(KSweepEvidence& e, double range) {
  for (std::size_t c = 0; c < e.curves.size(); ++c) set_range_of(e, c, range);
}

void place_best_k(KSweepEvidence& e, double exponent) {
  with_default_grid(e);
  // peak_at's parabola spans a mean grid step, so on grids that differ between N (refined at different k, or over
  // different decades) a neighbour of the best point can fall on its floor and move the refined argmax off the law.
  if (std::any_of(e.curves.begin(), e.curves.end(), [&](const GridCurve& c) { return c.x != e.curves.front().x; }))
    default_grid(e);
  const auto best = on_a_law(e, exponent);
  for (std::size_t c = 0; c < e.curves.size(); ++c) peak_at(e.curves[c], best[c]);
}

// The edge within half the range of the top lies 1.5 decades below the ramp's start, where any grid of at most
// one-decade steps brackets it on the ramp, so the interpolated edge is exact, provided each grid reaches from the
// edge to the plateau (grids over other decades, as recall-query-noclip's N = 64 and 128, may not: the default grid).
void place_edge(KSweepEvidence& e, double exponent, double range) {
  with_default_grid(e);
  auto edges = on_a_law(e, exponent);
  for (std::size_t c = 0; c < e.curves.size(); ++c)
    if (e.curves[c].x.front() > edges[c] || e.curves[c].x.back() < edges[c] + 1.5) {
      default_grid(e);
      edges = on_a_law(e, exponent);
      break;
    }
  for (std::size_t c = 0; c < e.curves.size(); ++c) ramp(e.curves[c], edges[c] + 1.5, range);
  set_dynamic_range(e, range);
}

Crossing<KSweepEvidence> range_crossing(std::function<void(KSweepEvidence&, double)> shape) {
  return {&kMinDynamicRange, "the two largest N's dynamic range (the others none)", Verdict::inconclusive,
          Verdict::holds, [shape](KSweepEvidence& e, double x) {
            shape(e, x);
            for (std::size_t c = 0; c + 2 < e.curves.size(); ++c) set_range_of(e, c, 0);
          }};
}

std::vector<Crossing<KSweepEvidence>> best_k_crossings() {
  return {{&kSqrtBand, "every N's best k on N^(1/2 + x)", Verdict::holds, Verdict::violated,
           [](KSweepEvidence& e, double x) { place_best_k(e, 0.5 + x); }},
          {&kCensoredShare, "the largest N's best k at the top of its grid in just over x of the draws", Verdict::holds,
           Verdict::inconclusive, [](KSweepEvidence& e, double x) {
             // The draws at the top end pull the exponent interval's upper end up by 1/40 of their slopes' distance
             // (the quantile's interpolation): a law at 0.3 keeps that inside the band for two close N.
             place_best_k(e, 0.3);
             censor_largest(e, x, false, [](GridCurve& c, double gap) {
               c.y.back() = without_spread(c.y.back(), best_mean(c) - gap);
             });
           }}};
}

std::vector<Crossing<KSweepEvidence>> edge_crossings() {
  return {{&kSqrtBand, "every N's plateau edge on N^(1/2 + x)", Verdict::holds, Verdict::violated,
           [](KSweepEvidence& e, double x) { place_edge(e, 0.5 + x, 0.5); }},
          {&kEdgeDelta, "a shelf x of the range under the largest N's best, below its ramp", Verdict::violated,
           Verdict::holds,
           [](KSweepEvidence& e, double x) {
             place_edge(e, 0.5, 0.5);
             // The shelf is the largest N's points on the ramp's floor above its lowest; a grid with none there (one
             // that starts a decade under the ramp) gets the default grid's.
             const auto on_shelf = [](const GridCurve& c) {
               const double floor = best_mean(c) - 0.5;
               return std::count_if(c.y.begin() + 1, c.y.end(), [&](const auto& y) { return y.mean <= floor; });
             };
             if (on_shelf(e.curves.back()) == 0) default_grid(e), place_edge(e, 0.5, 0.5);
             auto& c = e.curves.back();
             const double top = best_mean(c), floor = top - 0.5;
             for (std::size_t i = 1; i < c.x.size(); ++i)
               if (c.y[i].mean <= floor) c.y[i] = without_spread(c.y[i], top - x * 0.5);
             for (auto& r : c.runs) r.accuracy = c.y[r.point].mean;
           }},
          range_crossing([](KSweepEvidence& e, double range) { place_edge(e, 0.5, range); }),
          {&kCensoredShare, "the largest N's plateau edge below its grid in just over x of the draws", Verdict::holds,
           Verdict::inconclusive, [](KSweepEvidence& e, double x) {
             place_edge(e, 0.5, 0.5);
             censor_largest(e, x, true, [](GridCurve& c, double gap) {
               c.y.front() = without_spread(c.y.front(), best_mean(c) - kEdgeDelta.value * 0.5 - gap);
             });
           }}};
}

}  // namespace attnlab::training_claims
