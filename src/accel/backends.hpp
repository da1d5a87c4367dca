#pragma once
// The two builds of the Thrust engine behind accel::Engine, accel::draw and accel::gaussian_kernel_norm: one
// dispatcher (accelerated.cpp) picks a Backend by Device.
#include <attnlab/accel/engine.hpp>

#include <memory>

namespace attnlab::accel::detail {

// One device's implementation of every accelerated operation, its System and buffers kept between calls. A new
// operation is one virtual here, written once for both systems in thrust_engine.hpp (engine::Session) and wrapped once
// in accelerated.cpp.
struct Backend {
  virtual ~Backend() = default;
  virtual std::vector<AttentionNormsSquared> trial_norms(const Problem&, const Options&, const Progress&) = 0;
  virtual void refuse_what_cannot_fit(const Problem&, const Options&) = 0;
  virtual Sample draw(const Problem&, std::uint32_t trial) = 0;
  virtual bool has_fused_kernel() const = 0;
  virtual SpectralResult gaussian_kernel_norm(const std::vector<double>& Q, const std::vector<double>& K,
                                              std::int64_t d, double tolerance, int max_iterations) = 0;
};

std::unique_ptr<Backend> omp_backend();
// Defined only where CUDA is built (ATTNLAB_HAVE_CUDA), with cuda_status and cuda_device_description.
std::unique_ptr<Backend> cuda_backend();

}  // namespace attnlab::accel::detail
