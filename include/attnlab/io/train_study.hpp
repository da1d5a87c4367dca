#pragma once
// The `train` study: trains the ViT on Fashion-MNIST (or CIFAR-10 binary batches) with the common study
// flags plus the model and optimiser flags, checkpoints its state atomically every --checkpoint-every steps
// (a rerun resumes from it and ends with the same numbers), and writes train.csv (per-step loss, accuracy,
// learning rate, gradient norm, validation metrics, per-layer ‖ϕ(S)‖_F and Jacobian norms), train.json and
// the loss, accuracy and norm plots.
#include <attnlab/io/study.hpp>

namespace attnlab::io {

StudyDefinition train_study();

// Throws std::invalid_argument naming data-dir when one of `files` is missing from `dir`.
void require_data_files(const std::filesystem::path& dir, const std::vector<std::string>& files);
// Fashion-MNIST's gzip IDX files: the training split, then the test split.
const std::vector<std::string>& fashion_mnist_files();

}  // namespace attnlab::io
