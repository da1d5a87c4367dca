#pragma once
// A Thrust memory resource whose release never throws, for the cuda engine's device vectors.
#include <thrust/mr/memory_resource.h>

#include <cstddef>

namespace attnlab::accel::engine {

// Memory from Upstream, released without ever throwing. After a sticky device error (an illegal address) every later
// CUDA call fails, cudaFree included; Thrust's device resource then throws from a vector's noexcept deallocation while
// the first error unwinds, and the process ends in std::terminate instead of reporting that error in one line. A
// failed release is dropped: the error behind it is reported by the call that met it first.
template <class Upstream>
class NoThrowRelease final : public thrust::mr::memory_resource<typename Upstream::pointer> {
 public:
  using pointer = typename Upstream::pointer;
  pointer do_allocate(std::size_t bytes, std::size_t alignment) override {
    return upstream_.do_allocate(bytes, alignment);
  }
  void do_deallocate(pointer p, std::size_t bytes, std::size_t alignment) noexcept override {
    try {
      upstream_.do_deallocate(p, bytes, alignment);
    } catch (...) {  // NOLINT(bugprone-empty-catch): see above
    }
  }

 private:
  Upstream upstream_;
};

}  // namespace attnlab::accel::engine
