#pragma once
// What the training claims share: the rows of the sweeps by seed and regime, accuracy curves fitted with the paired
// seeds as blocks and drawn from that fit, and the lines every training report prints.
#include <attnlab/core/rng.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/theory/claims.hpp>
#include <attnlab/theory/training_rows.hpp>
#include <attnlab/theory/verdicts.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <set>
#include <stdexcept>
#include <tuple>

namespace attnlab::training_claims {

using namespace training_rows;

inline constexpr int kReplicates = 4000;

// A control run beside a sweep's grid (softmax, uniform mixing, attention off): the baselines a difference is read
// against, judged by no claim.
bool is_control(const ResultRow& r);

// The rows of `sweep` (empty when the context has none), its controls' only when asked for.
std::vector<ResultRow> sweep_rows(const ClaimContext& ctx, const std::string& sweep, bool with_controls = false);

// A configuration's accuracy over seeds. Its standard error is never below the binomial error of the
// validation sets, so that one or two seeds that happen to agree do not claim more than the data holds.
struct SeedMean {
  double mean = 0, sd = 0, se = 0;
  int seeds = 0;
  double images = 0;     // validation images per seed
  bool floored = false;  // se is the binomial floor (a known variance, not estimated from the seeds)
};

SeedMean seed_mean(double mean, double sd, int seeds, double images);

SeedMean seed_mean(const std::vector<double>& values, double validation_images);

// The same configuration measured at `mean` with no seed-to-seed spread (the binomial error alone).
SeedMean without_spread(const SeedMean& s, double mean);

// A row's final validation accuracy, checked.
double final_accuracy(const ResultRow& r);

// Final validation accuracy per configuration (rows grouped by `key`), averaged over seeds.
template <class Key>
std::map<Key, SeedMean> accuracies(const std::vector<ResultRow>& rows,
                                   const std::function<Key(const ResultRow&)>& key) {
  std::map<Key, std::vector<double>> values;
  std::map<Key, double> images;
  for (const auto& r : rows) {
    if (r.quantity != quantity::val_accuracy) continue;
    values[key(r)].push_back(final_accuracy(r));
    images[key(r)] = extra_number(r, column::validation);
  }
  std::map<Key, SeedMean> out;
  for (const auto& [k, v] : values) out[k] = seed_mean(v, images[k]);
  return out;
}

// One training run of a curve: its grid point, its seed and its final validation accuracy. A seed fixes the
// initialisation, the data order and the validation split alike at every point of a curve: the seeds are paired.
struct CurveRun {
  std::size_t point = 0;
  std::uint64_t seed = 0;
  double accuracy = 0;
};

// A curve y(x) sampled on an ascending grid, with every run behind it.
struct GridCurve {
  std::vector<double> x;
  std::vector<SeedMean> y;  // each point's mean over its own seeds
  std::vector<CurveRun> runs;
};

// The accuracy curves of the rows: `at` gives a row's curve and its coordinate on that curve's grid.
template <class Key>
std::map<Key, GridCurve> grid_curves(const std::vector<ResultRow>& rows,
                                     const std::function<std::pair<Key, double>(const ResultRow&)>& at) {
  std::map<Key, std::map<double, std::vector<std::pair<std::uint64_t, double>>>> runs;
  std::map<Key, double> images;
  for (const auto& r : rows) {
    if (r.quantity != quantity::val_accuracy) continue;
    const auto [key, x] = at(r);
    runs[key][x].emplace_back(std::uint64_t(extra_number(r, column::seed)), final_accuracy(r));
    images[key] = extra_number(r, column::validation);
  }
  std::map<Key, GridCurve> out;
  for (const auto& [key, points] : runs) {
    auto& c = out[key];
    for (const auto& [x, seeds] : points) {
      std::vector<double> values;
      for (const auto& [seed, accuracy] : seeds) {
        c.runs.push_back({.point = c.x.size(), .seed = seed, .accuracy = accuracy});
        values.push_back(accuracy);
      }
      c.x.push_back(x);
      c.y.push_back(seed_mean(values, images[key]));
    }
  }
  return out;
}

// A curve with the seeds as blocks: accuracy(point, seed) = mu(point) + b(seed) + e, the b summing to zero, fitted by
// least squares. A seed that trains well everywhere then lifts no point above the others, and points run with
// different seed sets (two seeds on the grid, five at the refinement) compare as if every seed had run every point.
// The residual variance is estimated from the runs alone, its uncertainty carried by its degrees of freedom: a seed's
// validation split is part of its block, so the binomial error of an independent validation set bounds nothing here.
struct BlockedCurve {
  Eigen::VectorXd mu;        // per point: the accuracy of the average seed
  Eigen::MatrixXd unit_cov;  // mu's covariance per unit residual variance
  double residual_sd = 0;    // of a run about mu + b
  int dof = 0;               // residual_sd's degrees of freedom
  double unblocked_sd = 0;   // of a run about its point's mean, the seeds left in (pooled over the points)
  double se(std::size_t point) const { return residual_sd * std::sqrt(unit_cov(Index(point), Index(point))); }
};

// nullopt when the seeds do not connect the points (a group of points shares no seed with the rest: no common
// baseline) or leave no residual to estimate the noise from.
std::optional<BlockedCurve> fit_blocks(const GridCurve& c);

// The maximiser of a curve sampled on an ascending grid: the parabola through the best point and its neighbours (the
// best grid point itself at an end of the grid).
double refined_argmax(const std::vector<double>& x, const std::vector<double>& y);

double refined_argmax(const std::vector<double>& x, const Eigen::VectorXd& y);

// The curve replaced by a parabola peaking at x_star at the curve's best accuracy, falling to half of it two
// grid steps away and flat beyond, with no seed-to-seed spread: a best scale the draws locate exactly.
void peak_at(GridCurve& c, double x_star);

// The standard variates behind posterior_draws, per replicate and curve: t = sqrt(dof/χ²_dof), then z ~ N(0, I) of the
// curve's points, laid out flat. They depend on the seed, the claim and each curve's (dof, points) alone, so the
// sensitivity scan's re-judges of one claim share them: a small cache holds the last few.
using CurveShapes = std::vector<std::pair<int, Index>>;  // per curve: dof, points

// `replicates` draws of every curve's seed-adjusted accuracies from the least-squares fit's posterior under a flat
// prior, the multivariate t: mu = mu_hat + t sd L z with L Lᵀ mu's covariance per unit variance and t² = dof/χ²_dof,
// each reduced to `statistic(curve, mu)`: draws[r][curve].
using CurveStatistic = std::function<double(std::size_t curve, const Eigen::VectorXd& mu)>;

std::vector<std::vector<double>> posterior_draws(const std::vector<BlockedCurve>& fits, std::uint64_t seed,
                                                 const std::string& claim, const CurveStatistic& statistic);

// The maximiser of each curve per draw.
std::vector<std::vector<double>> posterior_argmax(const std::vector<GridCurve>& curves,
                                                  const std::vector<BlockedCurve>& fits, std::uint64_t seed,
                                                  const std::string& claim);

// The central 95% interval of one curve's draws: {2.5%, 97.5%} of draws[r][curve] over r.
std::pair<double, double> draw_interval(const std::vector<std::vector<double>>& draws, std::size_t curve);

// The paired difference a − b over the seeds both ran (a seed fixes the initialisation streams and the data order
// of every activation alike).
MeanInterval paired(const std::map<std::uint64_t, double>& a, const std::map<std::uint64_t, double>& b);

std::string percent(double accuracy);

std::string mean_sd(const SeedMean& s);

// A task's dynamic range at one N (or depth): the softmax control's seed-mean accuracy above the better content-free
// control.
struct DynamicRange {
  std::optional<SeedMean> softmax{}, uniform{}, off{};
  std::optional<double> content_free() const {  // the better of uniform mixing and attention off
    if (!(uniform || off)) return std::nullopt;
    return std::max(uniform ? uniform->mean : 0.0, off ? off->mean : 0.0);
  }
  std::optional<double> value() const {
    if (!softmax || !content_free()) return std::nullopt;
    return softmax->mean - *content_free();
  }
  std::string describe() const {
    const auto part = [](const char* name, const std::optional<SeedMean>& s) {
      return s ? text(", ", name, " ", percent(s->mean), "%") : std::string{};
    };
    const auto runs = text(part("softmax", softmax), part("uniform", uniform), part("off", off));
    if (runs.empty()) return "not measured (no control runs)";
    const auto v = value();
    return text(v ? text(sig(100 * *v, 3), " points") : std::string("not measured"), " (", runs.substr(2), ")");
  }
};

// Controls `range` apart for the falsify cases: softmax at `top`, uniform mixing and attention off `range` under it.
DynamicRange range_under(const SeedMean& top, double range);

// The controls' accuracies (softmax, uniform mixing, attention off, seed means) per `key` (N, or a table's axis value),
// from the control runs and from a grid that trains softmax itself: how far attention can move the task there.
template <class Key>
std::map<Key, DynamicRange> dynamic_ranges(const std::vector<ResultRow>& rows,
                                           const std::function<Key(const ResultRow&)>& key) {
  std::vector<ResultRow> controls;
  std::copy_if(rows.begin(), rows.end(), std::back_inserter(controls), [](const ResultRow& r) {
    return r.activation == control::softmax || r.activation == control::uniform || r.activation == control::off;
  });
  std::map<Key, DynamicRange> out;
  for (const auto& [at, mean] : accuracies<std::pair<Key, std::string>>(controls, [&](const ResultRow& r) {
         return std::pair{key(r), r.activation};
       })) {
    auto& range = out[at.first];
    (at.second == control::softmax ? range.softmax : at.second == control::uniform ? range.uniform : range.off) = mean;
  }
  return out;
}

// Per N.
std::map<Index, DynamicRange> dynamic_ranges(const std::vector<ResultRow>& rows);

// The least dynamic range that can show an activation's effect on accuracy: below it a training claim is
// "inconclusive: the task cannot show it".
extern const Threshold kMinDynamicRange;

// The dynamic range at each N, for the details: "N=16: 80 points (softmax 98%, uniform 18%)".
std::string ranges_line(const std::vector<Index>& sizes, const std::vector<DynamicRange>& ranges);

// The task a sweep trained and its dynamic range at every N, for the details of claims that judge no accuracy (the
// norm claims): "task: Fashion-MNIST padded to 32x32; dynamic range ... N=8: ...".
std::string task_and_ranges(const std::string& task, const std::vector<ResultRow>& rows);

// "inconclusive: the task cannot show it", when fewer than `needed` N (1 or 2) can.
std::string cannot_show(double least, const std::string& range_text, int needed = 2);

ClaimOutcome no_results(const std::string& sweep);

// The training sets the epochs count: Fashion-MNIST's 60,000 images and --data recall's default 250,000 generated
// examples (sweeps::kRecallTrainExamples), each less the validation rows.
inline constexpr double kFashionImages = 60000, kRecallExamples = 250000;

// The task of every sweep but the recall regimes'.
inline constexpr const char* kFashionTask = "Fashion-MNIST padded to 32x32";

// Our setup read off the rows (data, model, budget), named next to the paper's in every training claim's report.
std::string setup_line(const char* paper, const std::vector<ResultRow>& rows, const std::string& task = kFashionTask,
                       double train_set = kFashionImages);

// Every curve's seed-blocked fit, each curve drawn into `accuracy`. A curve whose seeds do not connect its points or
// leave no residual (one seed at every point has no seed-to-seed spread) cannot be fitted and is left out, said so.
struct FittedCurves {
  std::vector<std::size_t> kept{};   // the curves fitted, ascending
  std::vector<BlockedCurve> fits{};  // theirs
  std::string left_out{};            // which were not and why ("" when none)
};

FittedCurves fit_curves(const std::vector<GridCurve>& curves, const std::vector<std::string>& labels,
                        const std::function<double(double)>& x_of, Figure& accuracy);

template <class T>
std::vector<T> kept_only(const std::vector<T>& all, const std::vector<std::size_t>& kept) {
  std::vector<T> out;
  for (std::size_t i : kept) out.push_back(all[i]);
  return out;
}

// How much of the runs' spread the seeds, taken out as blocks, account for.
std::string blocking_summary(const std::vector<BlockedCurve>& fits);

// How the best scales are located, for the reports.
std::string best_scale_method(const char* what, const char* along);

// What a training claim judges: the runs under one Q/K init, of the sweeps' model (results/<sweep>.csv) or of a
// preset model trained into a folder of its own (results/vit-tiny/<sweep>.csv), so that models are never mixed.
struct Regime {
  std::string init = "timm";
  std::string model{};  // "" for the sweeps' model
  // "" for Fashion-MNIST; else a recipe of the recall task, trained into results/<task>/ (kRecallRecipes).
  std::string task{};
  std::string sweep(const std::string& name) const {
    return task.empty() ? sweep_path(model, name) : sweep_path(model, task + "/" + name);
  }
  // The rows of sweep `name` trained under this init and readout (rows written before the init column were timm's,
  // before the readout column the cls token's).
  std::vector<ResultRow> rows(const ClaimContext& ctx, const std::string& name, bool with_controls = false) const {
    auto rows = sweep_rows(ctx, sweep(name), with_controls);
    const char* readout = reads_query() ? "last" : "cls";
    std::erase_if(rows, [&](const ResultRow& r) {
      return find_extra(r, column::init).value_or("timm") != init ||
             find_extra(r, column::readout).value_or("cls") != readout;
    });
    return rows;
  }
  // What a claim's id or figure's name adds: nothing for timm and the sweeps' model (the names they had before --init
  // and --model existed), else ".unit", ".vit_tiny", ".unit.recall", ...
  std::string suffix(const char* separator) const {
    const auto part = [&](std::string s) {
      std::replace(s.begin(), s.end(), '-', '_');
      return s.empty() ? s : separator + s;
    };
    return (init == "timm" ? "" : separator + init) + part(model) + part(task);
  }
  std::string label() const {
    return text(model.empty() ? "" : model + ", ", task.empty() ? "fashion-mnist" : task, ", init ", init);
  }
  std::string task_text() const {
    if (task.empty()) return kFashionTask;
    const std::string description = recipe().description;
    return text("associative recall (--data recall: N - 1 key-value tokens and a query, 10 classes)",
                description.empty() ? "" : ", " + description);
  }
  // The sweep a claim's method names: "k_sweep", or "vit-tiny/k_sweep (--model vit-tiny)"; `flags` beyond the
  // regime's own join them.
  std::string source(const std::string& name, const std::string& flags = "") const {
    std::string all = model.empty() ? "" : "--model " + model;
    for (const auto& f : {task_flags(), flags})
      if (!f.empty()) all += (all.empty() ? "" : " ") + f;
    return all.empty() ? name : text(sweep(name), " (", all, ")");
  }
  // The flags that train the task's recipe: "--data recall --readout last --clip 0", or "" for Fashion-MNIST.
  std::string task_flags() const {
    if (task.empty()) return "";
    const std::string flags = recipe().flags;
    return flags.empty() ? "--data recall" : "--data recall " + flags;
  }
  bool reads_query() const { return !task.empty() && recipe().reads_query; }
  const RecallRecipe& recipe() const {
    const auto* r = recall_recipe(task);
    if (r == nullptr) throw std::logic_error("no recall recipe trains into " + task);
    return *r;
  }
  double train_set() const { return task.empty() ? kFashionImages : kRecallExamples; }
};

inline const Regime kVitTinyRegime{.init = "timm",
                                   .model = model::vit_tiny};  // POLY's Fig 1/2 model, its experiments' init

// The regime's claims report "no rows" alike: timm's sweep of the sweeps' model missing, or the other init or model not
// trained.
// `flags`: what the sweep's command needs beyond the regime's own (k_sweep's "--p 1").
ClaimOutcome no_regime_rows(const Regime& regime, const std::string& sweep, const std::string& flags = "");

// Each part of the catalogue adds its claims, in catalogue order (training_claims.cpp).
void register_k_sweep_claims(ClaimRegistry& r);
void register_activation_table_claims(ClaimRegistry& r);
void register_training_norm_claims(ClaimRegistry& r);
void register_alpha_sweep_claims(ClaimRegistry& r);
void register_periodic_table_claims(ClaimRegistry& r);
void register_training_saturation_claims(ClaimRegistry& r);

}  // namespace attnlab::training_claims
