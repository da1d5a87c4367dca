#pragma once
// Monte-Carlo estimates of the attention norms over the Gaussian ensemble.
#include <attnlab/accel/engine.hpp>
#include <attnlab/attention/activation.hpp>
#include <attnlab/core/ensemble.hpp>
#include <attnlab/mc/driver.hpp>
#include <attnlab/mc/result.hpp>

#include <functional>
#include <string>
#include <vector>

namespace attnlab {

enum class Precision { float32, float64 };
Precision parse_precision(const std::string& s);
std::string to_string(Precision p);

// cpu: the Eigen/OpenMP engine; thrust: the Thrust engine on OpenMP; cuda: the Thrust engine on a GPU
// with cuBLAS and fused kernels. All three draw the same samples.
enum class Backend { cpu, thrust, cuda };
Backend parse_backend(const std::string& s);
std::string to_string(Backend b);
// Throws std::invalid_argument naming what `backend` cannot do here: a device that is missing, or an
// activation it does not implement (thrust and cuda: elementwise ϕ and softmax, without transforms).
void validate_backend(Backend backend, const std::vector<ActivationSpec>& activations);

// E of a squared quantity (frob2, jac2, qgrad2, kgrad2) of an activation on an ensemble, NaN where unknown (e.g.
// theory::squared_norm_exact).
using ExactMean = std::function<double(const EnsembleSpec&, const Activation&, const std::string& quantity)>;

struct AttentionMcConfig {
  EnsembleSpec ensemble;
  std::vector<ActivationSpec> activations;  // evaluated on the same X, Q, K of each trial
  std::uint64_t seed = 1;
  std::uint32_t trials = 32;
  Precision precision = Precision::float64;
  std::string study = "attention_norms";
  Backend backend = Backend::cpu;
  bool gradients = true;  // the Q- and K-gradient quantities; without them their rows are left out, and not paid for
  // Each squared quantity whose exact mean this knows is the control variate of its norm (frob, jac, qgrad, kgrad),
  // whose row then carries the column cv_variance_ratio; the squared quantity's own row stays the plain mean.
  ExactMean exact_mean{};
};

// The quantities of every activation: frob, frob2, jac, jac2, qgrad, qgrad2, kgrad, kgrad2, and the
// attention weights' mean_weight = mean_ij ϕ_ij, row_sum = mean_i Σ_j ϕ_ij and row_sum2 = mean_i (Σ_j ϕ_ij)².
const std::vector<std::string>& attention_quantities();
bool is_gradient_quantity(const std::string& quantity);  // qgrad, qgrad2, kgrad or kgrad2

// Rows (activation × quantity) for one ensemble configuration; Inf/NaN trials are counted
// in Estimate::nonfinite and excluded from the mean.
std::vector<ResultRow> run_attention_norms(const AttentionMcConfig& config, const ProgressFn& progress = {});

// Throws std::invalid_argument (one line naming N) where one trial of an accelerated backend's configuration cannot
// fit this rank's share of its device's memory; nothing on cpu.
void refuse_what_device_cannot_fit(const AttentionMcConfig& config);

// The configuration as the accelerated engines take it (activations resolved for its N and d).
accel::Problem accelerated_problem(const AttentionMcConfig& config);

// A key that names the configuration's result exactly (for ResultCache).
std::string cache_key(const AttentionMcConfig& config);

}  // namespace attnlab
