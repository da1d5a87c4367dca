#include "grid_sweep.hpp"

#include <attnlab/io/table.hpp>
#include <attnlab/mc/sweep.hpp>
#include <attnlab/theory/moments.hpp>

#include <algorithm>

namespace attnlab::study {
namespace {

// The flags that set the swept grid: giving one makes a claims study explore it instead of checking claims.
constexpr const char* kGridFlags[] = {"--N",          "--D",          "--d",         "--p",
                                      "--k",          "--alpha",      "--sigma-x",   "--sigma-t",
                                      "--activation", "--convention", "--precision", "--reference-slope"};

}  // namespace

bool grid_flag_given(const StudyOptions& o) {
  return std::any_of(std::begin(kGridFlags), std::end(kGridFlags), [&](const char* f) { return o.was_given(f); });
}

StudyOutput sweep_output(const std::string& name, const GridSweep& grid, const StudyOptions& o, StudyContext& ctx) {
  const auto trials = claim_context(o, ctx).trials_or(64, 8);
  const auto sweep = run_sweep({.study = name,
                                .ensembles = o.ensembles(),
                                .activations = o.activation_specs(),
                                .quantities = grid.quantities,
                                .fitted = grid.fitted,
                                .seed = o.seed,
                                .trials = trials,
                                .precision = o.precision,
                                .backend = o.backend,
                                .exact_mean = o.plain_means ? ExactMean{} : theory::squared_norm_exact,
                                .reference_slopes = o.reference_slopes},
                               ctx.cache, [&](const std::string& label) { return ctx.progress->task(label); });
  StudyOutput out{.rows = sweep.rows, .figures = sweep.figures};
  out.config = {{"N", o.N},
                {"D", o.D},
                {"d", o.d},
                {"p", o.p},
                {"k", o.k},
                {"alpha", o.alpha},
                {"sigma_x", o.sigma_x},
                {"sigma_t", o.sigma_t},
                {"activation", o.activations},
                {"convention", o.convention},
                {"precision", to_string(o.precision)},
                {"control_variates", !o.plain_means},
                {"reference_slopes", o.reference_slopes},
                {"exploratory", grid_flag_given(o)}};
  std::vector<std::string> formulas;  // their normalised text, as the CSV, cache and figures name them
  for (const auto& a : o.activation_specs())
    if (a.formula) formulas.push_back(a.label());
  if (!formulas.empty()) out.config["formulas"] = formulas;
  out.summary = io::sweep_table(sweep.rows, grid.fitted);
  return out;
}

GridSweep poly_grid(std::vector<std::string> quantities, std::vector<std::string> fitted) {
  GridSweep grid{.quantities = std::move(quantities), .fitted = std::move(fitted)};
  grid.defaults.N = {16, 32, 64, 128, 256, 512, 1024};
  grid.defaults.D = {64};
  grid.defaults.d = {64};
  grid.defaults.p = {1, 2, 3};
  grid.defaults.k = {"1", "sqrtN"};
  grid.defaults.activations = {"poly", "softmax"};
  grid.quick_defaults = grid.defaults;
  grid.quick_defaults.N = {8, 16, 32, 64};
  grid.quick_defaults.D = {16};
  grid.quick_defaults.d = {16};
  return grid;
}

StudyDefinition ensemble_sweep_study(std::string name, std::string description, GridSweep grid) {
  StudyDefinition study{.name = name, .description = std::move(description), .accelerated = true};
  study.defaults = grid.defaults;
  study.quick_defaults = grid.quick_defaults;
  study.run = [name, grid](const StudyOptions& o, StudyContext& ctx) { return sweep_output(name, grid, o, ctx); };
  return study;
}

}  // namespace attnlab::study
