#pragma once
// ATTNLAB_HD marks code that runs on the CPU and on a CUDA device alike (sampling, activations), so
// that both compile the same source and the GPU draws exactly the CPU's samples.
#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define ATTNLAB_HD __host__ __device__
#else
#define ATTNLAB_HD
#endif

namespace attnlab::hd {

ATTNLAB_HD inline std::uint64_t bits_of(double x) {
#if defined(__CUDA_ARCH__)
  return static_cast<std::uint64_t>(__double_as_longlong(x));
#else
  std::uint64_t b;
  std::memcpy(&b, &x, sizeof b);
  return b;
#endif
}

ATTNLAB_HD inline double double_of(std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double(static_cast<long long>(b));
#else
  double x;
  std::memcpy(&x, &b, sizeof x);
  return x;
#endif
}

// Correctly rounded on both (IEEE sqrt; nvcc's default -prec-sqrt=true).
ATTNLAB_HD inline double sqrt(double x) {
#if defined(__CUDA_ARCH__)
  return ::sqrt(x);
#else
  return __builtin_sqrt(x);
#endif
}

ATTNLAB_HD inline float sqrt(float x) {
#if defined(__CUDA_ARCH__)
  return ::sqrtf(x);
#else
  return __builtin_sqrtf(x);
#endif
}

}  // namespace attnlab::hd
