#include "backends.hpp"

#include <cstdlib>
#include <stdexcept>

namespace attnlab::accel {
namespace {

void validate(const Problem& p) {
  if (p.N < 1 || p.D < 1 || p.d < 1) throw std::invalid_argument("N, D and d must be at least 1");
  if (std::uint64_t{p.first_trial} + p.trials > std::uint64_t{1} << 32)
    throw std::invalid_argument("trials: first_trial + trials exceeds the 2^32 trial streams");
  for (const auto& a : p.activations)
    if (!a.softmax && a.fn == Elementwise::power && a.p < 1) throw std::invalid_argument("p must be at least 1");
}

// The one dispatch on Device.
std::unique_ptr<detail::Backend> backend(Device device) {
  if (device == Device::thrust_omp) return detail::omp_backend();
#if defined(ATTNLAB_HAVE_CUDA)
  if (const auto why = cuda_unavailable_reason(); !why.empty()) throw std::runtime_error(why);
  return detail::cuda_backend();
#else
  throw std::runtime_error(cuda_unavailable_reason());
#endif
}

}  // namespace

Engine::Engine(Device device) : backend_(backend(device)) {}

Engine::~Engine() = default;

std::vector<AttentionNormsSquared> Engine::trial_norms(const Problem& p, const Options& o, const Progress& progress) {
  validate(p);
  return backend_->trial_norms(p, o, progress);
}

void refuse_what_cannot_fit(Device device, const Problem& p, const Options& o) {
  validate(p);
  backend(device)->refuse_what_cannot_fit(p, o);
}

std::vector<AttentionNormsSquared> trial_norms(Device device, const Problem& p, const Options& o,
                                               const Progress& progress) {
  validate(p);
  return Engine(device).trial_norms(p, o, progress);
}

bool has_fused_kernel(Device device) { return backend(device)->has_fused_kernel(); }

Sample draw(Device device, const Problem& p, std::uint32_t trial) {
  validate(p);
  return backend(device)->draw(p, trial);
}

SpectralResult gaussian_kernel_norm(Device device, const std::vector<double>& Q, const std::vector<double>& K,
                                    std::int64_t d, double tolerance, int max_iterations) {
  if (d < 1 || Q.empty() || K.empty() || Q.size() % d != 0 || K.size() % d != 0)
    throw std::invalid_argument("gaussian_kernel_norm: Q and K must be non-empty with rows of d entries");
  return backend(device)->gaussian_kernel_norm(Q, K, d, tolerance, max_iterations);
}

std::string cuda_unavailable_reason() { return cuda_status().reason; }

std::string cuda_skip_reason(const CudaStatus& status, bool require_gpu) {
  const bool expected = status.availability == CudaAvailability::not_built ||
                        status.availability == CudaAvailability::no_device;
  return expected && !require_gpu ? status.reason : std::string();
}

std::string cuda_skip_reason() {
  const char* require = std::getenv("ATTNLAB_REQUIRE_GPU");
  return cuda_skip_reason(cuda_status(), require && std::string(require) == "1");
}

#if !defined(ATTNLAB_HAVE_CUDA)
CudaStatus cuda_status() {
  return {CudaAvailability::not_built,
          "backend cuda is not built in this binary (no CUDA compiler was found at configure time)"};
}

std::string cuda_device_description() { throw std::runtime_error(cuda_unavailable_reason()); }
#endif

}  // namespace attnlab::accel
