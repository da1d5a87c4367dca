#pragma once
// The training sweeps' catalogue: what each sweep trains (its grid and the run every point starts from), and how a
// grid expands to points, each keyed by its whole configuration.
#include <attnlab/mc/result.hpp>
#include <attnlab/sweeps/train_run.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace attnlab::sweeps {

// What a sweep trains: its grid (each sweep exposes some of these axes as flags) and the run every point starts from.
struct Grid {
  std::vector<Index> N{};
  std::vector<KScale> k{};
  std::vector<int> powers{};  // p of x^p/k (k_sweep: x^3, POLY's; x, REPOLY §5.1.2's), each a grid axis
  std::vector<std::string> activations{}, h{};
  std::vector<double> alpha{};
  std::vector<Index> depths{};             // model depths, each a grid axis (empty: the run's depth alone)
  std::vector<std::string> inits{"timm"};  // the Q/K initialisations every point is trained under (train::QkInit)
  // Activations trained beside the grid at every N, seed and init (the activation table's names), their rows marked
  // column::control: the baselines a difference is read against (softmax; uniform mixing and attention off, which
  // ignore content).
  std::vector<std::string> controls{};
  int seeds = 2;
  int refine_seeds = 0;        // seeds of the refinement around each curve's best grid point (0: none)
  bool finished_only = false;  // train nothing: the rows of the points already finished
  TrainRun run{};
};

struct Point {
  train::TrainConfig config;
  ExtraColumns labels;  // extra columns
};

struct Sweep {
  std::string name, description;
  Grid full{}, quick{};
  std::vector<std::string>
      grid_flags{};    // of "N", "k", "p", "activation", "h", "alpha", "depths", "refine-seeds" (--controls: all)
  bool norms = false;  // keep per-layer norms along training (norm_layers)
  struct Preset {
    std::string model;  // a training_rows::model, trained into results/<model>/ (preset_of)
    Grid full{}, quick{};
  };
  std::vector<Preset> presets{};  // the campaigns of preset models, each judged by claims of its own
  std::function<std::vector<Point>(const Grid&, std::uint64_t seed)> points{};  // under the run's init
  // The second stage, chosen from the first stage's rows (all inits): points around each curve's best grid point.
  std::function<std::vector<Point>(const Grid&, std::uint64_t seed, const std::vector<ResultRow>& rows)> refine{};
  std::string refine_points{};  // what the second stage trains, for --refine-seeds' help
};

// The sweep's points and then its controls' under each of the grid's initialisations, the first init's points first.
std::vector<Point> grid_points(const Sweep& sweep, const Grid& g, std::uint64_t seed);

const std::vector<Sweep>& sweeps();
// Throws std::logic_error for a name that is not a sweep's.
const Sweep& find_sweep(const std::string& name);

// The patch that cuts the 32×32 image into N patches: a 2^⌈e/2⌉ × 2^⌊e/2⌋ grid for N = 2^e
// (N = 256, 64, 16, 8 → 2×2, 4×4, 8×8, 8×16); std::invalid_argument naming N for others.
std::pair<Index, Index> patch_for(Index N);
// The model's input for N: the image's patches from patch_for, or the recall task's N tokens (any N from 2 to 1024).
void fit_sequence_length(train::VitConfig& model, Index N, const TrainData& data);
// The layers whose norms a sweep with norms keeps: POLY's layers 2, 7 and 12 of ViT-Tiny's 12 as fractions of `depth`,
// rounded down, the middle one past the first (depth 3: 1, 2, 3; depth 6: 1, 3, 6; depth 12: 2, 7, 12).
std::vector<Index> norm_layers(Index depth);
// The preset (training_rows::model) whose folder of results/ holds a run of this shape, whose claims judge it:
// "vit-tiny" (trained with --model vit-tiny --out results/vit-tiny), or "" for every other shape (the sweeps' own, in
// results/).
std::string preset_of(const train::VitConfig& model);
// Everything that makes a point's numbers: the sweep, the run and its data.
std::string point_key(const Sweep& sweep, const Grid& g, const Point& p);

}  // namespace attnlab::sweeps
