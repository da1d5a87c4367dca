// The Thrust engine on the CPU through Thrust's OpenMP backend (--backend thrust). CMake compiles this
// file with THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP; the engine itself names its system explicitly.
#include "backends.hpp"
#include "thrust_engine.hpp"

#include <thrust/system/omp/execution_policy.h>
#include <thrust/system/omp/vector.h>

namespace attnlab::accel::detail {
namespace {

struct OmpSystem {
  template <class T>
  using vector = thrust::omp::vector<T>;
  static constexpr bool has_fused = false;
  static constexpr engine::I default_slab_elements = engine::I{1} << 22;  // 32 MB of double logits
  static constexpr engine::I max_batch = engine::I{1} << 20;
  auto policy() const { return thrust::omp::par; }
  template <class T>
  void gemm(const engine::GemmArgs<T>& g) {
    engine::for_each_index(*this, g.batch * g.m * g.n, engine::GemmEntry<T>{g});
  }
};

}  // namespace

std::unique_ptr<EngineState> omp_engine() { return std::make_unique<engine::Session<OmpSystem>>(); }

Sample omp_draw(const Problem& p, std::uint32_t trial) {
  OmpSystem sys;
  return p.single_precision ? engine::draw<OmpSystem, float>(sys, p, trial) : engine::draw<OmpSystem, double>(sys, p, trial);
}

SpectralResult omp_gaussian_kernel_norm(const std::vector<double>& Q, const std::vector<double>& K, std::int64_t d,
                                           double tolerance, int max_iterations) {
  OmpSystem sys;
  return engine::gaussian_kernel_norm(sys, Q, K, d, tolerance, max_iterations);
}

}  // namespace attnlab::accel::detail
