// Every field of a configuration reaches the key its results are stored under: changing any one field changes the
// key, and no two changes give the same key. A key that missed a field would hand one configuration's cached trials,
// checkpoint or trained point to another.
#include <attnlab/attention/formula.hpp>
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/sweeps/train_run.hpp>
#include <attnlab/train/trainer.hpp>

#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

using namespace attnlab;

namespace {

// A field added to one of these structs must join its key and the changes below: the sizes (x86-64, GCC and Clang)
// fail to match until then, unless the field fits in padding (a bool beside others), which review must catch.
static_assert(sizeof(Transforms) == 24);
static_assert(sizeof(ActivationSpec) == 160);
static_assert(sizeof(train::Augmentation) == 24);
static_assert(sizeof(train::VitConfig) == 272);
static_assert(sizeof(train::TrainConfig) == 392);
static_assert(sizeof(sweeps::TrainData) == 96);
static_assert(sizeof(EnsembleSpec) == 40);
static_assert(sizeof(AttentionMcConfig) == 152);

template <class Config>
using Changes = std::vector<std::pair<std::string, std::function<void(Config&)>>>;

template <class Config, class KeyOf>
void expect_each_change_changes_the_key(const Config& base, KeyOf key_of, const Changes<Config>& changes) {
  std::set<std::string> keys{key_of(base)};
  for (const auto& [field, change] : changes) {
    Config changed = base;
    change(changed);
    EXPECT_TRUE(keys.insert(key_of(changed)).second)
        << field << ": the key does not change, or equals another change's: " << key_of(changed);
  }
}

// Every transform on, so that each of their constants is read.
ActivationSpec poly_with_transforms() {
  auto a = ActivationSpec::parse("poly+prenorm+qkln");
  a.p = 3, a.k = KScale::parse("sqrtN");
  return a;
}

const Changes<ActivationSpec> kActivationChanges{
    {"name", [](ActivationSpec& a) { a.name = "relu"; }},
    {"p", [](ActivationSpec& a) { a.p = 4; }},
    {"k", [](ActivationSpec& a) { a.k = KScale::parse("2"); }},
    {"convention", [](ActivationSpec& a) { a.convention = Convention::outside; }},
    {"alpha", [](ActivationSpec& a) { a.alpha = 0.5; }},
    {"prenorm", [](ActivationSpec& a) { a.transforms.prenorm = false; }},
    {"prenorm_before_scaling", [](ActivationSpec& a) { a.transforms.prenorm_before_scaling = true; }},
    {"qk_layernorm", [](ActivationSpec& a) { a.transforms.qk_layernorm = false; }},
    {"prenorm_eps", [](ActivationSpec& a) { a.transforms.prenorm_eps = 1e-3; }},
    {"qk_eps", [](ActivationSpec& a) { a.transforms.qk_eps = 1e-3; }},
};

}  // namespace

TEST(Keys, EveryActivationFieldChangesItsKey) {
  expect_each_change_changes_the_key(
      poly_with_transforms(), [](const ActivationSpec& a) { return a.key(); }, kActivationChanges);
}

TEST(Keys, AFormulaAndEachOfItsParametersChangeItsKey) {
  const auto base = [] {
    auto a = ActivationSpec::parse("expr:x^3/c");
    a.params = {{"c", 2.0}};
    return a;
  }();
  expect_each_change_changes_the_key(
      base, [](const ActivationSpec& a) { return a.key(); },
      Changes<ActivationSpec>{
          {"formula",
           [](ActivationSpec& a) {
             a = ActivationSpec::parse("expr:x^2/c");
             a.params = {{"c", 2.0}};
           }},
          {"parameter",
           [](ActivationSpec& a) {
             a.params = {{"c", 3.0}};
           }},
      });
}

