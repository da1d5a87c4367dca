#pragma once
// A grid of ensembles × activations, each grid point a cached Monte-Carlo run, with
// log-log fits over N of the chosen quantities and one figure per quantity.
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/mc/figure.hpp>

#include <functional>
#include <string>
#include <vector>

namespace attnlab {

struct SweepSpec {
  std::string study{};
  std::vector<EnsembleSpec> ensembles{};
  std::vector<ActivationSpec> activations{};
  std::vector<std::string> quantities{};  // kept in the output, e.g. {"frob", "frob2"}
  std::vector<std::string> fitted{};      // fitted over N and plotted, e.g. {"frob"}
  std::uint64_t seed = 1;
  std::uint32_t trials = 32;
  Precision precision = Precision::float64;
  Backend backend = Backend::cpu;
  ExactMean exact_mean{};  // control variates (AttentionMcConfig::exact_mean)
  // Slopes s drawn as dashed N^s guides on each figure, through the geometric mean of the curves at the smallest N.
  std::vector<double> reference_slopes{};
};

struct SweepResult {
  std::vector<ResultRow> rows;  // estimates, then one "<quantity>_exponent" row per fit
  std::vector<Figure> figures;
};

// A quantity of attention_quantities() as people write it, e.g. "||phi(S)||_F" for frob.
std::string describe_quantity(const std::string& quantity);

// Dashed guides N^s, one per slope, over the figure's range of N and through the geometric mean of its curves' values
// at the smallest N (a figure without two distinct N or a positive value there gets none).
void add_reference_slopes(Figure& figure, const std::vector<double>& slopes);

SweepResult run_sweep(const SweepSpec& spec, ResultCache* cache,
                      const std::function<ProgressFn(const std::string&)>& progress = {});

}  // namespace attnlab
