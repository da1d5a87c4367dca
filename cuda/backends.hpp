#pragma once
// The two builds of the Thrust engine behind accel::Engine, accel::draw and accel::gaussian_kernel_norm.
#include <attnlab/mc/accelerated.hpp>

#include <memory>

namespace attnlab::accel::detail {

// An engine's System and buffers between calls.
struct EngineState {
  virtual ~EngineState() = default;
  virtual std::vector<AttentionNormsSquared> trial_norms(const Problem&, const Options&, const Progress&) = 0;
};

std::unique_ptr<EngineState> omp_engine();
Sample omp_draw(const Problem&, std::uint32_t trial);
SpectralResult omp_gaussian_kernel_norm(const std::vector<double>& Q, const std::vector<double>& K, std::int64_t d,
                                        double tolerance, int max_iterations);

// Defined only where CUDA is built (ATTNLAB_HAVE_CUDA), with cuda_status and cuda_device_description.
std::unique_ptr<EngineState> cuda_engine();
Sample cuda_draw(const Problem&, std::uint32_t trial);
SpectralResult cuda_gaussian_kernel_norm(const std::vector<double>& Q, const std::vector<double>& K, std::int64_t d,
                                         double tolerance, int max_iterations);

}  // namespace attnlab::accel::detail
