#include <attnlab/core/text.hpp>
#include <attnlab/sweeps/train_run.hpp>
#include <attnlab/theory/training_rows.hpp>

#include <algorithm>
#include <sstream>
#include <stdexcept>

namespace attnlab::sweeps {
namespace {

std::pair<Index, Index> parse_patch(const std::string& s) {
  Index h = 0, w = 0;
  char x = 0, rest = 0;
  std::istringstream in(s);
  if (!(in >> h >> x >> w) || x != 'x' || in >> rest || h < 1 || w < 1)
    throw CLI::ValidationError(text("patch must be HxW with positive sides, e.g. 4x4 or 8x16 (got '", s, "')"));
  return {h, w};
}

}  // namespace

void set_preset_shape(train::VitConfig& model, const std::string& preset) {
  const auto shape = train::VitConfig::preset(preset);
  model.dim = shape.dim, model.depth = shape.depth, model.heads = shape.heads, model.mlp_hidden = shape.mlp_hidden;
}

namespace {

// "vit-tiny (D 192, depth 12, 3 heads, MLP 768), small (64, 2, 2, 256) or micro (16, 2, 2, 32)".
std::string preset_help() {
  std::string help;
  for (std::size_t i = 0; i < train::kModelPresets.size(); ++i) {
    const auto& p = train::kModelPresets[i];
    help += text(i == 0                                 ? ""
                 : i + 1 == train::kModelPresets.size() ? " or "
                                                        : ", ",
                 p.name,
                 i == 0 ? text(" (D ", p.dim, ", depth ", p.depth, ", ", p.heads, " heads, MLP ", p.mlp_hidden, ")")
                        : text(" (", p.dim, ", ", p.depth, ", ", p.heads, ", ", p.mlp_hidden, ")"));
  }
  return help;
}

std::vector<std::string> preset_names() {
  std::vector<std::string> names;
  for (const auto& p : train::kModelPresets) names.push_back(p.name);
  return names;
}

}  // namespace

void add_train_flags(CLI::App& app, TrainRun& run, TrainFlags flags) {
  auto& c = run.config;
  auto& m = c.model;
  auto& a = m.activation;
  auto& data = run.data;
  // CLI11 runs the options' callbacks in the order they are added: the preset first, so --dim and the rest override it.
  app.add_option_function<std::string>(
         "--model", [&m](const std::string& name) { set_preset_shape(m, name); },
         preset_help() + ": sets --dim, --depth, --heads and --mlp")
      ->check(CLI::IsMember(preset_names()));
  app.add_option("--dim", m.dim, "embedding dimension D")->capture_default_str();
  app.add_option("--depth", m.depth, "blocks")->capture_default_str();
  app.add_option("--heads", m.heads, "attention heads")->capture_default_str();
  app.add_option("--mlp", m.mlp_hidden, "MLP hidden size")->capture_default_str();
  app.add_option_function<std::string>(
         "--matmul", [&m](const std::string& name) { m.matmul = parse_product_precision(name); },
         "the linear layers' products: native (float) or bf16 (operands rounded to bfloat16, sums in float)")
      ->check(CLI::IsMember({"native", "bf16"}))
      ->default_str(to_string(m.matmul));
  app.add_option_function<std::string>(
         "--readout", [&m](const std::string& name) { m.readout = train::parse_readout(name); },
         "the token the head reads: cls (ViT's) or last (recall's query)")
      ->check(CLI::IsMember({"cls", "last"}))
      ->default_str(train::to_string(m.readout));
  if (flags == TrainFlags::every) {
    app.add_option_function<std::string>(
           "--init", [&m](const std::string& name) { m.qk_init = train::parse_qk_init(name); },
           "initial Q and K weights: timm (N(0, 0.02^2)), xavier (variance 1/D) or unit (logits of unit variance)")
        ->default_str(train::to_string(m.qk_init));
    app.add_option_function<std::string>(
           "--activation",
           [&a](const std::string& name) {
             auto spec = ActivationSpec::parse(name);
             spec.p = a.p, spec.k = a.k, spec.alpha = a.alpha, spec.params = a.params;  // their flags come next
             a = spec;
           },
           "attention activation (a registered name, +prenorm or +prenorm-released, +qkln; or a formula: "
           "expr:x^3/sqrt(N), rowexpr:exp(x))")
        ->default_str(a.name);
    app.add_option_function<std::vector<std::string>>(
           "--param",
           [&a](const std::vector<std::string>& assignments) {
             for (const auto& s : assignments) parse_formula_parameter(s, a.params);
           },
           "values of a formula's parameters, NAME=NUMBER (comma-separated, repeatable)")
        ->delimiter(',');
    app.add_option("--p", a.p, "power p of poly activations")->capture_default_str();
    app.add_option_function<std::string>(
           "--k", [&a](const std::string& k) { a.k = KScale::parse(k); },
           "scale k of x^p/k: a number or sqrtN (N = patches)")
        ->default_str(a.k.str());
    app.add_option("--alpha", a.alpha, "exponent alpha of h(S)/N^alpha activations")->capture_default_str();
    app.add_option_function<std::string>(
           "--patch", [&m](const std::string& s) { std::tie(m.patch_h, m.patch_w) = parse_patch(s); },
           "patch HxW on the 32x32 image (2x2, 4x4, 8x8, 8x16: N = 256, 64, 16, 8)")
        ->default_str(text(m.patch_h, "x", m.patch_w));
  }
  app.add_option("--data", data.name,
                 "fashion-mnist, cifar10 (binary batches in --data-dir) or recall (associative recall generated from "
                 "the seed: N - 1 key-value tokens and a query, N from the patch as on the 32x32 image)")
      ->check(CLI::IsMember({"fashion-mnist", "cifar10", "recall"}))
      ->capture_default_str();
  app.add_option("--data-dir", data.dir, "folder of the dataset's files")->capture_default_str();
  app.add_option("--train-limit", data.train_limit, "use only the first K training images (0: all)")
      ->capture_default_str();
  app.add_option("--validation", data.validation, "images split off the training set for validation")
      ->capture_default_str();
  app.add_option("--steps", c.steps, "optimisation steps")->capture_default_str();
  app.add_option("--batch", c.batch, "batch size")->capture_default_str();
  app.add_option("--lr", c.lr, "peak learning rate")->capture_default_str();
  app.add_option("--min-lr", c.min_lr, "final learning rate of the cosine schedule")->capture_default_str();
  app.add_option("--warmup", c.warmup, "linear warm-up steps")->capture_default_str();
  app.add_option("--weight-decay", c.weight_decay, "AdamW weight decay")->capture_default_str();
  app.add_option("--clip", c.clip, "global gradient-norm clip (0: none)")->capture_default_str();
  app.add_option("--label-smoothing", c.label_smoothing, "label smoothing in [0, 1)")->capture_default_str();
  app.add_flag("--crop", c.augment.random_crop, "random crop with 4-pixel zero padding");
  app.add_flag("--flip", c.augment.flip, "random horizontal flip");
  app.add_option("--log-every", c.log_every, "steps between attention-norm records")->capture_default_str();
}

nlohmann::json to_json(const TrainRun& run) {
  const auto& c = run.config;
  const auto& m = c.model;
  return {{"model",
           {{"dim", m.dim},
            {"depth", m.depth},
            {"heads", m.heads},
            {"mlp", m.mlp_hidden},
            {"init", train::to_string(m.qk_init)},
            {"matmul", to_string(m.matmul)},
            {"readout", train::to_string(m.readout)}}},
          {"batch", c.batch},
          {"steps", c.steps},
          {"warmup", c.warmup},
          {"lr", c.lr},
          {"min_lr", c.min_lr},
          {"weight_decay", c.weight_decay},
          {"clip", c.clip},
          {"label_smoothing", c.label_smoothing},
          {"crop", c.augment.random_crop},
          {"flip", c.augment.flip},
          {"log_every", c.log_every},
          {"optimizer", "AdamW, cosine schedule"},
          {"data", run.data.name},
          {"validation_images", run.data.validation},
          {"train_limit", run.data.train_limit}};
}

std::string run_key(const TrainRun& run) {
  return text(train::fingerprint(run.config), run.data.name == "fashion-mnist" ? "" : "|data=" + run.data.name,
              "|validation=", run.data.validation, ":train-limit=", run.data.train_limit,
              run.data.test_limit == 0 ? "" : text(":test-limit=", run.data.test_limit));  // keys before it had none
}

std::string task_of(const TrainRun& run) {
  if (run.data.name != "recall") return "";
  const bool reads_query = run.config.model.readout == train::Readout::last;
  return training_rows::recall_recipe(reads_query, run.config.clip != 0, run.config.lr).folder;
}

void fit_model_to_data(train::VitConfig& model, const TrainData& data) {
  constexpr Index side = 32;
  model.channels = data.name == "cifar10" ? 3 : 1;
  model.image_h = model.image_w = side;
  if (data.name != "recall") return;
  if (side % model.patch_h != 0 || side % model.patch_w != 0)
    throw std::invalid_argument(text("patch ", model.patch_h, "x", model.patch_w, " does not tile the 32x32 image"));
  const Index tokens = model.patches();
  if (tokens < 2)
    throw std::invalid_argument(text("patch ", model.patch_h, "x", model.patch_w,
                                     " gives N = 1: --data recall needs N >= 2 (a query and a key-value token)"));
  fit_recall_tokens(model, tokens);
}

void fit_recall_tokens(train::VitConfig& model, Index tokens) {
  if (tokens < 2 || tokens > train::kRecallCodes)
    throw std::invalid_argument(
        text("N must be from 2 to ", train::kRecallCodes, " for --data recall (got ", tokens, ")"));
  model.channels = 1;
  model.image_h = tokens, model.image_w = train::kRecallWidth;
  model.patch_h = 1, model.patch_w = train::kRecallWidth;
}

std::vector<std::string> data_files(const TrainData& data) {
  if (data.name == "fashion-mnist") return train::kFashionMnistFiles;
  if (data.name == "cifar10") return train::kCifar10Files;
  return {};
}

Index training_examples(const TrainData& data) {
  const Index all = data.name == "fashion-mnist" ? 60000 : data.name == "cifar10" ? 50000 : kRecallTrainExamples;
  return data.train_limit > 0 ? std::min(data.train_limit, all) : all;
}

train::Dataset load_images(const TrainData& data, bool test) {
  train::Dataset images;
  if (data.name == "fashion-mnist") {
    images = train::pad(train::load_fashion_mnist(data.dir, !test), 32, 32);
  } else if (test) {
    images = train::read_cifar10({data.dir / train::kCifar10Files.back()});
  } else {
    std::vector<std::filesystem::path> batches;
    for (std::size_t b = 0; b + 1 < train::kCifar10Files.size(); ++b)
      batches.push_back(data.dir / train::kCifar10Files[b]);
    images = train::read_cifar10(batches);
  }
  return train::first(std::move(images), test ? data.test_limit : data.train_limit);
}

RunData run_data(const TrainData& data, const train::VitConfig& model, std::uint64_t seed,
                 const train::Dataset* images) {
  if (data.name == "recall") {
    using train::RecallSplit;
    const Index tokens = model.patches();
    return {train::recall_dataset({tokens, seed, RecallSplit::train}, training_examples(data) - data.validation),
            train::recall_dataset({tokens, seed, RecallSplit::validation}, data.validation)};
  }
  if (data.validation >= images->size())
    throw std::invalid_argument(
        text("validation must be smaller than the ", images->size(), " training examples (got ", data.validation, ")"));
  auto [train_part, validation_part] = train::split(*images, data.validation, seed);
  return {std::move(train_part), std::move(validation_part)};
}

void require_data_files(const std::filesystem::path& dir, const std::vector<std::string>& files) {
  const bool fashion = !files.empty() && files.front() == train::kFashionMnistFiles.front();
  for (const auto& file : files)
    if (!std::filesystem::is_regular_file(dir / file))
      throw std::invalid_argument(text("data-dir: ", (dir / file).string(), " does not exist",
                                       fashion ? " (scripts/install-deps installs dataset-fashion-mnist)" : ""));
}

TrainSplits load_splits(const TrainData& data, const train::VitConfig& model, std::uint64_t seed) {
  if (data.name == "recall") {
    auto [train_part, validation_part] = run_data(data, model, seed, nullptr);
    const Index test = data.test_limit > 0 ? data.test_limit : kRecallTestExamples;
    return {std::move(train_part), std::move(validation_part),
            train::recall_dataset({model.patches(), seed, train::RecallSplit::test}, test)};
  }
  const auto images = load_images(data, false);
  auto [train_part, validation_part] = run_data(data, model, seed, &images);
  return {std::move(train_part), std::move(validation_part), load_images(data, true)};
}

}  // namespace attnlab::sweeps
