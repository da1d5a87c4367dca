// Every entry of elementwise_functions.def and row_normalised_functions.def reaches, from the entry alone, all that
// takes an activation: the registry and the parser, the compile-time dispatch, the trainer, a study's grid and its
// family's claims (Python: python/tests, test_every_entry_is_an_activation). The tests read the entries the way the
// library does, so they check a new entry as they check these, and a toy entry made for them would add nothing.
#include <attnlab/attention/activation.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/studies/studies.hpp>
#include <attnlab/study/study.hpp>
#include <attnlab/theory/claims.hpp>
#include <attnlab/train/trainer.hpp>

#include "cli/cli_support.hpp"
#include "support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace attnlab;

namespace {

// One entry as the .def files state it, with its body called directly (p = 3; the row constants below).
struct Entry {
  std::string name;
  ActivationFamily family;
  bool row_normalised;
  Elementwise fn;
  RowNormalised row;
  ElementwiseScale scale;
  void (*body)(double x, double& value, double& derivative);
};

constexpr int kPower = 3;
constexpr RowConstants kRowConstants{.shift = 0.25, .logit_scale = 0.125};

const std::vector<Entry> kEntries{
#define ATTNLAB_ELEMENTWISE(fn, name, scale, family, float_tiles, description, ...) \
  {name,                                                                            \
   ActivationFamily::family,                                                        \
   false,                                                                           \
   Elementwise::fn,                                                                 \
   RowNormalised::formula,                                                          \
   ElementwiseScale::scale,                                                         \
   [](double x, double& h, double& dh) { evaluate<Elementwise::fn>(x, kPower, h, dh); }},
#include <attnlab/attention/elementwise_functions.def>
#define ATTNLAB_ROW_NORMALISED(fn, name, family, description, ...) \
  {name,                                                           \
   ActivationFamily::family,                                       \
   true,                                                           \
   Elementwise::formula,                                           \
   RowNormalised::fn,                                              \
   ElementwiseScale::none,                                         \
   [](double x, double& g, double& dg) { evaluate_row<RowNormalised::fn>(x, kRowConstants, g, dg); }},
#include <attnlab/attention/row_normalised_functions.def>
};

// Away from relu's and relu6's kinks and sirenmax's poles (sin x = 1).
constexpr double kPoints[] = {-2.3, -0.4, 0.05, 0.7, 2.9, 7.5};

}  // namespace

TEST(ActivationEntries, EachIsRegisteredUnderItsName) {
  for (const auto& e : kEntries) {
    SCOPED_TRACE(e.name);
    const auto& info = find_activation(e.name);
    EXPECT_EQ(info.family, e.family);
    EXPECT_EQ(info.row_normalised, e.row_normalised);
    EXPECT_TRUE(e.row_normalised ? info.row == e.row : info.fn == e.fn);
    EXPECT_EQ(info.uses_p, e.scale == ElementwiseScale::over_k);
    EXPECT_EQ(info.uses_alpha, e.scale == ElementwiseScale::over_n_alpha);
    const Activation a = ActivationSpec::parse(e.name).resolve(8, 4);
    EXPECT_TRUE(e.row_normalised ? std::get<RowActivation>(a.fn).fn == e.row
                                 : std::get<ElementwiseActivation>(a.fn).fn == e.fn);
  }
  // poly-learned, a way of training poly, is the registry's one name without an entry of its own.
  EXPECT_EQ(activation_registry().size(), kEntries.size() + 1);
}

// The run-time dispatch reaches the entry's own body, and its derivative is its value's.
TEST(ActivationEntries, EachDispatchesToItsBodyWithItsDerivative) {
  for (const auto& e : kEntries) {
    SCOPED_TRACE(e.name);
    const auto at = [&](double x, double& v, double& dv) {
      if (e.row_normalised) evaluate_row(e.row, x, kRowConstants, v, dv);
      else evaluate(e.fn, kPower, x, v, dv);
    };
    for (double x : kPoints) {
      SCOPED_TRACE(x);
      double v, dv, own, own_derivative;
      at(x, v, dv);
      e.body(x, own, own_derivative);
      EXPECT_EQ(v, own);
      EXPECT_EQ(dv, own_derivative);
      const double step = 1e-6 * std::max(1.0, std::abs(x));
      double up, down, ignored;
      at(x + step, up, ignored);
      at(x - step, down, ignored);
      EXPECT_TRUE(test::close(dv, (up - down) / (2 * step), test::tol.finite_diff_rel, test::tol.finite_diff_abs));
    }
  }
}

// Two optimisation steps of the micro ViT with the entry's activation in every block.
TEST(ActivationEntries, EachTrainsTheVit) {
  train::Dataset data;
  data.height = 8, data.width = 8, data.classes = 2;
  for (int e = 0; e < 32; ++e) {
    data.labels.push_back(e % 2);
    for (int j = 0; j < 64; ++j) data.pixels.push_back(std::uint8_t((e * 37 + j * 11) % 256));
  }
  for (const auto& e : kEntries) {
    SCOPED_TRACE(e.name);
    train::TrainConfig c;
    c.model = train::VitConfig::preset("micro");
    c.model.image_h = 8, c.model.image_w = 8, c.model.patch_h = 4, c.model.patch_w = 2, c.model.classes = 2;
    c.model.activation = ActivationSpec::parse(e.name);
    c.batch = 8, c.steps = 2, c.warmup = 1, c.log_every = 1, c.seed = test::seed();
    train::Trainer t(c, data, data);
    while (!t.done()) EXPECT_TRUE(std::isfinite(t.train_step().loss));
    EXPECT_TRUE(std::isfinite(t.evaluate().loss));
  }
}

// Every entry in one grid of poly_frobenius, run in this process as its binary runs it.
TEST(ActivationEntries, EachRunsInAStudyGrid) {
  const test::cli::ScratchDir out("activation_entries");
  std::string names;
  for (const auto& e : kEntries) names += (names.empty() ? "" : ",") + e.name;
  study::StudyRunHooks hooks;
  hooks.quiet = true;
  ASSERT_EQ(study::run_study(studies::find_study("poly_frobenius"), {"--quick",    "--N",      "4,8",
                                                                     "--D",        "4",        "--d",
                                                                     "4",          "--trials", "2",
                                                                     "--threads",  "1",        "--p",
                                                                     text(kPower), "--k",      "sqrtN",
                                                                     "--alpha",    "1",        "--activation",
                                                                     names,        "--out",    out.path.string()},
                             hooks),
            0)
      << hooks.error;
  const auto csv = test::cli::read_csv(out / "poly_frobenius.csv");
  for (const auto& e : kEntries) {
    auto spec = ActivationSpec::parse(e.name);
    spec.p = kPower;
    spec.k = KScale::parse("sqrtN");
    const auto label = spec.label();
    std::size_t rows = 0;
    for (std::size_t r = 0; r < csv.rows.size(); ++r) rows += csv.at(r, "activation") == label;
    EXPECT_GT(rows, 0u) << label << " has no rows";
  }
}

// The RELU claims take every h of their family from the registry; their method names them.
TEST(ActivationEntries, EachOfTheReluFamilyIsInItsClaims) {
  const auto& method = claim_registry().find("relu.mean_weight").method;
  for (const auto& e : kEntries)
    if (e.family == ActivationFamily::relu) {
      EXPECT_NE(method.find(e.name), std::string::npos) << e.name;
    }
}
