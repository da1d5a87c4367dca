// The trainer's data and loop: IDX (gzip and plain) and CIFAR-10 readers and their errors, Debian's
// Fashion-MNIST, padding, the split, epoch orders, batches, the generated recall task; the optimiser's schedule; a run
// that learns, resumes exactly from a saved state, does not depend on the thread count, and stops on a non-finite loss;
// the run's data choice in its key.
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/rng.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/sweeps/train_run.hpp>
#include <attnlab/theory/training_rows.hpp>
#include <attnlab/train/data.hpp>
#include <attnlab/train/optim.hpp>
#include <attnlab/train/trainer.hpp>

#include "support.hpp"

#include <omp.h>
#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <set>
#include <string>
#include <vector>

using namespace attnlab;
using namespace attnlab::train;

namespace {

namespace fs = std::filesystem;

struct TempDir {
  fs::path path = fs::temp_directory_path() / text("attnlab_train_", ::getpid(), "_", test::seed());
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
};

std::string big_endian(std::uint32_t v) { return {char(v >> 24), char(v >> 16), char(v >> 8), char(v)}; }

void write_file(const fs::path& path, const std::string& bytes, bool gzip) {
  if (gzip) {
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, bytes.data(), unsigned(bytes.size()));
    gzclose(f);
  } else {
    std::ofstream(path, std::ios::binary) << bytes;
  }
}

// n images of h × w whose pixel (i, j) of image e is (e + 3i + j) mod 256, label e mod 10.
std::pair<std::string, std::string> idx_files(std::uint32_t n, std::uint32_t h, std::uint32_t w) {
  std::string images = big_endian(0x803) + big_endian(n) + big_endian(h) + big_endian(w),
              labels = big_endian(0x801) + big_endian(n);
  for (std::uint32_t e = 0; e < n; ++e) {
    labels += char(e % 10);
    for (std::uint32_t i = 0; i < h; ++i)
      for (std::uint32_t j = 0; j < w; ++j) images += char((e + 3 * i + j) % 256);
  }
  return {images, labels};
}

::testing::AssertionResult fails_with(const std::function<void()>& f, const std::string& words) {
  try {
    f();
  } catch (const std::exception& e) {
    if (std::string(e.what()).find(words) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "error '" << e.what() << "' lacks '" << words << "'";
  }
  return ::testing::AssertionFailure() << "no error";
}

}  // namespace

TEST(TrainData, IdxReadsGzipAndPlainFiles) {
  TempDir dir;
  const auto [images, labels] = idx_files(12, 5, 4);
  for (bool gzip : {true, false}) {
    write_file(dir.path / "i", images, gzip);
    write_file(dir.path / "l", labels, gzip);
    const Dataset d = read_idx(dir.path / "i", dir.path / "l");
    ASSERT_EQ(d.size(), 12);
    EXPECT_EQ(d.height, 5);
    EXPECT_EQ(d.width, 4);
    EXPECT_EQ(d.labels[11], 1);
    EXPECT_EQ(d.pixels[std::size_t(7 * 20 + 2 * 4 + 3)], (7 + 6 + 3) % 256);
  }
}

