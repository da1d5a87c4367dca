#pragma once
// One training run's configuration, bound to flags once: the `train` study and every training sweep add the same
// flags to the same train::TrainConfig, and derive its JSON and the run's key from it. A field made settable here is
// a flag of every study that trains.
#include <attnlab/train/data.hpp>
#include <attnlab/train/trainer.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

namespace attnlab::io {

// What a run trains and validates on.
struct TrainData {
  std::string name = "fashion-mnist";                   // or cifar10 (its binary batches in dir)
  std::filesystem::path dir = train::kFashionMnistDir;
  Index validation = 5000;                              // images split off the training set
  Index train_limit = 0;                                // the first K training images (0: all)
  Index test_limit = 0;                                 // the first K test images (0: all)
};

struct TrainRun {
  train::TrainConfig config{};
  TrainData data{};
};

// The flags a study takes: a sweep sets each point's activation and patch (from N) itself, and trains on
// Fashion-MNIST.
enum class TrainFlags { every, budget };

// Binds the flags of a run to `run`, whose values are their defaults: --model (a preset for --dim, --depth, --heads
// and --mlp, which may still be given), the architecture, AdamW and its schedule, augmentation, --log-every, the data
// and its split; with TrainFlags::every also --init, --activation, --p, --k, --alpha, --patch and --data (a sweep
// takes --init as a grid axis).
void add_train_flags(CLI::App& app, TrainRun& run, TrainFlags flags);
// A preset's shape (D, depth, heads, MLP: train::VitConfig::preset) set on `model`, the rest of it kept.
void set_preset_shape(train::VitConfig& model, const std::string& preset);

// Every setting of the run but those a sweep's points vary (the activation, the patch and the seed), for a sweep's
// <study>.json and summary.
nlohmann::json to_json(const TrainRun& run);

// What makes a run's numbers: the trainer's fingerprint and the data's split. Two runs with the same key train alike.
std::string run_key(const TrainRun& run);

// Throws std::invalid_argument naming data-dir when one of `files` is missing from `dir`.
void require_data_files(const std::filesystem::path& dir, const std::vector<std::string>& files);
// Fashion-MNIST's gzip IDX files: the training split, then the test split.
const std::vector<std::string>& fashion_mnist_files();

}  // namespace attnlab::io
