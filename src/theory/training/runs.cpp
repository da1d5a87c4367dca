#include "runs.hpp"

namespace attnlab::training_claims {

bool is_control(const ResultRow& r) { return find_extra(r, column::control).has_value(); }

std::vector<ResultRow> sweep_rows(const ClaimContext& ctx, const std::string& sweep, bool with_controls) {
  auto rows = ctx.training_rows ? ctx.training_rows(sweep) : std::vector<ResultRow>{};
  if (!with_controls) std::erase_if(rows, is_control);
  return rows;
}

SeedMean seed_mean(double mean, double sd, int seeds, double images) {
  SeedMean s{.mean = mean, .sd = sd, .seeds = seeds, .images = images};
  const double binomial = std::sqrt(std::max(mean * (1 - mean), 1e-4) / (images * seeds));
  s.floored = binomial > sd / std::sqrt(double(seeds));
  s.se = s.floored ? binomial : sd / std::sqrt(double(seeds));
  return s;
}

SeedMean seed_mean(const std::vector<double>& values, double validation_images) {
  const Estimate e = estimate(values);
  const int seeds = int(values.size());
  return seed_mean(e.mean, seeds > 1 ? e.se * std::sqrt(double(seeds)) : 0.0, seeds, validation_images);
}

SeedMean without_spread(const SeedMean& s, double mean) { return seed_mean(mean, 0, s.seeds, s.images); }

double final_accuracy(const ResultRow& r) {
  if (!std::isfinite(r.value.mean))
    throw std::runtime_error(
        text("training results: the val_accuracy of ", r.activation, " at N=", r.N, " is not finite"));
  return r.value.mean;
}

std::optional<BlockedCurve> fit_blocks(const GridCurve& c) {
  std::vector<std::uint64_t> seeds;
  for (const auto& r : c.runs) seeds.push_back(r.seed);
  std::sort(seeds.begin(), seeds.end());
  seeds.erase(std::unique(seeds.begin(), seeds.end()), seeds.end());
  const Index points = Index(c.x.size()), blocks = Index(seeds.size()), n = Index(c.runs.size());
  const Index unknowns = points + blocks - 1;
  Eigen::MatrixXd design = Eigen::MatrixXd::Zero(n, unknowns);
  Eigen::VectorXd y(n), point_sum = Eigen::VectorXd::Zero(points), point_runs = Eigen::VectorXd::Zero(points);
  for (Index i = 0; i < n; ++i) {
    const auto& r = c.runs[std::size_t(i)];
    const auto block = Index(std::lower_bound(seeds.begin(), seeds.end(), r.seed) - seeds.begin());
    design(i, Index(r.point)) = 1;
    if (block + 1 < blocks) design(i, points + block) = 1;
    else  // the last seed's effect is minus the sum of the others'
      design.row(i).tail(blocks - 1).setConstant(-1);
    y(i) = r.accuracy;
    point_sum(Index(r.point)) += r.accuracy, point_runs(Index(r.point)) += 1;
  }
  const Eigen::FullPivLU<Eigen::MatrixXd> gram(design.transpose() * design);
  if (gram.rank() < unknowns || n == unknowns) return std::nullopt;
  const Eigen::MatrixXd inverse = gram.inverse();
  const Eigen::VectorXd fitted = inverse * (design.transpose() * y);
  double within = 0;
  for (const auto& r : c.runs)
    within += std::pow(r.accuracy - point_sum(Index(r.point)) / point_runs(Index(r.point)), 2);
  return BlockedCurve{.mu = fitted.head(points),
                      .unit_cov = inverse.topLeftCorner(points, points),
                      .residual_sd = std::sqrt((y - design * fitted).squaredNorm() / double(n - unknowns)),
                      .dof = int(n - unknowns),
                      .unblocked_sd = std::sqrt(within / double(n - points))};
}

double refined_argmax(const std::vector<double>& x, const std::vector<double>& y) {
  const auto i = std::size_t(std::max_element(y.begin(), y.end()) - y.begin());
  if (i == 0 || i + 1 == x.size()) return x[i];
  const double a = x[i - 1], b = x[i], c = x[i + 1], fa = y[i - 1], fb = y[i], fc = y[i + 1];
  const double num = (b - a) * (b - a) * (fb - fc) - (b - c) * (b - c) * (fb - fa);
  const double den = (b - a) * (fb - fc) - (b - c) * (fb - fa);
  if (den == 0) return b;
  return std::clamp(b - 0.5 * num / den, a, c);
}

double refined_argmax(const std::vector<double>& x, const Eigen::VectorXd& y) {
  return refined_argmax(x, std::vector<double>(y.data(), y.data() + y.size()));
}

void peak_at(GridCurve& c, double x_star) {
  double peak = 0;
  for (const auto& y : c.y) peak = std::max(peak, y.mean);
  const double width = 2 * (c.x.back() - c.x.front()) / double(c.x.size() - 1);
  const auto at = [&](std::size_t i) {
    const double u = (c.x[i] - x_star) / width;
    return peak * std::max(1 - 0.5 * u * u, 0.5);
  };
  for (std::size_t i = 0; i < c.x.size(); ++i) c.y[i] = without_spread(c.y[i], at(i));
  for (auto& r : c.runs) r.accuracy = at(r.point);
}

namespace {

std::shared_ptr<const std::vector<double>> standard_variates(std::uint64_t seed, const std::string& claim,
                                                             const CurveShapes& shapes) {
  using Key = std::tuple<std::uint64_t, std::string, CurveShapes>;
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<const std::vector<double>>> cache;
  Key key{seed, claim, shapes};
  {
    const std::lock_guard lock(mutex);
    if (const auto it = cache.find(key); it != cache.end()) return it->second;
  }
  Index per_replicate = 0;
  for (const auto& [dof, points] : shapes) per_replicate += 1 + points;
  auto variates = std::make_shared<std::vector<double>>();
  variates->reserve(std::size_t(kReplicates * per_replicate));
  for (int r = 0; r < kReplicates; ++r) {
    const GaussianStream noise(seed, hash_string(claim), std::uint32_t(r), StreamTag::Search);
    std::uint64_t e = 0;
    for (const auto& [dof, points] : shapes) {
      double chi2 = 0;
      for (int j = 0; j < dof; ++j) chi2 += std::pow(noise.normal(e++), 2);
      variates->push_back(std::sqrt(dof / chi2));
      for (Index i = 0; i < points; ++i) variates->push_back(noise.normal(e++));
    }
  }
  const std::lock_guard lock(mutex);
  if (cache.size() >= 8) cache.clear();  // a claim's re-judges come together; older entries are not asked for again
  return cache[key] = std::move(variates);
}

}  // namespace

std::vector<std::vector<double>> posterior_draws(const std::vector<BlockedCurve>& fits, std::uint64_t seed,
                                                 const std::string& claim, const CurveStatistic& statistic) {
  std::vector<Eigen::MatrixXd> factors;
  CurveShapes shapes;
  for (const auto& f : fits) {
    factors.emplace_back(Eigen::LLT<Eigen::MatrixXd>(f.unit_cov).matrixL());
    shapes.emplace_back(f.dof, f.mu.size());
  }
  const auto variates = standard_variates(seed, claim, shapes);
  const double* v = variates->data();
  std::vector<std::vector<double>> draws(kReplicates, std::vector<double>(fits.size()));
  for (int r = 0; r < kReplicates; ++r)
    for (std::size_t c = 0; c < fits.size(); ++c) {
      const double spread = fits[c].residual_sd * *v++;
      const Eigen::Map<const Eigen::VectorXd> z(v, fits[c].mu.size());
      v += fits[c].mu.size();
      draws[std::size_t(r)][c] = statistic(c, fits[c].mu + spread * factors[c] * z);
    }
  return draws;
}

std::pair<double, double> draw_interval(const std::vector<std::vector<double>>& draws, std::size_t curve) {
  std::vector<double> column;
  column.reserve(draws.size());
  for (const auto& d : draws) column.push_back(d[curve]);
  return {quantile(column, 0.025), quantile(column, 0.975)};
}

std::vector<std::vector<double>> posterior_argmax(const std::vector<GridCurve>& curves,
                                                  const std::vector<BlockedCurve>& fits, std::uint64_t seed,
                                                  const std::string& claim) {
  return posterior_draws(fits, seed, claim,
                         [&](std::size_t c, const Eigen::VectorXd& mu) { return refined_argmax(curves[c].x, mu); });
}

MeanInterval paired(const std::map<std::uint64_t, double>& a, const std::map<std::uint64_t, double>& b) {
  std::vector<double> d;
  for (const auto& [seed, accuracy] : a)
    if (b.contains(seed)) d.push_back(accuracy - b.at(seed));
  return student_mean(d);
}

std::string percent(double accuracy) { return sig(100 * accuracy, 3); }

std::string mean_sd(const SeedMean& s) { return text(percent(s.mean), " ± ", percent(s.sd)); }

ClaimOutcome no_results(const std::string& sweep) {
  ClaimOutcome out;
  out.detail = text("no ", sweep, " results: run studies/", sweep,
                    " (or verify --retrain), or point --training-results at them");
  return out;
}

std::string setup_line(const char* paper, const std::vector<ResultRow>& rows, const std::string& task,
                       double train_set) {
  std::set<std::string> ours;
  for (const auto& r : rows) {
    if (r.quantity != quantity::val_accuracy) continue;  // one per run; a sweep's CSV also holds its claims' evidence
    const auto steps = find_extra(r, column::steps), batch = find_extra(r, column::batch),
               depth = find_extra(r, column::depth), validation = find_extra(r, column::validation);
    const double images = train_set - (validation ? extra_number(r, column::validation) : 0);
    const double epochs = batch && steps ? extra_number(r, column::steps) * extra_number(r, column::batch) / images : 0;
    ours.insert(text(
        "D ", r.D, depth ? text(", depth ", *depth) : "", ", head dim ", r.d, ", ", steps.value_or("?"), " AdamW steps",
        batch && steps ? text(" of batch ", *batch, " (", sig(epochs, 2), " epochs of ", images, " images)") : ""));
  }
  std::string joined;
  for (const auto& o : ours) joined += (joined.empty() ? "" : "; ") + o;
  return text("\n\nSetup. Paper: ", paper, ". Ours: ", task, ", ", joined.empty() ? "no rows" : joined, ".\n");
}

namespace {

// A curve's series for the figures: the seed-adjusted accuracy ± se (its points' own means where it has no fit).
Series accuracy_series(const std::string& label, const GridCurve& c, const std::optional<BlockedCurve>& fit,
                       const std::function<double(double)>& x_of) {
  Series s{.label = label};
  for (std::size_t i = 0; i < c.x.size(); ++i) {
    const double mean = fit ? fit->mu(Index(i)) : c.y[i].mean, se = fit ? fit->se(i) : c.y[i].se;
    s.x.push_back(x_of(c.x[i]));
    s.y.push_back(mean);
    s.lo.push_back(mean - se);
    s.hi.push_back(mean + se);
  }
  return s;
}

}  // namespace

FittedCurves fit_curves(const std::vector<GridCurve>& curves, const std::vector<std::string>& labels,
                        const std::function<double(double)>& x_of, Figure& accuracy) {
  FittedCurves out;
  std::string unfit;
  for (std::size_t c = 0; c < curves.size(); ++c) {
    const auto fit = fit_blocks(curves[c]);
    accuracy.series.push_back(accuracy_series(labels[c], curves[c], fit, x_of));
    if (fit) out.kept.push_back(c), out.fits.push_back(*fit);
    else unfit += text(unfit.empty() ? "" : ", ", labels[c]);
  }
  if (!unfit.empty())
    out.left_out = text(
        "left out: ", unfit,
        ", whose seeds do not connect the points or leave no residual (one seed at "
        "every point has no seed-to-seed spread; run --seeds 2 or more, the same seeds at every point)");
  return out;
}

std::string blocking_summary(const std::vector<BlockedCurve>& fits) {
  const auto range = [&](double BlockedCurve::*sd) {
    const auto [lo, hi] = std::minmax_element(fits.begin(), fits.end(),
                                              [&](const auto& a, const auto& b) { return a.*sd < b.*sd; });
    const auto low = sig(100 * (*lo).*sd, 2), high = sig(100 * (*hi).*sd, 2);
    return low == high ? low : text(low, "–", high);
  };
  return text("seeds as blocks: a run's sd about the fit ", range(&BlockedCurve::residual_sd), " points (",
              range(&BlockedCurve::unblocked_sd), " with the seeds left in)");
}

std::string best_scale_method(const char* what, const char* along) {
  return text(
      "Best ", what, ": the maximiser of the seed-adjusted validation accuracy, refined by the parabola in ", along,
      " through the best grid point and its neighbours. Seed-adjusted: accuracy(point, seed) = mu(point) + b(seed) "
      "+ e, fitted by least squares with the seeds as blocks (a seed fixes the initialisation, data order and "
      "validation split alike at every point), so that points trained with two seeds and with five compare "
      "alike; the residual variance is pooled over the curve's runs (a seed's validation split is part of its "
      "block, so no binomial floor of an independent split applies). Intervals: ",
      kReplicates,
      " draws of every "
      "curve's mu from the fit's multivariate t (its posterior under a flat prior, which carries the residual "
      "variance's own uncertainty).");
}

ClaimOutcome no_regime_rows(const Regime& regime, const std::string& sweep, const std::string& flags) {
  if (regime.model.empty() && regime.task.empty() && regime.init == "timm" && flags.empty()) return no_results(sweep);
  ClaimOutcome out;
  if (!regime.task.empty()) {
    out.detail = text("no ", regime.sweep(sweep), " rows trained under init ", regime.init, ": run studies/", sweep,
                      " ", regime.task_flags(), " --init ", regime.init, flags.empty() ? "" : " " + flags,
                      " --out results/", regime.task, " (docs/training.md: What runs next)");
    return out;
  }
  out.detail = text("no ", regime.sweep(sweep), " rows trained under init ", regime.init, ": run ",
                    regime.model.empty()
                        ? text("studies/", sweep, " --init timm,", regime.init)
                        : text("verify --retrain (the catalogue's ", regime.model, " grid), or studies/", sweep,
                               " --model ", regime.model, " --out results/", regime.model, " with that grid's flags"));
  return out;
}

// ---- the controls: how far attention can move a task's accuracy ----------------------------------

const Threshold kMinDynamicRange{
    "min_dynamic_range", 0.10,
    "a task whose softmax control beats the better content-free control (uniform mixing, attention off) by less than "
    "10 points cannot show the scale's effect: half of that range, the edge's delta, would be under 3 times the "
    "1.75-point resolution of a difference of 3-seed means (comparable_accuracy_margin)"};

std::map<Index, DynamicRange> dynamic_ranges(const std::vector<ResultRow>& rows) {
  return dynamic_ranges<Index>(rows, [](const ResultRow& r) { return r.N; });
}

DynamicRange range_under(const SeedMean& top, double range) {
  return {
      .softmax = top, .uniform = without_spread(top, top.mean - range), .off = without_spread(top, top.mean - range)};
}

std::string ranges_line(const std::vector<Index>& sizes, const std::vector<DynamicRange>& ranges) {
  std::string line;
  for (std::size_t c = 0; c < sizes.size(); ++c)
    line += text(line.empty() ? "" : "; ", "N=", sizes[c], ": ", ranges[c].describe());
  return text("dynamic range (softmax above the better content-free control) ", line);
}

std::string task_and_ranges(const std::string& task, const std::vector<ResultRow>& rows) {
  std::vector<Index> sizes;
  std::vector<DynamicRange> ranges;
  for (const auto& [n, range] : dynamic_ranges(rows)) sizes.push_back(n), ranges.push_back(range);
  return text("task: ", task, "; ",
              sizes.empty() ? "dynamic range not measured (no softmax or control runs)" : ranges_line(sizes, ranges));
}

std::string cannot_show(double least, const std::string& range_text, int needed) {
  return text("inconclusive: the task cannot show it: ", needed == 1 ? "no N has" : "fewer than two N have",
              " a dynamic range of at least ", sig(100 * least, 3), " points; ", range_text);
}

}  // namespace attnlab::training_claims