TEST(TrainData, IdxErrorsNameTheFileAndTheProblem) {
  TempDir dir;
  const auto [images, labels] = idx_files(6, 3, 3);
  write_file(dir.path / "l", labels, true);
  write_file(dir.path / "bad_magic", big_endian(0x802) + images.substr(4), true);
  EXPECT_TRUE(fails_with([&] { read_idx(dir.path / "bad_magic", dir.path / "l"); }, "bad_magic: wrong magic"));
  write_file(dir.path / "short", images.substr(0, images.size() - 5), true);
  EXPECT_TRUE(fails_with([&] { read_idx(dir.path / "short", dir.path / "l"); }, "short: truncated"));
  write_file(dir.path / "corrupt", images, true);
  {  // flip bytes in the deflate stream (past the 10-byte gzip header)
    std::fstream f(dir.path / "corrupt", std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(20);
    f.write("\xff\xff\xff\xff\xff\xff", 6);
  }
  EXPECT_TRUE(fails_with([&] { read_idx(dir.path / "corrupt", dir.path / "l"); }, "corrupt"));
  const auto [more, more_labels] = idx_files(7, 3, 3);
  write_file(dir.path / "seven", more, true);
  EXPECT_TRUE(fails_with([&] { read_idx(dir.path / "seven", dir.path / "l"); }, "7 images but"));
  EXPECT_TRUE(fails_with([&] { read_idx(dir.path / "missing", dir.path / "l"); }, "missing: cannot open"));
  // Headers whose sizes are nonsense, refused before the images are used (the first was found by tests/fuzz/idx.cpp:
  // no images of 2³²−1 × 2³²−1 pixels overflowed C·H·W).
  write_file(dir.path / "empty", big_endian(0x803) + big_endian(0) + big_endian(0xffffffff) + big_endian(0xffffffff),
             false);
  EXPECT_TRUE(fails_with([&] { read_idx(dir.path / "empty", dir.path / "l"); }, "empty: holds no images"));
  write_file(dir.path / "wide",
             big_endian(0x803) + big_endian(1) + big_endian(1) + big_endian(65537) + std::string(65537, 'x'), false);
  EXPECT_TRUE(fails_with([&] { read_idx(dir.path / "wide", dir.path / "l"); }, "wide: images of 1x65537 pixels"));
  write_file(dir.path / "overflow",
             big_endian(0x803) + big_endian(0xffffffff) + big_endian(0xffffffff) + big_endian(0xffffffff), false);
  EXPECT_TRUE(fails_with([&] { read_idx(dir.path / "overflow", dir.path / "l"); },
                         "overflow: header sizes whose product overflows"));
}

// Debian's dataset-fashion-mnist (scripts/install-deps installs it): 60,000 + 10,000 images of 28 × 28,
// ten balanced classes.
TEST(TrainData, FashionMnistFromTheDebianPackage) {
  const Dataset test_split = load_fashion_mnist(kFashionMnistDir, false);
  ASSERT_EQ(test_split.size(), 10000);
  EXPECT_EQ(test_split.height, 28);
  EXPECT_EQ(test_split.width, 28);
  std::vector<int> counts(10, 0);
  for (int l : test_split.labels) ++counts[std::size_t(l)];
  for (int c : counts) EXPECT_EQ(c, 1000);
  EXPECT_EQ(load_fashion_mnist(kFashionMnistDir, true).size(), 60000);
}

TEST(TrainData, Cifar10RecordsAndTheirErrors) {
  TempDir dir;
  std::string bytes;
  for (int r = 0; r < 3; ++r) {
    bytes += char(r * 3);
    for (int i = 0; i < 3072; ++i) bytes += char((r + i) % 251);
  }
  write_file(dir.path / "data_batch_1.bin", bytes, false);
  const Dataset d = read_cifar10({dir.path / "data_batch_1.bin"});
  ASSERT_EQ(d.size(), 3);
  EXPECT_EQ(d.channels, 3);
  EXPECT_EQ(d.labels[2], 6);
  EXPECT_EQ(d.pixels[std::size_t(2 * 3072 + 1024 + 5)], (2 + 1024 + 5) % 251);  // image 2, green plane, pixel 5
  write_file(dir.path / "cut.bin", bytes.substr(0, 5000), false);
  EXPECT_TRUE(fails_with([&] { read_cifar10({dir.path / "cut.bin"}); }, "not a whole number"));
  bytes[0] = char(12);
  write_file(dir.path / "label.bin", bytes, false);
  EXPECT_TRUE(fails_with([&] { read_cifar10({dir.path / "label.bin"}); }, "label 12"));
}

TEST(TrainData, PadCentresAndSplitPartitions) {
  TempDir dir;
  const auto [images, labels] = idx_files(40, 28, 28);
  write_file(dir.path / "i", images, false);
  write_file(dir.path / "l", labels, false);
  const Dataset d = read_idx(dir.path / "i", dir.path / "l");
  const Dataset p = pad(d, 32, 32);
  EXPECT_EQ(p.pixels[std::size_t(3 * 1024 + (2 + 5) * 32 + 2 + 7)], d.pixels[std::size_t(3 * 784 + 5 * 28 + 7)]);
  EXPECT_EQ(p.pixels[std::size_t(3 * 1024 + 1 * 32 + 10)], 0);
  const auto [train, validation] = split(p, 10, test::seed());
  EXPECT_EQ(train.size(), 30);
  EXPECT_EQ(validation.size(), 10);
  // Image e is identified by its first pixel (e mod 256, all distinct here).
  std::multiset<int> seen;
  for (const Dataset* part : {&train, &validation})
    for (Index e = 0; e < part->size(); ++e) seen.insert(part->pixels[std::size_t(e * 1024 + 2 * 32 + 2)]);
  std::multiset<int> all;
  for (int e = 0; e < 40; ++e) all.insert(e);
  EXPECT_EQ(seen, all);
}

TEST(TrainData, EpochOrdersArePermutationsThatChange) {
  const auto a = epoch_order(100, test::seed(), 0), b = epoch_order(100, test::seed(), 1);
  std::vector<Index> sorted = a;
  std::sort(sorted.begin(), sorted.end());
  std::vector<Index> identity(100);
  std::iota(identity.begin(), identity.end(), Index{0});
  EXPECT_EQ(sorted, identity);
  EXPECT_NE(a, b);
  EXPECT_EQ(a, epoch_order(100, test::seed(), 0));
}

TEST(TrainData, BatchesNormaliseFlipAndCrop) {
  Dataset d;
  d.height = 4, d.width = 4;
  for (int i = 0; i < 16; ++i) d.pixels.push_back(std::uint8_t(i * 10));
  d.labels = {3};
  const Normalisation n = Normalisation::of(d);
  Matrix<double> plain, flipped;
  std::vector<int> labels;
  const std::vector<Index> one{0};
  make_batch(d, std::span<const Index>(one), n, Augmentation{}, 1, 0, plain, labels);
  EXPECT_EQ(labels[0], 3);
  EXPECT_NEAR(plain.mean(), 0.0, 1e-12);
  EXPECT_NEAR((plain.array() - plain.mean()).square().mean(), 1.0, 1e-12);
  // Flip with probability ½ per (step, example): over 64 steps both outcomes occur, each a mirror or not.
  int mirrored = 0;
  for (long step = 0; step < 64; ++step) {
    make_batch(d, std::span<const Index>(one), n, Augmentation{false, 0, true}, 1, step, flipped, labels);
    const bool same = flipped == plain;
    bool mirror = true;
    for (Index i = 0; i < 4; ++i)
      for (Index j = 0; j < 4; ++j) mirror = mirror && flipped(0, i * 4 + j) == plain(0, i * 4 + 3 - j);
    EXPECT_TRUE(same != mirror);
    mirrored += mirror;
  }
  EXPECT_GT(mirrored, 10);
  EXPECT_LT(mirrored, 54);
}

namespace {

// A recall example read back from its bytes alone: each token's key code, value (−1: none) and query flag.
struct RecallToken {
  std::uint32_t key = 0;
  int value = -1;
  bool query = false;
};
std::vector<RecallToken> read_tokens(std::span<const std::uint8_t> pixels, Index tokens) {
  std::vector<RecallToken> out(static_cast<std::size_t>(tokens));
  for (Index t = 0; t < tokens; ++t) {
    const std::uint8_t* row = pixels.data() + t * kRecallWidth;
    auto& token = out[std::size_t(t)];
    for (Index b = 0; b < kRecallKeyBits; ++b) {
      EXPECT_TRUE(row[b] == 0 || row[b] == 255);
      token.key |= std::uint32_t(row[b] == 255) << b;
    }
    for (Index c = 0; c < kRecallClasses; ++c)
      if (row[kRecallKeyBits + c] == 255) {
        EXPECT_EQ(token.value, -1) << "token " << t << " has two values";
        token.value = int(c);
      }
    token.query = row[kRecallWidth - 1] == 255;
  }
  return out;
}

}  // namespace

TEST(TrainData, RecallCodebookIsFixedDistinctAndFarApart) {
  const auto& codes = recall_codebook();
  ASSERT_EQ(Index(codes.size()), kRecallCodes);
  int closest = kRecallKeyBits;
  for (std::size_t a = 0; a < codes.size(); ++a)
    for (std::size_t b = a + 1; b < codes.size(); ++b) closest = std::min(closest, std::popcount(codes[a] ^ codes[b]));
  EXPECT_GE(closest, 3);
  EXPECT_TRUE(std::all_of(codes.begin(), codes.end(), [](std::uint32_t c) { return c >> kRecallKeyBits == 0; }));
  // The first codes pinned: every build and run shares the codebook.
  EXPECT_EQ(text(codes[0], " ", codes[1], " ", codes[1023]), "45788 5951 55055") << "the codebook changed";
}

TEST(TrainData, RecallLabelIsTheValueOfTheQueriedKey) {
  for (Index tokens : {2, 16, 64, 1024}) {
    SCOPED_TRACE(text("N = ", tokens));
    const RecallStream stream{tokens, test::seed(), RecallSplit::train};
    const Dataset d = recall_dataset(stream, 40);
    EXPECT_EQ(d.height, tokens);
    EXPECT_EQ(d.width, kRecallWidth);
    EXPECT_TRUE(d.pixels.empty()) << "a generated set stores labels alone";
    std::vector<std::uint8_t> pixels(std::size_t(tokens * kRecallWidth));
    for (Index n = 0; n < d.size(); ++n) {
      const int label = recall_example(stream, n, pixels);
      EXPECT_EQ(label, d.labels[std::size_t(n)]);
      const auto t = read_tokens(pixels, tokens);
      std::set<std::uint32_t> keys;
      for (Index j = 0; j + 1 < tokens; ++j) {
        EXPECT_FALSE(t[std::size_t(j)].query);
        EXPECT_GE(t[std::size_t(j)].value, 0) << "pair " << j << " has no value";
        EXPECT_NE(std::find(recall_codebook().begin(), recall_codebook().end(), t[std::size_t(j)].key),
                  recall_codebook().end());
        keys.insert(t[std::size_t(j)].key);
      }
      EXPECT_EQ(Index(keys.size()), tokens - 1) << "the keys of example " << n << " repeat";
      const auto& query = t.back();
      EXPECT_TRUE(query.query);
      EXPECT_EQ(query.value, -1);
      int matches = 0, answer = -1;
      for (Index j = 0; j + 1 < tokens; ++j)
        if (t[std::size_t(j)].key == query.key) ++matches, answer = t[std::size_t(j)].value;
      ASSERT_EQ(matches, 1) << "example " << n;
      EXPECT_EQ(answer, label) << "example " << n;
    }
  }
}

TEST(TrainData, RecallStreamsAreReproducibleAndDisjoint) {
  const Index tokens = 16, size = tokens * kRecallWidth;
  const auto bytes = [&](const RecallStream& s, Index n) {
    std::vector<std::uint8_t> p(static_cast<std::size_t>(size));
    recall_example(s, n, p);
    return p;
  };
  const RecallStream train{tokens, test::seed(), RecallSplit::train},
      validation{tokens, test::seed(), RecallSplit::validation},
      other_seed{tokens, test::seed() + 1, RecallSplit::train};
  std::set<std::vector<std::uint8_t>> seen;
  for (Index n = 0; n < 200; ++n) {
    EXPECT_EQ(bytes(train, n), bytes(train, n)) << "example " << n << " is not a function of (seed, n)";
    seen.insert(bytes(train, n));
  }
  for (Index n = 0; n < 200; ++n) {
    EXPECT_FALSE(seen.contains(bytes(validation, n))) << "validation example " << n << " is a training example";
    EXPECT_FALSE(seen.contains(bytes(other_seed, n))) << "another seed repeats example " << n;
  }
  EXPECT_EQ(recall_dataset(train, 300).labels, recall_dataset(train, 300).labels);
  EXPECT_NE(recall_dataset(train, 300).labels, recall_dataset(validation, 300).labels);
  // Labels near uniform over the 10 classes (binomial sd about 17 for 3,000 labels).
  std::vector<int> counts(std::size_t(kRecallClasses), 0);
  for (int label : recall_dataset(train, 3000).labels) ++counts[std::size_t(label)];
  for (int c : counts) EXPECT_NEAR(c, 300, 80);
  EXPECT_TRUE(fails_with([] { recall_dataset({1, 1, RecallSplit::train}, 4); }, "N"));
  EXPECT_TRUE(fails_with([] { recall_dataset({kRecallCodes + 1, 1, RecallSplit::train}, 4); }, "N"));
}

TEST(TrainData, RecallBatchesAreGeneratedTheSameForAnyThreadCount) {
  const RecallStream stream{64, test::seed(), RecallSplit::train};
  const Dataset d = recall_dataset(stream, 100);
  const Normalisation norm = Normalisation::of(d);
  ASSERT_EQ(norm.mean.size(), 1u);
  // Every token has about half its key bits and one more column (its value or the query flag) set.
  EXPECT_NEAR(norm.mean[0], double(kRecallKeyBits / 2 + 1) / double(kRecallWidth), 0.02);
  const std::vector<Index> indices{7, 3, 99};
  Matrix<float> one, four;
  std::vector<int> labels_one, labels_four;
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  make_batch(d, std::span<const Index>(indices), norm, Augmentation{}, 1, 5, one, labels_one);
  omp_set_num_threads(4);
  make_batch(d, std::span<const Index>(indices), norm, Augmentation{}, 1, 5, four, labels_four);
  omp_set_num_threads(threads);
  EXPECT_TRUE(one == four);
  EXPECT_EQ(labels_one, (std::vector<int>{d.labels[7], d.labels[3], d.labels[99]}));
  std::vector<std::uint8_t> pixels(std::size_t(64 * kRecallWidth));
  recall_example(stream, 3, pixels);
  for (Index i = 0; i < Index(pixels.size()); ++i)
    ASSERT_FLOAT_EQ(one(1, i), float((pixels[std::size_t(i)] / 255.0 - norm.mean[0]) / norm.std[0])) << i;
  EXPECT_EQ(first(d, 10).size(), 10);
  EXPECT_TRUE(first(d, 10).pixels.empty());
}

TEST(TrainData, RecallIsARunsDataInItsJsonAndKey) {
  sweeps::TrainRun fashion, recall;
  recall.data.name = "recall";
  std::tie(recall.config.model.patch_h, recall.config.model.patch_w) = std::pair{4, 4};
  sweeps::fit_model_to_data(recall.config.model, recall.data);
  EXPECT_EQ(recall.config.model.patches(), 64) << "a 4x4 patch means N = 64 on every data set";
  EXPECT_EQ(recall.config.model.patch_w, kRecallWidth);
  EXPECT_EQ(sweeps::to_json(recall)["data"], "recall");
  EXPECT_NE(sweeps::run_key(recall), sweeps::run_key(fashion));
  EXPECT_NE(sweeps::run_key(recall).find("data=recall"), std::string::npos);
  // The same model under Fashion-MNIST's name still differs by the data alone; Fashion-MNIST's keys are as before.
  auto renamed = recall;
  renamed.data.name = "fashion-mnist";
  EXPECT_NE(sweeps::run_key(renamed), sweeps::run_key(recall));
  EXPECT_EQ(sweeps::run_key(fashion).find("data="), std::string::npos);
  auto whole_image = recall.config.model;
  whole_image.patch_h = whole_image.patch_w = 32;
  EXPECT_TRUE(fails_with([&] { sweeps::fit_model_to_data(whole_image, recall.data); }, "patch"));
  // Any N of the task, not only an image's powers of two; at a power of two the same model, so the same point keys.
  auto tokens = sweeps::TrainRun{}.config.model;
  sweeps::fit_recall_tokens(tokens, 64);
  EXPECT_EQ(fingerprint({.model = tokens}), fingerprint({.model = recall.config.model}));
  sweeps::fit_recall_tokens(tokens, 24);
  EXPECT_EQ(tokens.patches(), 24);
  EXPECT_TRUE(fails_with([&] { sweeps::fit_recall_tokens(tokens, 1025); }, "1025"));
  EXPECT_TRUE(fails_with([&] { sweeps::fit_recall_tokens(tokens, 1); }, "N"));
}

// Each recipe's flags, as its claims print them, train into its own folder, so that no recipe's runs reach another's
// claims; a rate no recipe names falls to the recipe of the trainer's default.
TEST(TrainData, EachRecallRecipesFlagsTrainIntoItsFolder) {
  std::set<std::string> folders;
  const auto folder_of = [](const std::string& flags) {
    sweeps::TrainRun run;
    CLI::App app;
    sweeps::add_train_flags(app, run, sweeps::TrainFlags::every);
    app.parse("--data recall " + flags, false);
    return sweeps::task_of(run);
  };
  for (const auto& recipe : training_rows::kRecallRecipes) {
    EXPECT_EQ(folder_of(recipe.flags), recipe.folder) << recipe.flags;
    EXPECT_TRUE(folders.insert(recipe.folder).second) << recipe.folder << " twice";
  }
  EXPECT_EQ(folder_of("--readout last --clip 0 --lr 0.003"), "recall-query-noclip");
  EXPECT_EQ(sweeps::task_of(sweeps::TrainRun{}), "") << "Fashion-MNIST has no task folder";
}

TEST(TrainOptim, CosineScheduleWarmsUpAndDecays) {
  const CosineSchedule s{1e-3, 1e-5, 10, 110};
  EXPECT_DOUBLE_EQ(s.at(0), 1e-4);
  EXPECT_DOUBLE_EQ(s.at(9), 1e-3);
  EXPECT_DOUBLE_EQ(s.at(10), 1e-3);
  EXPECT_NEAR(s.at(60), 1e-5 + 0.5 * (1e-3 - 1e-5), 1e-15);
  EXPECT_DOUBLE_EQ(s.at(110), 1e-5);
  EXPECT_TRUE(fails_with([] { CosineSchedule{1e-3, 0, 20, 10}.validate(); }, "warm-up"));
}

TEST(TrainOptim, ClippingScalesToTheMaximumNorm) {
  std::vector<double> g{3, 4};
  EXPECT_DOUBLE_EQ(clip_gradient_norm(std::span<double>(g), 1.0), 5.0);
  EXPECT_NEAR(std::hypot(g[0], g[1]), 1.0, 1e-6);
  std::vector<double> small{0.3, 0.4};
  clip_gradient_norm(std::span<double>(small), 1.0);
  EXPECT_EQ(small[0], 0.3);
}

namespace {

// A learnable synthetic task on 8 × 8 images: class 1 when the left half is brighter than the right.
Dataset halves(Index n, std::uint64_t key) {
  Dataset d;
  d.height = 8, d.width = 8, d.classes = 2;
  MatrixD noise(n, 64);
  fill_gaussian(noise, GaussianStream(test::seed(), key, 0, StreamTag::X), 40.0);
  for (Index e = 0; e < n; ++e) {
    const int label = int(e % 2);
    d.labels.push_back(label);
    for (Index i = 0; i < 8; ++i)
      for (Index j = 0; j < 8; ++j) {
        const double base = 128 + ((j < 4) == (label == 1) ? 40 : -40);
        d.pixels.push_back(std::uint8_t(std::clamp(base + noise(e, i * 8 + j), 0.0, 255.0)));
      }
  }
  return d;
}

TrainConfig tiny_run(long steps) {
  TrainConfig c;
  c.model = VitConfig::preset("micro");
  c.model.image_h = 8, c.model.image_w = 8, c.model.patch_h = 4, c.model.patch_w = 2, c.model.classes = 2;
  c.batch = 16, c.steps = steps, c.warmup = std::min(10L, steps), c.lr = 1e-2, c.min_lr = 1e-4, c.label_smoothing = 0.1;
  c.augment.flip = false;
  c.log_every = 2;
  c.seed = test::seed();
  return c;
}

}  // namespace

TEST(TrainLoop, LearnsASeparableTask) {
  Trainer t(tiny_run(120), halves(256, 1), halves(128, 2));
  const double before = t.evaluate().accuracy;
  while (!t.done()) t.train_step();
  const Evaluation after = t.evaluate();
  std::cout << "validation accuracy " << before << " -> " << after.accuracy << " (loss " << after.loss << ")\n";
  EXPECT_GT(after.accuracy, 0.9);
  EXPECT_LT(after.loss, std::log(2.0));
  EXPECT_EQ(t.records().front().norms.size(), 2u);  // recorded on step 0 for both blocks
  EXPECT_TRUE(t.records()[1].norms.empty());
}

TEST(TrainLoop, ResumedRunEndsWithTheSameWeightsAndRecords) {
  Trainer straight(tiny_run(9), halves(64, 3), halves(32, 4));
  while (!straight.done()) {
    straight.train_step();
    if (straight.step() == 5) straight.record_validation();
  }
  Trainer first(tiny_run(9), halves(64, 3), halves(32, 4));
  for (int i = 0; i < 5; ++i) first.train_step();  // crosses an epoch boundary (4 steps per epoch)
  first.record_validation();
  const std::string state = first.save();
  Trainer resumed(tiny_run(9), halves(64, 3), halves(32, 4));
  resumed.restore(state);
  EXPECT_EQ(resumed.step(), 5);
  while (!resumed.done()) resumed.train_step();
  EXPECT_TRUE(std::equal(straight.model().parameters().begin(), straight.model().parameters().end(),
                         resumed.model().parameters().begin()));
  ASSERT_EQ(straight.records().size(), resumed.records().size());
  for (std::size_t i = 0; i < straight.records().size(); ++i) {
    EXPECT_EQ(straight.records()[i].loss, resumed.records()[i].loss) << i;
    EXPECT_EQ(straight.records()[i].grad_norm, resumed.records()[i].grad_norm) << i;
  }
  ASSERT_EQ(resumed.validations().size(), 1u);
  EXPECT_EQ(resumed.validations()[0].step, 5);
  EXPECT_EQ(resumed.validations()[0].loss, straight.validations()[0].loss);
  // A state from another configuration, a truncated one, and another magic are rejected.
  Trainer other(tiny_run(10), halves(64, 3), halves(32, 4));
  EXPECT_TRUE(fails_with([&] { other.restore(state); }, "another configuration"));
  EXPECT_TRUE(fails_with([&] { resumed.restore(state.substr(0, state.size() - 3)); }, "truncated"));
  // Another magic under a valid checksum (the payload resealed): rejected by what it says, not by its checksum.
  std::string magic = "x" + state.substr(1, state.size() - 9);
  const auto seal = attnlab::hash_string(magic);
  magic.append(reinterpret_cast<const char*>(&seal), sizeof seal);
  EXPECT_TRUE(fails_with([&] { resumed.restore(magic); }, "magic"));
  // One bit flipped anywhere (a weight, a count, the checksum itself) is detected and nothing is restored.
  for (const std::size_t at : {std::size_t(12), state.size() / 2, state.size() - 20, state.size() - 1}) {
    std::string flipped = state;
    flipped[at] = char(flipped[at] ^ 0x10);
    Trainer fresh(tiny_run(9), halves(64, 3), halves(32, 4));
    EXPECT_THROW(fresh.restore(flipped), attnlab::train::CorruptStateError) << "byte " << at;
    EXPECT_EQ(fresh.step(), 0) << "byte " << at;
  }
}

TEST(TrainLoop, SameNumbersForAnyThreadCount) {
  std::vector<std::vector<float>> weights;
  for (int threads : {1, 2}) {
    omp_set_num_threads(threads);
    Trainer t(tiny_run(4), halves(64, 5), halves(32, 6));
    while (!t.done()) t.train_step();
    weights.emplace_back(t.model().parameters().begin(), t.model().parameters().end());
  }
  omp_set_num_threads(omp_get_num_procs());
  EXPECT_TRUE(weights[0] == weights[1]);
}

TEST(TrainLoop, NonFiniteLossStopsAndNamesTheStep) {
  Trainer t(tiny_run(5), halves(64, 7), halves(32, 8));
  t.train_step();
  const std::vector<float> before(t.model().parameters().begin(), t.model().parameters().end());
  t.model().parameters()[0] = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(fails_with([&] { t.train_step(); }, "step 1: the loss is"));
  EXPECT_EQ(t.step(), 1);
  EXPECT_TRUE(std::equal(before.begin() + 1, before.end(), t.model().parameters().begin() + 1));
}

// The budget rule: a curve still climbing in its last fifth is not on a plateau, one within a point is; the
// evaluations before the window do not count, and one evaluation in it decides nothing.
TEST(TrainLoop, PlateauLooksAtTheLastFifthOfTheSteps) {
  const std::vector<Evaluation> climbing{{100, 0, 0.50}, {800, 0, 0.70}, {900, 0, 0.75}, {1000, 0, 0.80}};
  const auto still = plateau(climbing, 1000);
  EXPECT_EQ(still.from_step, 800);
  EXPECT_EQ(still.evaluations, 3);
  EXPECT_NEAR(still.spread, 0.10, 1e-12);
  EXPECT_NEAR(still.gain, 0.10, 1e-12);
  EXPECT_FALSE(still.reached);

  const std::vector<Evaluation> flat{{100, 0, 0.20}, {700, 0, 0.60}, {800, 0, 0.795}, {900, 0, 0.80}, {1000, 0, 0.799}};
  const auto level = plateau(flat, 1000);
  EXPECT_EQ(level.evaluations, 3);
  EXPECT_NEAR(level.spread, 0.005, 1e-12);
  EXPECT_TRUE(level.reached);
  EXPECT_FALSE(plateau(flat, 1000, 0.2, 0.004).reached) << "a tolerance below the spread";
  EXPECT_FALSE(plateau({{1000, 0, 0.8}}, 1000).reached) << "one evaluation";
}
