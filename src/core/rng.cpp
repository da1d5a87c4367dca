#include <attnlab/core/rng.hpp>

#include <algorithm>

namespace attnlab {

template <class T>
void GaussianStream::fill(std::span<T> out, double sigma, std::uint64_t first) const {
  std::size_t i = 0;
  std::uint64_t e = first;
  if (e % 2 == 1 && i < out.size()) out[i++] = static_cast<T>(sigma * normal(e++));
  // Blocks of independent counters: the compiler vectorises Philox and Box–Muller across them.
  constexpr std::size_t chunk = 64;
  alignas(64) double z0[chunk], z1[chunk];
  while (i + 1 < out.size()) {
    const std::size_t pairs = std::min(chunk, (out.size() - i) / 2);
    const std::uint64_t b = e / 2;
#pragma omp simd
    for (std::size_t j = 0; j < pairs; ++j) philox::normal_pair(b + j, trial_, tag_, k0_, k1_, z0[j], z1[j]);
    for (std::size_t j = 0; j < pairs; ++j) {
      out[i + 2 * j] = static_cast<T>(sigma * z0[j]);
      out[i + 2 * j + 1] = static_cast<T>(sigma * z1[j]);
    }
    i += 2 * pairs;
    e += 2 * pairs;
  }
  if (i < out.size()) out[i] = static_cast<T>(sigma * normal(e));
}

template void GaussianStream::fill(std::span<float>, double, std::uint64_t) const;
template void GaussianStream::fill(std::span<double>, double, std::uint64_t) const;

}  // namespace attnlab
