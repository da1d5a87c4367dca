#pragma once
// Image classification data in memory: IDX (Fashion-MNIST, gzip or plain) and CIFAR-10 binary readers,
// zero-padding, a seeded train/validation split, per-channel normalisation and batches with optional
// random crop and horizontal flip. Every random choice comes from Philox keyed by (seed, epoch or step,
// example), so batches do not depend on thread count or on where a resumed run restarted.
#include <attnlab/core/types.hpp>

#include <cstdint>
#include <filesystem>
#include <span>
#include <utility>
#include <vector>

namespace attnlab::train {

struct Dataset {
  Index channels = 1, height = 0, width = 0;
  std::vector<std::uint8_t> pixels;  // size() × (C·H·W), channel-major per image
  std::vector<int> labels;
  Index classes = 10;
  Index size() const { return static_cast<Index>(labels.size()); }
  Index image_size() const { return channels * height * width; }
};

inline const std::filesystem::path kFashionMnistDir = "/usr/share/datasets/fashion-mnist";

// An idx3 image file and its idx1 label file (magic 0x803 / 0x801, big-endian sizes), gzip or plain.
// Throws std::runtime_error naming the file: missing, wrong magic, truncated, or counts that differ.
Dataset read_idx(const std::filesystem::path& images, const std::filesystem::path& labels);
// Fashion-MNIST's train (60,000) or test (10,000) split from Debian's dataset-fashion-mnist files.
Dataset load_fashion_mnist(const std::filesystem::path& dir, bool train);
// CIFAR-10 binary batches: records of one label byte and 3,072 pixel bytes (R, G, B planes of 32×32).
Dataset read_cifar10(const std::vector<std::filesystem::path>& files);

// The first `count` examples (all of them when count is 0 or not smaller than the size).
Dataset first(Dataset data, Index count);
// Centres every image on a zero background of height × width (28 → 32 pads 2 on each side).
Dataset pad(const Dataset& data, Index height, Index width);
// A seeded shuffle, then the last `validation` examples as the validation set.
std::pair<Dataset, Dataset> split(const Dataset& data, Index validation, std::uint64_t seed);

struct Normalisation {
  std::vector<double> mean, std;  // per channel, of pixel/255
  static Normalisation of(const Dataset& data);
};

struct Augmentation {
  bool random_crop = false;  // pad by `crop_padding` zeros and crop back at a random offset
  Index crop_padding = 4;
  bool flip = false;  // mirror left-right with probability ½
};

// The example order of an epoch: a seeded permutation of [0, n).
std::vector<Index> epoch_order(Index n, std::uint64_t seed, long epoch);

// images (B × C·H·W) = ((pixel/255 − mean)/std) of the examples `indices`, augmented with draws keyed by
// (seed, step, position in the batch); labels likewise.
template <class T>
void make_batch(const Dataset& data, std::span<const Index> indices, const Normalisation& norm,
                const Augmentation& augment, std::uint64_t seed, long step, Matrix<T>& images, std::vector<int>& labels);

}  // namespace attnlab::train
