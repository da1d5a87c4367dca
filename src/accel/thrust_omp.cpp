// The Thrust engine on the CPU through Thrust's OpenMP backend (--backend thrust). CMake compiles this
// file with THRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP; the engine itself names its system explicitly.
#include "backends.hpp"
#include "thrust_engine.hpp"

#include <attnlab/core/machine.hpp>

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
  int device_count() const { return 1; }  // the host's memory, shared by every rank on the node
  double memory_bytes() const { return physical_memory_bytes(); }
  std::string memory_name() const { return "this machine's memory"; }
  template <class T>
  void gemm(const engine::GemmArgs<T>& g) {
    engine::for_each_index(*this, g.batch * g.m * g.n, engine::GemmEntry<T>{g});
  }
};

}  // namespace

std::unique_ptr<Backend> omp_backend() { return std::make_unique<engine::Session<OmpSystem>>(); }

}  // namespace attnlab::accel::detail
