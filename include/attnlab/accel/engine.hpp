#pragma once
// The accelerated Monte-Carlo engines of src/accel/. One Thrust engine, written once, is built for OpenMP on
// every machine (--backend thrust) and, where nvcc exists, for CUDA with cuBLAS GEMMs and fused tile
// kernels (--backend cuda). Both draw exactly the CPU engine's samples (the same Philox streams).
#include <attnlab/attention/elementwise.hpp>
#include <attnlab/norms/norms_squared.hpp>

#include <cstdint>
#include <functional>
#include <memory>
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
  int device = 0;                  // cuda: the GPU, modulo the devices present (an MPI job passes its node-local rank)
  int ranks_on_node = 1;           // processes sharing this node's GPUs and memory (an MPI job's ranks on the node)
  std::int64_t memory_bytes = 0;   // the buffers' limit; 0: 90% of the device's memory over the processes sharing it
};

using Progress = std::function<void(std::uint32_t done, std::uint32_t total)>;

// The cuda fused kernel splits each row's columns into blocks of kFusedSplitColumns, summed in block order: a count
// that is a function of N alone, so the sums round alike on every GPU model and MIG slice.
constexpr std::int64_t kFusedSplitColumns = 4096;
constexpr std::int64_t fused_column_splits(std::int64_t N) { return (N + kFusedSplitColumns - 1) / kFusedSplitColumns; }

namespace detail {
struct Backend;
}

// A device's engine kept across calls: on cuda its cuBLAS handle and device buffers (which only grow), so that repeated
// calls (a benchmark's iterations, many configurations) pay for them once. Throws std::runtime_error when the device
// cannot be used (see cuda_status).
class Engine {
 public:
  explicit Engine(Device device);
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;
  // Squared norms of trials first_trial … first_trial + trials − 1: element (t − first_trial) · activations + a.
  std::vector<AttentionNormsSquared> trial_norms(const Problem& problem, const Options& options = {},
                                                 const Progress& progress = {});

 private:
  std::unique_ptr<detail::Backend> backend_;
};

// Throws std::invalid_argument (one line naming N) where one trial's buffers exceed Options' memory limit. trial_norms
// refuses such a problem alike, and batches trials only as far as the limit allows; this asks before any work.
void refuse_what_cannot_fit(Device device, const Problem& problem, const Options& options = {});

// Whether `device`'s engine has the fused elementwise kernel that Options::fused selects (cuda); the others run the
// slab path alone.
bool has_fused_kernel(Device device);

// One call of a fresh Engine.
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

// Whether the cuda backend can run here. A build without CUDA and a machine without an NVIDIA driver or device are
// expected (cuda test cases are skipped there); anything else is a fault to report, never a skip: a driver older
// than the runtime, a device older than sm_80 (this build has no kernels for it), a device in an error state.
enum class CudaAvailability { usable, not_built, no_device, fault };
struct CudaStatus {
  CudaAvailability availability = CudaAvailability::not_built;
  std::string reason;  // one line; empty when usable
};
CudaStatus cuda_status();
// cuda_status().reason: empty when a CUDA device can be used.
std::string cuda_unavailable_reason();
// Why a test or benchmark of the cuda backend is skipped: the reason for not_built and no_device unless
// `require_gpu`; empty otherwise (the case runs, and fails on a fault).
std::string cuda_skip_reason(const CudaStatus& status, bool require_gpu);
// For this machine, with require_gpu from the environment: ATTNLAB_REQUIRE_GPU=1 turns every skip into a failure.
std::string cuda_skip_reason();
// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, driver 12.8, runtime 13.0)": recorded with every cuda result (cuBLAS picks
// its kernels per device, so results are a function of it); throws where cuda_unavailable_reason() is not empty.
std::string cuda_device_description();

}  // namespace attnlab::accel
