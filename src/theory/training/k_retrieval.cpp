// The k at which half the seeds retrieve, against N (POLY Fig 1), on the recall task read at its query token: its runs
// either retrieve the answer or stay at chance, so the share that retrieves is what moves with k, not a smooth
// accuracy. One logistic in log k per N with a shared slope, Firth-penalised, its exponent bootstrapped.
#include "k_sweep.hpp"

#include <attnlab/mc/statistics.hpp>

namespace attnlab::training_claims {
namespace {

// The runs of the curves that can show retrieval, each retrieved or not, as binomial rows (curve, grid point).
struct RetrievalData {
  std::vector<GridCurve> curves{};
  std::vector<Index> sizes{};
  std::vector<DynamicRange> ranges{};
  std::vector<double> levels{};           // per curve: the accuracy a run reaches when it retrieves
  std::vector<std::size_t> first_row{};   // per curve, then one past the last row
  MatrixD design{};                       // per row: the curve's indicator, then log10 k
  VectorD trials{}, successes{};          // runs and runs that retrieve, per row
  std::vector<std::size_t> row_of_run{};  // the runs of every curve in order
};

RetrievalData retrieval_data(const KSweepEvidence& e, const std::vector<std::size_t>& able, double share) {
  RetrievalData d{
      .curves = kept_only(e.curves, able), .sizes = kept_only(e.sizes, able), .ranges = kept_only(e.ranges, able)};
  std::size_t rows = 0;
  for (std::size_t c = 0; c < d.curves.size(); ++c) {
    d.levels.push_back(*d.ranges[c].content_free() + share * *d.ranges[c].value());
    d.first_row.push_back(rows), rows += d.curves[c].x.size();
  }
  d.first_row.push_back(rows);
  const auto curves = Index(d.curves.size());
  d.design = MatrixD::Zero(Index(rows), curves + 1);
  d.trials = d.successes = VectorD::Zero(Index(rows));
  for (std::size_t c = 0; c < d.curves.size(); ++c) {
    for (std::size_t i = 0; i < d.curves[c].x.size(); ++i) {
      const auto row = Index(d.first_row[c] + i);
      d.design(row, Index(c)) = 1, d.design(row, curves) = d.curves[c].x[i];
    }
    for (const auto& r : d.curves[c].runs) {
      const auto row = d.first_row[c] + r.point;
      d.row_of_run.push_back(row);
      d.trials(Index(row)) += 1, d.successes(Index(row)) += r.accuracy >= d.levels[c];
    }
  }
  return d;
}

// Per curve, log10 of the k at which the fitted share is one half: -inf where every run retrieves, +inf where none
// does (each bounded by its grid), NaN for every curve where the fit failed or its shared slope is not positive.
std::vector<double> half_points(const RetrievalData& d, const VectorD& successes, const LogisticFit& fit) {
  const auto curves = Index(d.curves.size());
  const double slope = fit.beta(curves);
  std::vector<double> half;
  for (std::size_t c = 0; c < d.curves.size(); ++c) {
    const auto rows = Eigen::seq(Index(d.first_row[c]), Index(d.first_row[c + 1]) - 1);
    const double retrieved = successes(rows).sum(), runs = d.trials(rows).sum();
    half.push_back(retrieved == runs            ? -HUGE_VAL
                   : retrieved == 0             ? HUGE_VAL
                   : fit.converged && slope > 0 ? -fit.beta(Index(c)) / slope
                                                : NAN);
  }
  return half;
}

// Per replicate and run, Φ(z) of a standard normal z of the seed's and the claim's stream: a run retrieves in a
// replicate where it is under the run's fitted share (a Bernoulli draw). The same for every re-judge of a claim with
// as many runs (the sensitivity scan's, the falsify cases' bisections), so the last few are kept.
std::shared_ptr<const std::vector<double>> replicate_uniforms(std::uint64_t seed, const std::string& claim,
                                                              std::size_t runs) {
  using Key = std::tuple<std::uint64_t, std::string, std::size_t>;
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<const std::vector<double>>> cache;
  const Key key{seed, claim, runs};
  {
    const std::lock_guard lock(mutex);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto uniforms = std::make_shared<std::vector<double>>();
  uniforms->reserve(kReplicates * runs);
  for (int r = 0; r < kReplicates; ++r) {
    const GaussianStream noise(seed, hash_string(claim), std::uint32_t(r), StreamTag::Search);
    for (std::size_t j = 0; j < runs; ++j) uniforms->push_back(0.5 * std::erfc(-noise.normal(j) / std::sqrt(2.0)));
  }
  const std::lock_guard lock(mutex);
  if (cache.size() >= 8) cache.clear();
  return cache[key] = std::move(uniforms);
}

// The half-points of kReplicates data sets redrawn from the fit (each run retrieves with its row's fitted share), each
// refitted from the fit's estimate: draws[r][curve].
std::vector<std::vector<double>> bootstrap_half_points(const RetrievalData& d, const LogisticFit& fit,
                                                       std::uint64_t seed, const std::string& claim) {
  const VectorD p = (1 + (-(d.design * fit.beta)).array().exp()).inverse().matrix();
  const auto uniforms = replicate_uniforms(seed, claim, d.row_of_run.size());
  const double* u = uniforms->data();
  std::vector<std::vector<double>> draws;
  draws.reserve(kReplicates);
  for (int r = 0; r < kReplicates; ++r) {
    VectorD successes = VectorD::Zero(d.trials.size());
    for (std::size_t row : d.row_of_run) successes(Index(row)) += *u++ < p(Index(row));
    // A replicate's half-point to about 1e-8 of a decade: far under the intervals' resolution.
    draws.push_back(half_points(d, successes, firth_logistic(d.design, d.trials, successes, fit.beta, 1e-8)));
  }
  return draws;
}

// The data, the fit, its half-points and their bootstrap draws: what the judge reads and the falsify cases place.
struct Retrieval {
  RetrievalData data{};
  LogisticFit fit{};
  std::vector<double> half{}, log_n{};
  std::vector<std::vector<double>> draws{};
};

std::string claim_id(const Regime& regime) { return "poly.k_retrieval_vs_N" + regime.suffix("."); }

// The fit and its bootstrap are a function of the binomial rows alone: the sensitivity scan's re-judges that move no
// run across the retrieval level and no N across the least range (every band and censoring share) reuse them.
Retrieval retrieval(const KSweepEvidence& e, const std::vector<std::size_t>& able, double share) {
  Retrieval out{.data = retrieval_data(e, able, share)};
  const auto& d = out.data;
  for (Index n : d.sizes) out.log_n.push_back(std::log10(double(n)));
  using Key = std::tuple<std::uint64_t, std::string, std::vector<double>>;
  static std::mutex mutex;
  static std::map<Key, std::pair<LogisticFit, std::vector<std::vector<double>>>> cache;
  const auto claim = claim_id(e.regime);
  std::vector<double> rows(d.design.data(), d.design.data() + d.design.size());
  rows.insert(rows.end(), d.trials.begin(), d.trials.end());
  rows.insert(rows.end(), d.successes.begin(), d.successes.end());
  const Key key{e.seed, claim, std::move(rows)};
  {
    const std::lock_guard lock(mutex);
    if (const auto it = cache.find(key); it != cache.end()) {
      std::tie(out.fit, out.draws) = it->second;
      out.half = half_points(d, d.successes, out.fit);
      return out;
    }
  }
  out.fit = firth_logistic(d.design, d.trials, d.successes);
  out.half = half_points(d, d.successes, out.fit);
  out.draws = bootstrap_half_points(d, out.fit, e.seed, claim);
  const std::lock_guard lock(mutex);
  if (cache.size() >= 8) cache.clear();
  cache[key] = {out.fit, out.draws};
  return out;
}

std::string k_text(double log_k) {
  return std::isfinite(log_k) ? sig(std::pow(10, log_k), 3)
         : std::isnan(log_k)  ? std::string("not located")
         : log_k < 0          ? std::string("below the grid (every run retrieves)")
                              : std::string("above the grid (no run retrieves)");
}

// "0.1: 0/2, 1: 1/2, 10: 2/2": the runs that retrieve at each k of a curve.
std::string retrieved_per_k(const RetrievalData& d, std::size_t c) {
  std::string line;
  for (std::size_t i = 0; i < d.curves[c].x.size(); ++i) {
    const auto row = Index(d.first_row[c] + i);
    line += text(line.empty() ? "" : ", ", sig(std::pow(10, d.curves[c].x[i]), 3), ": ", d.successes(row), "/",
                 d.trials(row));
  }
  return line;
}

ClaimOutcome judge_k_retrieval(const KSweepEvidence& e, const Thresholds& t) {
  if (auto unable = unable_to_judge(e, t, 0.5)) return *unable;
  const double band = t(kSqrtBand), share = t(kEdgeDelta), least = t(kMinDynamicRange);
  ClaimOutcome out{.claimed = 0.5};
  const auto range_text = task_and_ranges(e);
  const auto able = able_sizes(e, least);
  const auto& regime = e.regime;
  const auto r = retrieval(e, able, share);
  const auto& d = r.data;
  const double slope = r.fit.beta(Index(d.curves.size()));
  const auto censored = censored_sizes(r.draws, d.curves, d.sizes, t(kCensoredShare));
  const bool located = std::all_of(r.half.begin(), r.half.end(), [](double v) { return std::isfinite(v); });
  out.measured = located ? ols_slope(r.log_n, r.half) : NAN;
  std::tie(out.ci_lo, out.ci_hi) = exponent_interval(r.draws, d.curves, r.log_n, !censored.empty());
  out.verdict = exponent_verdict(out.ci_lo, out.ci_hi, band);

  Figure shares{
      .name = "k_sweep_retrieval" + regime.suffix("_"),
      .title = text("x^3/k, ", regime.label(), ": share of seeds that retrieve, and the shared-slope logistic"),
      .xlabel = "k",
      .ylabel = "share of runs that retrieve",
      .logx = true};
  std::string per_n,
      table =
          "| N | dynamic range | retrieves at or above | runs that retrieve, per k | half-point k | 95% interval |\n"
          "|---|---|---|---|---|---|\n";
  for (std::size_t c = 0; c < d.curves.size(); ++c) {
    const auto [lo, hi] = draw_interval(r.draws, c);
    const std::string colour = kSeriesColours[c % std::size(kSeriesColours)];  // each N's shares and fit in one
    Series observed{.label = text("N = ", d.sizes[c]), .connect = false, .colour = colour},
        fitted{.label = text("N = ", d.sizes[c], " fit"), .colour = colour};
    for (std::size_t i = 0; i < d.curves[c].x.size(); ++i) {
      const auto row = Index(d.first_row[c] + i);
      observed.x.push_back(std::pow(10, d.curves[c].x[i])), observed.y.push_back(d.successes(row) / d.trials(row));
    }
    const double from = d.curves[c].x.front(), to = d.curves[c].x.back();
    for (int i = 0; i <= 60; ++i) {
      const double x = from + (to - from) * i / 60;
      fitted.x.push_back(std::pow(10, x));
      fitted.y.push_back(1 / (1 + std::exp(-(r.fit.beta(Index(c)) + slope * x))));
    }
    shares.series.push_back(observed), shares.series.push_back(fitted);
    per_n += text(per_n.empty() ? "" : ", ", "N=", d.sizes[c], ": ", k_text(r.half[c]));
    table += text("| ", d.sizes[c], " | ", d.ranges[c].describe(), " | ", percent(d.levels[c]), "% | ",
                  retrieved_per_k(d, c), " | ", k_text(r.half[c]), " | [", k_text(lo), ", ", k_text(hi), "] |\n");
    ResultRow row;
    row.quantity = "k_half_retrieval";
    row.activation = "x^3/k";
    row.N = d.sizes[c];
    row.value = {1, 0, std::pow(10, r.half[c]), 0, std::pow(10, lo), std::pow(10, hi)};
    row.extra = {{column::init, regime.init}, {"dynamic_range", *d.ranges[c].value()}, {"level", d.levels[c]}};
    out.evidence.push_back(row);
  }
  out.figures = {shares};
  out.detail = text(
      regime.label(), ": the k at which half the seeds retrieve (a run retrieves at the better content-free control + ",
      share, " of the dynamic range) ", per_n, "; log k_half = a + b log N: b = ", sig(out.measured, 3), ", 95% CI [",
      sig(out.ci_lo, 3), ", ", sig(out.ci_hi, 3), "] against the band [", 0.5 - band, ", ", 0.5 + band,
      "]; shared slope ", sig(slope, 3), " logits per decade of k",
      r.fit.converged && slope > 0 ? ""
                                   : " (the fit did not converge or retrieval does not rise with k: no half-point)",
      censored.empty() ? ""
                       : text("; the half-point lies at an end of the grid for N = ", censored, " in more than ",
                              t(kCensoredShare), " of the replicates (censored: the exponent only bounded)"),
      "; ", range_text);
  out.markdown = text(
      "Half-point of retrieval: a run retrieves when its final validation accuracy reaches the better content-free "
      "control plus ",
      share, " of the dynamic range. At each N whose range reaches ", sig(100 * least, 3),
      " points, P(retrieve) = logistic(s (log10 k - m_N)), one slope s for every N, fitted by Firth's penalised "
      "likelihood (the Jeffreys prior: finite where an N separates completely); the exponent is the least-squares "
      "slope of m_N on log10 N. Intervals: a parametric bootstrap of ",
      kReplicates,
      " replicates (each run redrawn from its fitted share, the fit repeated); a replicate's half-point at or beyond "
      "its grid, or at an N whose redrawn runs all retrieve or all fail, sits at that end; a replicate whose shared "
      "slope is not positive locates no N. Written on 2026-12-02 after the points of N = 16 to 128 were seen, before "
      "the seeds it called for. ",
      sqrt_rule_text(band), "\n\n", table, "\nRegime: ", kUnitRegime, e.setup);
  return out;
}

// ---- the falsify cases ----

constexpr double kChance = 0.1;  // content-free attention's accuracy on the designs below
constexpr std::uint64_t kDesignSeeds = 8;

// A curve whose runs sit at log k = half + offsets[i], of which the first retrieving[i] of kDesignSeeds seeds retrieve
// (at chance + range; the others at chance).
GridCurve retrieval_curve(double half, const std::vector<double>& offsets, const std::vector<std::uint64_t>& retrieving,
                          double range) {
  GridCurve curve;
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    curve.x.push_back(half + offsets[i]);
    std::vector<double> accuracies;
    for (std::uint64_t seed = 1; seed <= kDesignSeeds; ++seed) {
      accuracies.push_back(seed <= retrieving[i] ? kChance + range : kChance);
      curve.runs.push_back({.point = i, .seed = seed, .accuracy = accuracies.back()});
    }
    curve.y.push_back(seed_mean(accuracies, 2000));
  }
  return curve;
}

// Every N of the default grid's sizes with its half-point on a law of `exponent` (centred on log N's mean), runs at
// m_N ± 0.25, 0.75, 1.25 of which 0, 0, 2, 6, 8, 8 of 8 seeds retrieve: the design is symmetric about m_N, so Firth's
// fit puts every half-point on it exactly, and shifting the law moves every replicate's slope by as much.
void place_retrieval(KSweepEvidence& e, double exponent, double range = 0.5) {
  default_grid(e);
  double mean_log_n = 0;
  for (Index n : e.sizes) mean_log_n += std::log10(double(n)) / double(e.sizes.size());
  for (std::size_t c = 0; c < e.curves.size(); ++c) {
    const double half = exponent * (std::log10(double(e.sizes[c])) - mean_log_n);
    e.curves[c] = retrieval_curve(half, {-1.25, -0.75, -0.25, 0.25, 0.75, 1.25}, {0, 0, 2, 6, 8, 8}, range);
    e.ranges[c] = range_under(seed_mean(kChance + range, 0, int(kDesignSeeds), 2000), range);
  }
}

// The interval's upper end at 0.5 + x: the law placed below 0.5 + x by the upper half-width its replicates give.
void upper_end_at(KSweepEvidence& e, double x) {
  place_retrieval(e, 0.5);
  const double hi = judge_k_retrieval(e, Thresholds{}).ci_hi;
  place_retrieval(e, 0.5 + x - (hi - 0.5));
}

// The smallest N's failing runs raised to chance + x of its range: at or over the retrieval level every one of its runs
// retrieves, and its half-point lies below its grid.
void smallest_shelf_at(KSweepEvidence& e, double x) {
  place_retrieval(e, 0.5);
  for (auto& r : e.curves.front().runs) r.accuracy = std::max(r.accuracy, kChance + x * 0.5);
}

// The smallest and the largest N with a dynamic range of x, the others unmeasured.
void extremes_with_range(KSweepEvidence& e, double x) {
  place_retrieval(e, 0.5, x);
  for (std::size_t c = 1; c + 1 < e.curves.size(); ++c) e.ranges[c] = DynamicRange{};
}

// The largest N's runs below its half-point (none of which retrieve) gathered at one point `gap` under it, so that the
// replicates' half-points fall below the grid's first k in just over x of them.
void largest_censored_in(KSweepEvidence& e, double x) {
  place_retrieval(e, 0.4);  // the gathered point lifts the largest N's half-point: the law's interval stays in the band
  const double half = e.curves.back().x[2] + 0.25;
  const auto with_gap = [&](double gap) {
    auto moved = e;
    moved.curves.back() = retrieval_curve(half, {-gap, 0.25, 0.75, 1.25}, {0, 6, 8, 8}, 0.5);
    return moved;
  };
  const auto count = [&](double gap) {
    const auto moved = with_gap(gap);
    const auto r = retrieval(moved, able_sizes(moved, kMinDynamicRange.value), kEdgeDelta.value);
    return draws_at_an_end(r.draws, r.data.curves, r.data.curves.size() - 1);
  };
  e = with_gap(gap_reaching(-0.2, 1.25, std::size_t(std::floor(x * kReplicates)) + 1, count));
}

}  // namespace

void register_k_retrieval_claim(ClaimRegistry& r, const Regime& regime, const std::string& init_text) {
  r.add(make_claim<KSweepEvidence>(
      {.id = claim_id(regime),
       .source = "POLY §5, Fig 1",
       .statement = "with phi(x) = x^3/k, the k needed to train well grows like sqrt(N) (read as the k at which half "
                    "the seeds retrieve the answer, on a task whose runs retrieve it or stay at chance)",
       .method = text(
           regime.source(sweep::k), " under ", init_text,
           ": per run, retrieved when it ends half the dynamic range above content-free attention; per N the "
           "half-point of a logistic in log k with one slope shared by the N (Firth's penalty); slope of "
           "log k_half on log N by a parametric bootstrap"),
       .sweep = regime.sweep(sweep::k)},
      {.measure = [regime](const ClaimContext& ctx) { return measure_k_sweep(ctx, regime); },
       .judge = judge_k_retrieval,
       .contradict = [](KSweepEvidence& e) { place_retrieval(e, 1.5); },  // like N^1.5
       .support = [](KSweepEvidence& e) { place_retrieval(e, 0.5); },
       .crossings = {{&kSqrtBand, "the exponent interval's upper end at 1/2 + x", Verdict::holds, Verdict::inconclusive,
                      upper_end_at},
                     {&kEdgeDelta, "the smallest N's failing runs at chance + x of its range", Verdict::holds,
                      Verdict::violated, smallest_shelf_at},
                     {&kMinDynamicRange, "the smallest and largest N's dynamic range (the others none)",
                      Verdict::inconclusive, Verdict::holds, extremes_with_range},
                     {&kCensoredShare, "the largest N's half-point below its grid in just over x of the replicates",
                      Verdict::holds, Verdict::inconclusive, largest_censored_in}}}));
}

}  // namespace attnlab::training_claims
