#include "sweep_points.hpp"
#include "point_store.hpp"

#include <attnlab/core/distributed.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/theory/training_rows.hpp>
#include <attnlab/train/data.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <thread>

namespace attnlab::sweeps {
namespace {

using namespace training_rows;

// What one training run measured: quantities with their step and layer (norms), and where it diverged.
// Points store only this; the labels (activation, N, seed, ...) are added when the sweep assembles its rows,
// so a new column never retrains anything.
// Trains one point. A run whose loss or gradient turns non-finite stops there and is evaluated with its last
// finite parameters.
io::PointResult train_point(const Sweep& sweep, const Grid& g, const Point& p, const train::Dataset* images) {
  auto [train_part, validation] = run_data(g.run.data, p.config.model, p.config.seed, images);
  train::Trainer trainer(p.config, std::move(train_part), std::move(validation));
  io::PointResult result;
  while (!trainer.done()) {
    try {
      trainer.train_step();
    } catch (const train::NonFiniteError&) {
      result.diverged_at = trainer.step();
      break;
    }
  }
  const auto eval = trainer.evaluate();
  const double train_loss = trainer.records().empty() ? std::nan("") : trainer.records().back().loss;
  result.measurements = {
      {quantity::val_accuracy, eval.accuracy}, {quantity::val_loss, eval.loss}, {quantity::train_loss, train_loss}};
  if (sweep.norms)
    for (const auto& rec : trainer.records())
      for (Index l : norm_layers(p.config.model.depth))
        if (!rec.norms.empty()) {
          const auto& n = rec.norms[std::size_t(l - 1)];
          result.measurements.push_back({quantity::phi_fro, n.phi, rec.step, l});
          result.measurements.push_back({quantity::jacobian_fro, n.jacobian, rec.step, l});
          result.measurements.push_back({quantity::phi_fro_max, n.phi_max, rec.step, l});
          result.measurements.push_back({quantity::jacobian_fro_max, n.jacobian_max, rec.step, l});
          result.measurements.push_back({quantity::saturated_share, n.saturated_share, rec.step, l});
          result.measurements.push_back({quantity::logit_kurtosis, n.logit_kurtosis, rec.step, l});
        }
  return result;
}

// The norms a point's rows keep (its file keeps every logged step): at most kNormRowsPerRun + 1 steps evenly spaced
// over the configured budget, the same for every run of it (a diverged run keeps the others' steps), with its last
// step; and per layer only the largest of the per-matrix maxima, at the step where it occurred. A campaign's CSV stays
// a few MB; every logged matrix still enters the bounds' check through its maximum.
constexpr long kNormRowsPerRun = 72;
std::vector<io::Measurement> kept_measurements(const io::PointResult& result, long steps, long log_every) {
  long last = 0;
  std::map<std::pair<std::string, Index>, const io::Measurement*> largest;  // (quantity, layer) of the maxima
  for (const auto& m : result.measurements) {
    last = std::max(last, m.step);
    if (m.quantity != quantity::phi_fro_max && m.quantity != quantity::jacobian_fro_max) continue;
    auto& l = largest[{m.quantity, m.layer}];
    if (!l || m.value > l->value || std::isnan(l->value)) l = &m;  // NaN stays only where every step is NaN
  }
  const long logged = std::max(1L, steps / log_every);
  const long stride = log_every * ((logged + kNormRowsPerRun - 1) / kNormRowsPerRun);
  std::vector<io::Measurement> kept;
  for (const auto& m : result.measurements) {
    if (m.quantity == quantity::phi_fro_max || m.quantity == quantity::jacobian_fro_max) {
      if (largest.at({m.quantity, m.layer}) == &m) kept.push_back(m);
    } else if (m.layer == 0 || m.step % stride == 0 || m.step == last) {
      kept.push_back(m);
    }
  }
  return kept;
}

// The rows of a point: its kept measurements with the configuration's columns.
std::vector<ResultRow> point_rows(const Sweep& sweep, const Grid& g, const Point& p, const io::PointResult& result) {
  const auto& c = p.config;
  const auto& info = find_activation(c.model.activation.name);
  std::vector<ResultRow> rows;
  for (const auto& m : kept_measurements(result, c.steps, c.log_every)) {
    ResultRow r;
    r.study = sweep.name;
    r.quantity = m.quantity;
    r.activation = c.model.activation.label();
    r.N = c.model.patches(), r.D = c.model.dim, r.d = c.model.head_dim();
    if (info.uses_p) r.p = c.model.activation.p, r.k = c.model.activation.k;
    r.trials = 1;
    const bool finite = std::isfinite(m.value);
    r.value = {finite ? 1 : 0, finite ? 0 : 1, m.value, 0, m.value, m.value};
    r.extra = {{column::seed, c.seed},
               {column::validation, g.run.data.validation},
               {column::steps, c.steps},
               {column::batch, c.batch},
               {column::depth, c.model.depth},
               {column::function, c.model.activation.name},
               {column::init, train::to_string(c.model.qk_init)}};
    if (c.model.readout != train::Readout::cls) r.extra.push_back({column::readout, train::to_string(c.model.readout)});
    if (info.uses_alpha) r.extra.push_back({column::alpha, c.model.activation.alpha});
    for (const auto& label : p.labels)  // a grid label the activation's columns already hold (alpha) is not repeated
      if (extra_value(r, label.first).empty()) r.extra.push_back(label);
    if (m.layer > 0)
      r.extra.insert(r.extra.end(), {{column::step, m.step},
                                     {column::layer, m.layer},
                                     {column::tokens, c.model.tokens()},
                                     {column::weight_std, c.model.qk_weight_std()}});
    r.extra.push_back({column::diverged_at, result.diverged_at < 0 ? Cell() : Cell(result.diverged_at)});
    rows.push_back(std::move(r));
  }
  return rows;
}

}  // namespace

std::filesystem::path point_dir(const std::filesystem::path& out, const std::string& sweep) {
  return out / "points" / sweep;
}

namespace {

// Every point's rows in order, appended to `into`: each point loaded, trained here, or waited for (under finished_only,
// loaded or left out).
void run_points(const Sweep& sweep, const Grid& g, const std::vector<Point>& points, const std::filesystem::path& out,
                const std::string& stage, io::ProgressBar& progress_bar, SweepRows& into) {
  PointStore store(point_dir(out, sweep.name));
  std::unique_ptr<train::Dataset> images;  // loaded on the first point trained here (the recall task generates its own)
  std::vector<std::optional<io::PointResult>> results(points.size());
  std::size_t finished = 0, trained = 0, missing = 0;
  const auto progress = progress_bar.task(text(sweep.name, " ", stage));
  // Loads point i, or trains it under its lock; false when another process holds the lock.
  const auto settle = [&](std::size_t i) {
    const auto key = point_key(sweep, g, points[i]);
    results[i] = store.load(key);
    if (!results[i] && g.finished_only) {
      ++missing;
      return true;
    }
    if (!results[i]) {
      const int lock = store.try_lock(key);
      if (lock < 0) return false;
      results[i] = store.load(key);  // finished by its last holder while this process waited for the lock
      if (!results[i]) {
        if (!images && g.run.data.name != "recall")
          images = std::make_unique<train::Dataset>(load_images(g.run.data, false));
        results[i] = train_point(sweep, g, points[i], images.get());
        store.store(key, *results[i]);
        ++trained;
      }
      store.unlock(key, lock);
    }
    ++finished;
    if (progress) progress(std::uint32_t(finished), std::uint32_t(points.size()));
    return true;
  };
  if (g.finished_only) {
    for (std::size_t i = 0; i < points.size(); ++i) settle(i);
    std::fprintf(stderr, "%s: %zu of %zu %s not finished yet, left out (--finished-only)\n", sweep.name.c_str(),
                 missing, points.size(), stage.c_str());
  } else {
    // The ranks of an MPI job take points from one queue, so a slow point holds up only its rank; then each rank
    // reads the points the others settled (and waits for those another job holds).
    {
      distributed::WorkQueue queue(points.size());
      for (auto i = queue.next(); i < points.size(); i = queue.next()) settle(i);
    }
    distributed::barrier();
    while (finished < points.size()) {
      bool waiting = false;
      for (std::size_t i = 0; i < points.size(); ++i)
        if (!results[i]) waiting |= !settle(i);
      if (waiting && finished < points.size()) std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    std::fprintf(stderr, "%s: trained %zu of %zu %s here (the others by earlier runs or other processes)\n",
                 sweep.name.c_str(), trained, points.size(), stage.c_str());
  }
  into.points += points.size();
  into.left_out += missing;
  for (std::size_t i = 0; i < points.size(); ++i) {
    if (!results[i]) continue;
    const auto part = point_rows(sweep, g, points[i], *results[i]);
    into.rows.insert(into.rows.end(), part.begin(), part.end());
  }
}

}  // namespace

SweepRows run_sweep(const Sweep& sweep, const Grid& g, std::uint64_t seed, const std::filesystem::path& out,
                    io::ProgressBar& progress_bar) {
  const auto points = grid_points(sweep, g, seed);
  SweepRows result;
  run_points(sweep, g, points, out, "points", progress_bar, result);
  if (!sweep.refine || g.refine_seeds < 1) return result;
  std::set<std::string> keys;
  for (const auto& p : points) keys.insert(point_key(sweep, g, p));
  std::vector<Point> refined;
  for (auto& p : sweep.refine(g, seed, result.rows))
    if (keys.insert(point_key(sweep, g, p)).second) refined.push_back(std::move(p));
  run_points(sweep, g, refined, out, "refined points", progress_bar, result);
  return result;
}

}  // namespace attnlab::sweeps
