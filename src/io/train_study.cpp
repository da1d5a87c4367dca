#include <attnlab/core/text.hpp>
#include <attnlab/io/files.hpp>
#include <attnlab/io/train_study.hpp>
#include <attnlab/mc/statistics.hpp>
#include <attnlab/train/trainer.hpp>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <sstream>
#include <stdexcept>

namespace attnlab::io {

namespace {

struct TrainFlags {
  std::string model = "small", activation = "softmax", k = "sqrtN", patch = "4x4", data = "fashion-mnist";
  std::string data_dir = train::kFashionMnistDir.string();
  int p = 3;
  double alpha = 1.0;
  Index dim = 0, depth = 0, heads = 0, mlp = 0;  // 0: the preset's
  Index batch = 64, validation = 5000, train_limit = 0, test_limit = 0;
  long steps = 1000, warmup = 100, eval_every = 100, checkpoint_every = 50, log_every = 10;
  double lr = 1e-3, min_lr = 1e-5, weight_decay = 0.05, clip = 1.0, label_smoothing = 0.0;
  bool crop = false, flip = false;
};

std::pair<Index, Index> parse_patch(const std::string& s) {
  Index h = 0, w = 0;
  char x = 0, rest = 0;
  std::istringstream in(s);
  if (!(in >> h >> x >> w) || x != 'x' || in >> rest || h < 1 || w < 1)
    throw std::invalid_argument(text("patch must be HxW with positive sides, e.g. 4x4 or 8x16 (got '", s, "')"));
  return {h, w};
}

train::TrainConfig train_config(const TrainFlags& f, const StudyOptions& o, Index channels, Index side) {
  train::TrainConfig c;
  c.model = train::VitConfig::preset(f.model);
  if (f.dim > 0) c.model.dim = f.dim;
  if (f.depth > 0) c.model.depth = f.depth;
  if (f.heads > 0) c.model.heads = f.heads;
  if (f.mlp > 0) c.model.mlp_hidden = f.mlp;
  c.model.channels = channels, c.model.image_h = c.model.image_w = side;
  std::tie(c.model.patch_h, c.model.patch_w) = parse_patch(f.patch);
  c.model.activation = ActivationSpec::parse(f.activation);
  c.model.activation.p = f.p;
  c.model.activation.k = KScale::parse(f.k);
  c.model.activation.alpha = f.alpha;
  c.batch = f.batch, c.steps = f.steps, c.warmup = f.warmup, c.lr = f.lr, c.min_lr = f.min_lr;
  c.weight_decay = f.weight_decay, c.clip = f.clip, c.label_smoothing = f.label_smoothing;
  c.augment.random_crop = f.crop, c.augment.flip = f.flip;
  c.seed = o.seed, c.log_every = f.log_every;
  return c;
}

void validate_flags(const TrainFlags& f, const StudyOptions& o) {
  if (f.data != "fashion-mnist" && f.data != "cifar10")
    throw std::invalid_argument(text("data must be fashion-mnist or cifar10 (got '", f.data, "')"));
  if (f.eval_every < 1) throw std::invalid_argument(text("eval-every must be at least 1 (got ", f.eval_every, ")"));
  if (f.checkpoint_every < 1)
    throw std::invalid_argument(text("checkpoint-every must be at least 1 (got ", f.checkpoint_every, ")"));
  if (f.train_limit < 0) throw std::invalid_argument(text("train-limit must be >= 0 (got ", f.train_limit, ")"));
  if (f.validation < 1) throw std::invalid_argument(text("validation must be at least 1 (got ", f.validation, ")"));
  for (auto [value, name] : {std::pair{f.dim, "dim"}, {f.depth, "depth"}, {f.heads, "heads"}, {f.mlp, "mlp"}})
    if (value < 0) throw std::invalid_argument(text(name, " must be >= 0 (0: the preset's; got ", value, ")"));
  require_data_files(f.data_dir, f.data == "fashion-mnist"
                                     ? fashion_mnist_files()
                                     : std::vector<std::string>{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                                                "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"});
  train_config(f, o, f.data == "cifar10" ? 3 : 1, 32).validate();
}

struct Splits {
  train::Dataset train, validation, test;
};

// Fashion-MNIST padded 28 → 32 (so that 2×2, 4×4, 8×8 and 8×16 patches give N = 256, 64, 16, 8), or
// CIFAR-10's data_batch_1..5 and test_batch; the validation set split off the training set.
Splits load_data(const TrainFlags& f, std::uint64_t seed) {
  namespace fs = std::filesystem;
  train::Dataset full, test;
  if (f.data == "fashion-mnist") {
    full = train::pad(train::load_fashion_mnist(f.data_dir, true), 32, 32);
    test = train::pad(train::load_fashion_mnist(f.data_dir, false), 32, 32);
  } else {
    std::vector<fs::path> batches;
    for (int b = 1; b <= 5; ++b) batches.push_back(fs::path(f.data_dir) / text("data_batch_", b, ".bin"));
    full = train::read_cifar10(batches);
    test = train::read_cifar10({fs::path(f.data_dir) / "test_batch.bin"});
  }
  full = train::first(std::move(full), f.train_limit);
  test = train::first(std::move(test), f.test_limit);
  if (f.validation >= full.size())
    throw std::invalid_argument(text("validation must be smaller than the ", full.size(), " training examples (got ", f.validation, ")"));
  auto [train_part, validation_part] = train::split(full, f.validation, seed);
  return {std::move(train_part), std::move(validation_part), std::move(test)};
}

ResultRow row(const train::TrainConfig& c, const std::string& quantity, long step, double value,
              std::vector<std::pair<std::string, std::string>> extra = {}) {
  ResultRow r;
  r.study = "train";
  r.quantity = quantity;
  r.activation = c.model.activation.label();
  r.N = c.model.patches(), r.D = c.model.dim, r.d = c.model.head_dim();
  if (find_activation(c.model.activation.name).uses_p) r.p = c.model.activation.p, r.k = c.model.activation.k.str();
  r.trials = 1;
  r.value = estimate(std::vector<double>{value});
  extra.insert(extra.begin(), {"step", text(step)});
  r.extra = std::move(extra);
  return r;
}

StudyOutput outputs(const train::Trainer& t, const train::TrainConfig& c, const train::Evaluation& test) {
  StudyOutput out;
  Figure loss{"train_loss", "training and validation loss", "step", "cross-entropy", false, false, {}, {}};
  Figure accuracy{"train_accuracy", "training and validation accuracy", "step", "accuracy", false, false, {}, {}};
  Figure norms{"train_norms", "per-layer ||phi(S)||_F and ||d phi/d S||_F (mean over images and heads)", "step", "norm",
               false, true, {}, {}};
  Series train_loss{"train", {}, {}, {}, {}, true}, train_accuracy{"train", {}, {}, {}, {}, true};
  std::vector<Series> phi(std::size_t(c.model.depth)), jacobian(std::size_t(c.model.depth));
  for (Index l = 0; l < c.model.depth; ++l) {
    phi[std::size_t(l)].label = text("||phi||_F layer ", l + 1);
    jacobian[std::size_t(l)].label = text("||J||_F layer ", l + 1);
  }
  for (const auto& r : t.records()) {
    out.rows.push_back(row(c, "loss", r.step, r.loss, {{"split", "train"}}));
    out.rows.push_back(row(c, "accuracy", r.step, r.accuracy, {{"split", "train"}}));
    out.rows.push_back(row(c, "lr", r.step, r.lr));
    out.rows.push_back(row(c, "grad_norm", r.step, r.grad_norm));
    train_loss.x.push_back(double(r.step)), train_loss.y.push_back(r.loss);
    train_accuracy.x.push_back(double(r.step)), train_accuracy.y.push_back(r.accuracy);
    for (std::size_t l = 0; l < r.norms.size(); ++l) {
      out.rows.push_back(row(c, "phi_fro", r.step, r.norms[l].phi, {{"layer", text(l + 1)}}));
      out.rows.push_back(row(c, "jacobian_fro", r.step, r.norms[l].jacobian, {{"layer", text(l + 1)}}));
      phi[l].x.push_back(double(r.step)), phi[l].y.push_back(r.norms[l].phi);
      jacobian[l].x.push_back(double(r.step)), jacobian[l].y.push_back(r.norms[l].jacobian);
    }
  }
  Series validation_loss{"validation", {}, {}, {}, {}, true}, validation_accuracy{"validation", {}, {}, {}, {}, true};
  for (const auto& e : t.validations()) {
    out.rows.push_back(row(c, "loss", e.step, e.loss, {{"split", "validation"}}));
    out.rows.push_back(row(c, "accuracy", e.step, e.accuracy, {{"split", "validation"}}));
    validation_loss.x.push_back(double(e.step)), validation_loss.y.push_back(e.loss);
    validation_accuracy.x.push_back(double(e.step)), validation_accuracy.y.push_back(e.accuracy);
  }
  out.rows.push_back(row(c, "loss", test.step, test.loss, {{"split", "test"}}));
  out.rows.push_back(row(c, "accuracy", test.step, test.accuracy, {{"split", "test"}}));
  loss.series = {train_loss, validation_loss};
  accuracy.series = {train_accuracy, validation_accuracy};
  norms.series = phi;
  norms.series.insert(norms.series.end(), jacobian.begin(), jacobian.end());
  out.figures = {loss, accuracy, norms};
  return out;
}

}  // namespace

void require_data_files(const std::filesystem::path& dir, const std::vector<std::string>& files) {
  const bool fashion = files.front() == fashion_mnist_files().front();
  for (const auto& file : files)
    if (!std::filesystem::is_regular_file(dir / file))
      throw std::invalid_argument(text("data-dir: ", (dir / file).string(), " does not exist",
                                       fashion ? " (scripts/install-deps installs dataset-fashion-mnist)" : ""));
}

const std::vector<std::string>& fashion_mnist_files() {
  static const std::vector<std::string> files{"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz",
                                              "t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"};
  return files;
}

StudyDefinition train_study() {
  auto flags = std::make_shared<TrainFlags>();
  StudyDefinition s;
  s.name = "train";
  s.description = "train the ViT mini-trainer and record loss, accuracy and attention norms";
  s.ensemble_flags = false;
  s.monte_carlo = false;
  s.add_flags = [flags](CLI::App& app) {
    auto& f = *flags;
    app.add_option("--model", f.model, "vit-tiny, small or micro")->capture_default_str();
    app.add_option("--dim", f.dim, "embedding dimension D (0: the preset's)")->capture_default_str();
    app.add_option("--depth", f.depth, "blocks (0: the preset's)")->capture_default_str();
    app.add_option("--heads", f.heads, "attention heads (0: the preset's)")->capture_default_str();
    app.add_option("--mlp", f.mlp, "MLP hidden size (0: the preset's)")->capture_default_str();
    app.add_option("--activation", f.activation, "attention activation (a registered name, +prenorm or +prenorm-released, +qkln)")->capture_default_str();
    app.add_option("--p", f.p, "power p of poly activations")->capture_default_str();
    app.add_option("--k", f.k, "scale k of x^p/k: a number or sqrtN (N = patches)")->capture_default_str();
    app.add_option("--alpha", f.alpha, "exponent alpha of h(S)/N^alpha activations")->capture_default_str();
    app.add_option("--patch", f.patch, "patch HxW on the 32x32 image (2x2, 4x4, 8x8, 8x16: N = 256, 64, 16, 8)")->capture_default_str();
    app.add_option("--data", f.data, "fashion-mnist or cifar10 (binary batches in --data-dir)")->capture_default_str();
    app.add_option("--data-dir", f.data_dir, "folder of the dataset files")->capture_default_str();
    app.add_option("--train-limit", f.train_limit, "use only the first K training examples (0: all)")->capture_default_str();
    app.add_option("--validation", f.validation, "examples split off the training set for validation")->capture_default_str();
    app.add_option("--steps", f.steps, "optimisation steps")->capture_default_str();
    app.add_option("--batch", f.batch, "batch size")->capture_default_str();
    app.add_option("--lr", f.lr, "peak learning rate")->capture_default_str();
    app.add_option("--min-lr", f.min_lr, "final learning rate of the cosine schedule")->capture_default_str();
    app.add_option("--warmup", f.warmup, "linear warm-up steps (default: a tenth of --steps, at most 100)");
    app.add_option("--weight-decay", f.weight_decay, "AdamW weight decay")->capture_default_str();
    app.add_option("--clip", f.clip, "global gradient-norm clip (0: none)")->capture_default_str();
    app.add_option("--label-smoothing", f.label_smoothing, "label smoothing in [0, 1)")->capture_default_str();
    app.add_flag("--crop", f.crop, "random crop with 4-pixel zero padding");
    app.add_flag("--flip", f.flip, "random horizontal flip");
    app.add_option("--log-every", f.log_every, "steps between attention-norm records")->capture_default_str();
    app.add_option("--eval-every", f.eval_every, "steps between validation passes")->capture_default_str();
    app.add_option("--checkpoint-every", f.checkpoint_every, "steps between checkpoints")->capture_default_str();
  };
  s.validate = [flags](const StudyOptions& o) {
    if (!o.was_given("--warmup")) flags->warmup = std::min(100L, flags->steps / 10);
    if (o.quick) {  // a CI-sized run: every stage, little compute
      flags->steps = std::min(flags->steps, 20L), flags->warmup = std::min({flags->warmup, 5L, flags->steps});
      flags->train_limit = flags->train_limit > 0 ? flags->train_limit : 2000;
      flags->test_limit = 1000;
      flags->validation = std::min<Index>(flags->validation, 200);
      flags->batch = std::min<Index>(flags->batch, 32), flags->eval_every = std::min(flags->eval_every, 10L);
      flags->log_every = std::min(flags->log_every, 5L);
    }
    validate_flags(*flags, o);
  };
  s.run = [flags](const StudyOptions& o, StudyContext& ctx) {
    const TrainFlags& f = *flags;
    auto data = load_data(f, o.seed);
    const auto config = train_config(f, o, data.train.channels, data.train.height);
    train::Trainer trainer(config, data.train, data.validation);
    const auto state = o.out / ".partial" / "train.state";
    if (std::filesystem::exists(state)) {
      try {
        trainer.restore(read_file(state));
        std::fprintf(stderr, "train: resumed at step %ld\n", trainer.step());
      } catch (const train::CorruptStateError& e) {
        ctx.warnings.push_back(text(state.string(), ": ", e.what(), "; trained from step 0 instead"));
      } catch (const std::runtime_error& e) {
        throw std::runtime_error(text(state.string(), ": ", e.what(), "; remove it or choose another --out"));
      }
    }
    const auto progress = ctx.progress->task(text("train ", config.model.activation.label()));
    while (!trainer.done()) {
      trainer.train_step();
      if (trainer.step() % f.eval_every == 0 || trainer.done()) trainer.record_validation();
      if (trainer.step() % f.checkpoint_every == 0 || trainer.done()) {
        std::filesystem::create_directories(state.parent_path());
        write_atomically(state, trainer.save());
      }
      if (progress) progress(std::uint32_t(trainer.step()), std::uint32_t(config.steps));
    }
    auto out = outputs(trainer, config, trainer.evaluate(data.test));
    out.config = {{"run", train::fingerprint(config)}, {"data", f.data}, {"data_dir", f.data_dir},
                  {"train_examples", data.train.size()}, {"validation_examples", data.validation.size()},
                  {"test_examples", data.test.size()}, {"eval_every", f.eval_every},
                  {"checkpoint_every", f.checkpoint_every}, {"parameters", trainer.model().parameters().size()}};
    std::filesystem::remove(state);
    return out;
  };
  return s;
}

}  // namespace attnlab::io
