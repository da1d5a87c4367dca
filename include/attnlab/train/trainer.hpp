#pragma once
// One training run of the ViT: data, model (float), AdamW, schedule, clipping, evaluation, and its whole
// state as bytes for checkpoints. Everything is a function of the configuration and the seed: a run
// restored from a checkpoint continues exactly as the uninterrupted run.
#include <attnlab/train/data.hpp>
#include <attnlab/train/optim.hpp>
#include <attnlab/train/vit.hpp>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace attnlab::train {

struct TrainConfig {
  VitConfig model = VitConfig::preset("small");
  Index batch = 64;
  long steps = 1000, warmup = 100;
  double lr = CosineSchedule{}.base_lr, min_lr = 1e-5, weight_decay = AdamWOptions{}.weight_decay, clip = 1.0;
  double label_smoothing = 0;
  double beta1 = AdamWOptions{}.beta1, beta2 = AdamWOptions{}.beta2;
  Augmentation augment{};
  std::uint64_t seed = 1;
  long log_every = 10;  // steps between norm records
  void validate() const;
};

// A saved state whose bytes do not match their checksum (truncated or damaged): not restored, never trusted.
struct CorruptStateError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A training step whose loss or gradient is not finite (the run diverged).
struct NonFiniteError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct StepRecord {
  long step = 0;
  double lr = 0, loss = 0, accuracy = 0, grad_norm = 0;
  std::vector<LayerNorms> norms;  // empty on steps that do not record them
};

struct Evaluation {
  long step = 0;  // the number of training steps taken before it
  double loss = 0, accuracy = 0;
};

// Whether a learning curve has reached its plateau: the validation accuracies of the last `window` share of the
// steps (those at step >= (1 - window) * steps) lie within `tolerance` of each other.
struct Plateau {
  long from_step = 0;
  int evaluations = 0;   // in the window
  double spread = 0;     // largest minus smallest accuracy in the window
  double gain = 0;       // last minus first accuracy in the window
  bool reached = false;  // at least two evaluations and spread <= tolerance
};
Plateau plateau(const std::vector<Evaluation>& validations, long steps, double window = 0.2, double tolerance = 0.01);

class Trainer {
 public:
  // `train` and `validation` must already have the model's image shape (see pad()).
  Trainer(const TrainConfig& config, Dataset train, Dataset validation);

  long step() const { return step_; }
  bool done() const { return step_ >= config_.steps; }
  // One optimisation step; throws NonFiniteError naming the step on a non-finite loss or gradient,
  // leaving the parameters of the previous step untouched.
  StepRecord train_step();
  // Mean loss (no label smoothing) and accuracy on `data` (default: the validation set), in batches.
  Evaluation evaluate(const Dataset& data, Index batch = 256);
  Evaluation evaluate() { return evaluate(validation_); }
  // Evaluates the validation set and keeps the result with the run's records (and its state).
  const Evaluation& record_validation();

  // The run's state (step, parameters, optimiser moments, records so far) with a magic number, a version, a
  // fingerprint of the configuration and a checksum; restore() rejects a state from another configuration
  // (std::runtime_error) and a damaged one (CorruptStateError), leaving the trainer as it was.
  std::string save() const;
  void restore(const std::string& bytes);
  const std::vector<StepRecord>& records() const { return records_; }
  const std::vector<Evaluation>& validations() const { return validations_; }
  Vit<float>& model() { return model_; }

 private:
  TrainConfig config_;
  Dataset train_, validation_;
  Normalisation normalisation_;
  Vit<float> model_;
  AdamW<float> optimiser_;
  CosineSchedule schedule_;
  long step_ = 0;
  std::vector<Index> order_;
  long order_epoch_ = -1;
  std::vector<StepRecord> records_;
  std::vector<Evaluation> validations_;
  Matrix<float> images_;
  std::vector<int> labels_;
};

// A fingerprint of everything that determines a run's numbers.
std::string fingerprint(const TrainConfig& config);
// The optimiser's settings in a configuration (its learning rate comes from the schedule, its eps is AdamW's default).
AdamWOptions adamw_options(const TrainConfig& config);

}  // namespace attnlab::train
