#pragma once
// The accelerated Monte-Carlo engines of cuda/. One Thrust engine, written once, is built for OpenMP on
// every machine (--backend thrust) and, where nvcc exists, for CUDA with cuBLAS GEMMs and fused tile
// kernels (--backend cuda). Both draw exactly the CPU engine's samples (the same Philox streams).
#include <attnlab/attention/elementwise.hpp>
#include <attnlab/norms/norms_squared.hpp>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace attnlab::accel {

enum class Device { thrust_omp, cuda };

// ϕ = out_scale · h(logit_scale · m) for elementwise h, or softmax(logit_scale · m) by rows.
struct ActivationParams {
  bool softmax = false;
  Elementwise fn = Elementwise::power;
  int p = 1;
  double logit_scale = 1.0;
  double out_scale = 1.0;
};

struct Problem {
  std::int64_t N = 64, D = 64, d = 64;
  double sigma_x = 1.0, sigma_t = 1.0;
  std::uint64_t seed = 1;
  std::uint64_t configuration = 0;  // EnsembleSpec::configuration_key(): selects the CPU engine's streams
  std::uint32_t trials = 1;
  bool single_precision = false;  // X, Q, K, the GEMMs and the logits in float; sums in double
  std::vector<ActivationParams> activations;
  std::uint32_t first_trial = 0;  // the trials are first_trial … first_trial + trials − 1 (a rank's block of a job)
};

struct Options {
  bool fused = true;               // cuda: elementwise ϕ by the fused tile kernel (false: the slab path)
  std::int64_t slab_elements = 0;  // logits held at once (slab path); 0: the device's default
  int device = 0;                  // cuda: the GPU, modulo the devices present (an MPI job passes its rank)
};

using Progress = std::function<void(std::uint32_t done, std::uint32_t total)>;

// Squared norms of trials first_trial … first_trial + trials − 1: element (t − first_trial) · activations + a. Throws std::runtime_error when
// the device cannot be used (see cuda_unavailable_reason).
std::vector<AttentionNormsSquared> trial_norms(Device device, const Problem& problem, const Options& options = {},
                                               const Progress& progress = {});

// X, Q, K of one trial as the engine draws them (row-major, widened to double).
struct Sample {
  std::vector<double> X, Q, K;
};
Sample draw(Device device, const Problem& problem, std::uint32_t trial);

// ‖S‖₂ of SOFT's Gaussian kernel S_ij = exp(−‖q_i − k_j‖²/(2√d)) for the rows of Q (n × d) and K (m × d),
// row-major, by power iteration on SᵀS with every product formed on the fly: memory O((n + m)·d), never n × m.
// Stops when ‖Sv‖/‖v‖ changes by at most `tolerance` relative.
struct SpectralResult {
  double value = 0;
  int iterations = 0;
  bool converged = false;
};
SpectralResult gaussian_kernel_norm(Device device, const std::vector<double>& Q, const std::vector<double>& K,
                                    std::int64_t d, double tolerance = 1e-10, int max_iterations = 500);

// Empty when a CUDA device can be used; otherwise one line saying why not.
std::string cuda_unavailable_reason();
// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)"; throws where cuda_unavailable_reason() is not empty.
std::string cuda_device_description();

}  // namespace attnlab::accel
