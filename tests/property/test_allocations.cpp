// The fused tile paths allocate nothing once warm: every buffer of a trial (the sample, U and V, tiles, row sums,
// block partials) is reused, so the trial loop pays no page faults. Counted in this suite's binary by replacing the
// global operator new and counting every malloc (Eigen's storage comes from malloc): under AddressSanitizer by its
// allocation hook, which sees every allocation of the process (libgomp's team for a parallel region included),
// elsewhere by this binary's own malloc in front of glibc's. (Linking with --wrap=malloc counted only the calls linked
// statically, and breaks on libxsmm's hidden weak __real_malloc.)
#include <attnlab/core/ensemble.hpp>
#include <attnlab/norms/attention_norms.hpp>

#include "support.hpp"

#include <omp.h>

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<long> allocations{0};
}

#if defined(__SANITIZE_ADDRESS__)
// The sanitizer runtime's hook (GCC ships no header of it).
extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, std::size_t),
                                                         void (*free_hook)(const volatile void*));
namespace {
const bool hooked = [] {
  __sanitizer_install_malloc_and_free_hooks([](const volatile void*, std::size_t) { allocations.fetch_add(1); },
                                            [](const volatile void*) {});
  return true;
}();
}  // namespace
#else
extern "C" void* __libc_malloc(std::size_t bytes);
extern "C" void* malloc(std::size_t bytes) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return __libc_malloc(bytes);
}
#endif

// Every unaligned form is replaced, so that no block is allocated by the sanitizer's operator new and freed by ours.
namespace {
void* allocate(std::size_t bytes) noexcept { return std::malloc(bytes ? bytes : 1); }  // counted by malloc
void* allocate_or_throw(std::size_t bytes) {
  if (void* p = allocate(bytes)) return p;
  throw std::bad_alloc();
}
}  // namespace
void* operator new(std::size_t bytes) { return allocate_or_throw(bytes); }
void* operator new[](std::size_t bytes) { return allocate_or_throw(bytes); }
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept { return allocate(bytes); }
void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept { return allocate(bytes); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace attnlab {
namespace {

// One thread: buffers are the thread's own, and under dynamic scheduling a second thread may first get a block of rows
// after the warm-up trial.
TEST(Allocations, FusedTrialsAllocateNothingOnceWarm) {
  const long counted = allocations.load();
  Matrix<double> storage(8, 8);  // Eigen's storage, from malloc
  storage.setZero();
  ASSERT_GT(allocations.load(), counted) << "the counter sees malloc";
  const int threads = omp_get_max_threads();
  omp_set_num_threads(1);
  const EnsembleSpec e{300, 16, 8, 1.0, 1.0};
  for (const char* name : {"poly", "softmax", "sin2max", "sirenmax", "softmax+prenorm", "sinsoftmax+prenorm"}) {
    SCOPED_TRACE(name);
    const auto act = ActivationSpec::parse(name).resolve(e.N, e.d);
    EnsembleSample<double> s;
    const auto trial = [&](std::uint32_t t) {
      draw_ensemble(e, test::seed(), t, s);
      return attention_norms_streamed(s.X, s.Q, s.K, act, {}, false);
    };
    const double warm = trial(0).frob2;
    const long before = allocations.load();
    double sum = 0;
    for (std::uint32_t t = 1; t <= 4; ++t) sum += trial(t).frob2;
    EXPECT_EQ(allocations.load() - before, 0);
    EXPECT_GT(sum + warm, 0.0);
  }
  omp_set_num_threads(threads);
}

}  // namespace
}  // namespace attnlab
