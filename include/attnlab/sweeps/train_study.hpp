#pragma once
// The `train` study: trains the ViT on Fashion-MNIST (or CIFAR-10 binary batches) with the common study
// flags plus the model and optimiser flags, checkpoints its state atomically every --checkpoint-every steps
// (a rerun resumes from it and ends with the same numbers), and writes train.csv (per-step loss, accuracy,
// learning rate, gradient norm, validation metrics, per-layer ‖ϕ(S)‖_F and Jacobian norms), train.json and
// the loss, accuracy and norm plots.
#include <attnlab/study/study.hpp>

namespace attnlab::sweeps {

study::StudyDefinition train_study();

}  // namespace attnlab::sweeps
