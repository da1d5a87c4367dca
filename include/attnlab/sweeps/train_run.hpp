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

namespace attnlab::sweeps {

// What a run trains and validates on.
struct TrainData {
  std::string name = "fashion-mnist";  // or cifar10 (its binary batches in dir), or recall (generated)
  std::filesystem::path dir = train::kFashionMnistDir;
  Index validation = 5000;  // images split off the training set (recall: its own stream)
  Index train_limit = 0;    // the first K training images (0: all)
  Index test_limit = 0;     // the first K test images (0: all)
};

// The recall task's set sizes where train_limit and test_limit are 0: enough fresh examples that a run of the default
// budgets never sees one twice (the labels alone are stored).
inline constexpr Index kRecallTrainExamples = 250000, kRecallTestExamples = 10000;
// The train study's steps with --data recall unless given: the small model (--init unit, seed 1) retrieves at N = 16
// after about 1,200 steps and at N = 64 from about 2,400 (60% at 3,000, uniform mixing 16%), under 4 minutes on one
// core.
inline constexpr long kRecallSteps = 3000;

// The model's input under `data`, from its patch: the 32×32 image (three channels for CIFAR-10) cut by the patch, or
// the recall task's N tokens as an N × train::kRecallWidth image cut into one-row patches, N being the patches the
// configured patch cuts 32×32 into (so --patch, and a sweep's N, mean the same N on every data set). Throws
// std::invalid_argument naming the patch when it leaves the recall task fewer than 2 tokens or does not tile 32×32.
void fit_model_to_data(train::VitConfig& model, const TrainData& data);
// The recall task's input for any N from 2 to train::kRecallCodes, not only the powers of two that cut the 32×32
// image: the same model as fit_model_to_data's for a patch giving that N. Throws std::invalid_argument naming N.
void fit_recall_tokens(train::VitConfig& model, Index tokens);
// The files --data-dir must hold (none for recall).
std::vector<std::string> data_files(const TrainData& data);
// How many training examples the data holds before the validation set is taken off (after train_limit).
Index training_examples(const TrainData& data);
struct RunData {
  train::Dataset train, validation;
};
// The training and validation sets of a run with this seed: the images' seeded split, or the recall task's streams for
// the model's N. `images`: the training images (load_images) where the data has them, unused for recall.
RunData run_data(const TrainData& data, const train::VitConfig& model, std::uint64_t seed,
                 const train::Dataset* images);
// The training images (Fashion-MNIST padded 28 → 32, or CIFAR-10's five data batches; the first train_limit), or with
// test the test split (the first test_limit).
train::Dataset load_images(const TrainData& data, bool test);

struct TrainSplits {
  train::Dataset train, validation, test;
};
// The three sets of a run with this seed: Fashion-MNIST padded 28 → 32 (so that 2×2, 4×4, 8×8 and 8×16 patches give
// N = 256, 64, 16, 8), or CIFAR-10's data_batch_1..5 and test_batch, the validation set split off the training set;
// or the recall task's three streams of the seed.
TrainSplits load_splits(const TrainData& data, const train::VitConfig& model, std::uint64_t seed);

struct TrainRun {
  train::TrainConfig config{};
  TrainData data{};
};

// The flags a study takes: a sweep sets each point's activation and patch (from N) itself.
enum class TrainFlags { every, budget };

// Binds the flags of a run to `run`, whose values are their defaults: --model (a preset for --dim, --depth, --heads
// and --mlp, which may still be given), the architecture, AdamW and its schedule, augmentation, --log-every, the data
// and its split, --data; with TrainFlags::every also --init, --activation, --p, --k, --alpha and --patch (a sweep takes
// --init as a grid axis).
void add_train_flags(CLI::App& app, TrainRun& run, TrainFlags flags);
// A preset's shape (D, depth, heads, MLP: train::VitConfig::preset) set on `model`, the rest of it kept.
void set_preset_shape(train::VitConfig& model, const std::string& preset);

// Every setting of the run but those a sweep's points vary (the activation, the patch and the seed), for a sweep's
// <study>.json and summary.
nlohmann::json to_json(const TrainRun& run);

// What makes a run's numbers: the trainer's fingerprint, the data (named where it is not Fashion-MNIST, whose keys
// predate the choice) and its split. Two runs with the same key train alike.
std::string run_key(const TrainRun& run);

// The folder of results/ whose claims judge a run on the recall task (its recipe's: training_rows::kRecallRecipes, the
// training claims' Regime::task), or "" for the images.
std::string task_of(const TrainRun& run);

// Throws std::invalid_argument naming data-dir when one of `files` is missing from `dir`.
void require_data_files(const std::filesystem::path& dir, const std::vector<std::string>& files);

}  // namespace attnlab::sweeps
