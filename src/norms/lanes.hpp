#pragma once
// Sixteen float lanes (and eight double ones) as GCC/Clang vector types, for loops that keep sums per lane and end
// with a tree across the lanes, or widen the lanes to double. GCC ends an `omp simd` reduction by adding its lanes
// one at a time through memory: two thirds of a float x^3 tile row's epilogue went there.
// Private to the library, whose translation units share one -march: without AVX-512, 64-byte vectors passed by value
// have another calling convention, which GCC notes (-Wpsabi, here and at the calls) though no call crosses the library.
#include <attnlab/core/types.hpp>

#include <cassert>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

namespace attnlab::lanes {

using Floats = float __attribute__((vector_size(64)));
using Doubles = double __attribute__((vector_size(64)));
constexpr Index kWidth = 16;

inline Floats load(const float* p) {
  Floats v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}

// The first n < kWidth entries of p, the other lanes 0.
inline Floats load_first(const float* p, Index n) {
  assert(n < kWidth);
  Floats v{};
  __builtin_memcpy(&v, p, static_cast<std::size_t>(n) * sizeof(float));
  return v;
}

// Lanes [0, n) set (all bits), the others 0: a mask for a ?: that selects lane by lane.
inline auto first_lanes(Index n) {
  using Ints = int __attribute__((vector_size(64)));
  const Ints index{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
  return index < static_cast<int>(n);
}

// (v0 + v8) + (v4 + v12) + … : halves added pairwise, four levels.
inline float sum(Floats v) {
  const auto h8 = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7) +
                  __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  const auto h4 = __builtin_shufflevector(h8, h8, 0, 1, 2, 3) + __builtin_shufflevector(h8, h8, 4, 5, 6, 7);
  const auto h2 = __builtin_shufflevector(h4, h4, 0, 1) + __builtin_shufflevector(h4, h4, 2, 3);
  return h2[0] + h2[1];
}

inline double sum(Doubles v) {
  const auto h4 = __builtin_shufflevector(v, v, 0, 1, 2, 3) + __builtin_shufflevector(v, v, 4, 5, 6, 7);
  const auto h2 = __builtin_shufflevector(h4, h4, 0, 1) + __builtin_shufflevector(h4, h4, 2, 3);
  return h2[0] + h2[1];
}

// Lane l of the result: v_l + v_{l+8}, in double.
inline Doubles widened_halves(Floats v) {
  using Half = float __attribute__((vector_size(32)));
  const Half lo = __builtin_shufflevector(v, v, 0, 1, 2, 3, 4, 5, 6, 7);
  const Half hi = __builtin_shufflevector(v, v, 8, 9, 10, 11, 12, 13, 14, 15);
  return __builtin_convertvector(lo, Doubles) + __builtin_convertvector(hi, Doubles);
}

}  // namespace attnlab::lanes

#pragma GCC diagnostic pop