TEST(Keys, EveryTrainingFieldChangesTheRunKey) {
  sweeps::TrainRun base;
  base.config.model.activation = poly_with_transforms();
  base.config.model.qk_init = train::QkInit::timm;
  using R = sweeps::TrainRun;
  Changes<R> changes{
      {"image_h", [](R& r) { r.config.model.image_h = 28; }},
      {"image_w", [](R& r) { r.config.model.image_w = 28; }},
      {"channels", [](R& r) { r.config.model.channels = 3; }},
      {"classes", [](R& r) { r.config.model.classes = 100; }},
      {"patch_h", [](R& r) { r.config.model.patch_h = 8; }},
      {"patch_w", [](R& r) { r.config.model.patch_w = 8; }},
      {"dim", [](R& r) { r.config.model.dim = 128; }},
      {"depth", [](R& r) { r.config.model.depth = 3; }},
      {"heads", [](R& r) { r.config.model.heads = 4; }},
      {"mlp_hidden", [](R& r) { r.config.model.mlp_hidden = 512; }},
      {"qkv_bias", [](R& r) { r.config.model.qkv_bias = !r.config.model.qkv_bias; }},
      {"ln_eps", [](R& r) { r.config.model.ln_eps = 1e-5; }},
      {"qk_init", [](R& r) { r.config.model.qk_init = train::QkInit::unit; }},
      {"matmul", [](R& r) { r.config.model.matmul = ProductPrecision::bf16; }},
      {"readout", [](R& r) { r.config.model.readout = train::Readout::last; }},
      {"batch", [](R& r) { r.config.batch = 32; }},
      {"steps", [](R& r) { r.config.steps = 2000; }},
      {"warmup", [](R& r) { r.config.warmup = 50; }},
      {"lr", [](R& r) { r.config.lr = 3e-3; }},
      {"min_lr", [](R& r) { r.config.min_lr = 0; }},
      {"weight_decay", [](R& r) { r.config.weight_decay = 0.1; }},
      {"clip", [](R& r) { r.config.clip = 0; }},
      {"label_smoothing", [](R& r) { r.config.label_smoothing = 0.1; }},
      {"beta1", [](R& r) { r.config.beta1 = 0.8; }},
      {"beta2", [](R& r) { r.config.beta2 = 0.99; }},
      {"random_crop", [](R& r) { r.config.augment.random_crop = !r.config.augment.random_crop; }},
      {"crop_padding", [](R& r) { r.config.augment.crop_padding = 2; }},
      {"flip", [](R& r) { r.config.augment.flip = !r.config.augment.flip; }},
      {"seed", [](R& r) { r.config.seed = 2; }},
      {"log_every", [](R& r) { r.config.log_every = 20; }},
      {"data", [](R& r) { r.data.name = "recall"; }},
      {"validation", [](R& r) { r.data.validation = 2000; }},
      {"train_limit", [](R& r) { r.data.train_limit = 1000; }},
      {"test_limit", [](R& r) { r.data.test_limit = 1000; }},
  };
  for (const auto& [field, change] : kActivationChanges)
    changes.push_back({"activation " + field, [change](R& r) { change(r.config.model.activation); }});
  expect_each_change_changes_the_key(
      base, [](const R& r) { return sweeps::run_key(r); }, changes);
}

TEST(Keys, EveryMonteCarloFieldChangesTheCacheKey) {
  AttentionMcConfig base{.ensemble = {.N = 16, .D = 8, .d = 4}, .activations = {poly_with_transforms()}};
  using C = AttentionMcConfig;
  Changes<C> changes{
      {"N", [](C& c) { c.ensemble.N = 32; }},
      {"D", [](C& c) { c.ensemble.D = 16; }},
      {"d", [](C& c) { c.ensemble.d = 8; }},
      {"sigma_x", [](C& c) { c.ensemble.sigma_x = 2; }},
      {"sigma_t", [](C& c) { c.ensemble.sigma_t = 2; }},
      {"activations", [](C& c) { c.activations.push_back(ActivationSpec::parse("softmax")); }},
      {"seed", [](C& c) { c.seed = 2; }},
      {"trials", [](C& c) { c.trials = 64; }},
      {"precision", [](C& c) { c.precision = Precision::float32; }},
      {"study", [](C& c) { c.study = "other"; }},
      {"backend", [](C& c) { c.backend = Backend::thrust; }},
      {"gradients", [](C& c) { c.gradients = false; }},
      {"exact_mean",
       [](C& c) { c.exact_mean = [](const EnsembleSpec&, const Activation&, const std::string&) { return 1.0; }; }},
  };
  for (const auto& [field, change] : kActivationChanges)
    changes.push_back({"activation " + field, [change](C& c) { change(c.activations[0]); }});
  expect_each_change_changes_the_key(base, cache_key, changes);
}
