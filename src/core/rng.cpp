#include <attnlab/core/rng.hpp>

#include <algorithm>

namespace attnlab {

template <class T>
void GaussianStream::fill(std::span<T> out, double sigma, std::uint64_t first) const {
  std::size_t i = 0;
  std::uint64_t e = first;
  if (e % 2 == 1 && i < out.size()) out[i++] = sample<T>(e++, sigma);
  // A chunk of blocks goes through each stage before the next: one block's ten rounds, log and sine series are
  // serial chains, and side by side the blocks' chains overlap (1.7× the rate of one loop over whole blocks).
  constexpr std::size_t chunk = 64;
  alignas(64) std::uint64_t c0[chunk], c1[chunk], c2[chunk], c3[chunk];  // 32-bit words
  alignas(64) T rho[chunk], s[chunk], c[chunk];
  while (i + 1 < out.size()) {
    const std::size_t pairs = std::min(chunk, (out.size() - i) / 2);
    const std::uint64_t b = e / 2;
    for (std::size_t j = 0; j < pairs; ++j) {
      c0[j] = (b + j) & 0xffffffffu;
      c1[j] = (b + j) >> 32;
      c2[j] = trial_;
      c3[j] = tag_;
    }
    std::uint32_t k0 = k0_, k1 = k1_;
    for (int r = 0; r < 10; ++r, k0 += philox::kBump0, k1 += philox::kBump1) {
#pragma omp simd
      for (std::size_t j = 0; j < pairs; ++j) philox::round<std::uint64_t>(c0[j], c1[j], c2[j], c3[j], k0, k1);
    }
#pragma omp simd
    for (std::size_t j = 0; j < pairs; ++j) rho[j] = philox::radius<T>(c0[j], c1[j]);
#pragma omp simd
    for (std::size_t j = 0; j < pairs; ++j) philox::sincos_turns(philox::open_unit(c2[j], c3[j]), s[j], c[j]);
    const T sigma_t = static_cast<T>(sigma);
    for (std::size_t j = 0; j < pairs; ++j) {
      out[i + 2 * j] = sigma_t * (rho[j] * c[j]);
      out[i + 2 * j + 1] = sigma_t * (rho[j] * s[j]);
    }
    i += 2 * pairs;
    e += 2 * pairs;
  }
  if (i < out.size()) out[i] = sample<T>(e, sigma);
}

template void GaussianStream::fill(std::span<float>, double, std::uint64_t) const;
template void GaussianStream::fill(std::span<double>, double, std::uint64_t) const;

}  // namespace attnlab
