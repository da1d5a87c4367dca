#pragma once
// Counter-based Gaussian streams (Random123 Philox4x32-10 + Box–Muller).
// The e-th number of a stream depends only on (seed, configuration, trial, tag, e),
// so results never depend on thread count or evaluation order, and a GPU can
// regenerate the same numbers from the same key.
#include <Random123/boxmuller.hpp>
#include <Random123/philox.h>

#include <cstdint>
#include <span>
#include <string_view>

namespace attnlab {

// splitmix64 finaliser: a bijective 64-bit mixer used to derive stream keys.
constexpr std::uint64_t mix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Folds a sequence of 64-bit words (a configuration) into one key word.
constexpr std::uint64_t hash_words(std::initializer_list<std::uint64_t> words) {
  std::uint64_t h = 0x6a09e667f3bcc909ULL;
  for (auto w : words) h = mix64(h ^ mix64(w));
  return h;
}

constexpr std::uint64_t hash_string(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;  // FNV-1a
  for (char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ULL;
  return mix64(h);
}

// Which matrix of a trial a stream feeds; distinct tags give independent streams.
enum class StreamTag : std::uint32_t { X = 0, Q = 1, K = 2, A = 3, B = 4, Logits = 5, Search = 6 };

class GaussianStream {
 public:
  GaussianStream(std::uint64_t seed, std::uint64_t configuration, std::uint32_t trial, StreamTag tag)
      : key_{{static_cast<std::uint32_t>(hash_words({seed, configuration})),
              static_cast<std::uint32_t>(hash_words({seed, configuration}) >> 32)}},
        trial_(trial),
        tag_(static_cast<std::uint32_t>(tag)) {}

  // Standard normals z_first, ..., z_{first+n-1} of this stream, times sigma.
  template <class T>
  void fill(std::span<T> out, double sigma, std::uint64_t first = 0) const {
    std::uint64_t e = first;
    std::size_t i = 0;
    if (e % 2 == 1 && i < out.size()) out[i++] = static_cast<T>(sigma * pair(e / 2).y), ++e;
    for (; i + 1 < out.size(); i += 2, e += 2) {
      const auto z = pair(e / 2);
      out[i] = static_cast<T>(sigma * z.x);
      out[i + 1] = static_cast<T>(sigma * z.y);
    }
    if (i < out.size()) out[i] = static_cast<T>(sigma * pair(e / 2).x);
  }

  double normal(std::uint64_t e) const {
    const auto z = pair(e / 2);
    return e % 2 == 0 ? z.x : z.y;
  }

  // 53-bit uniform in (0, 1), the e-th of a stream that shares nothing with the normals.
  double uniform(std::uint64_t e) const {
    const auto r = block(e / 2 + (std::uint64_t{1} << 62));
    const std::uint64_t w = e % 2 == 0 ? (std::uint64_t{r.v[1]} << 32 | r.v[0]) : (std::uint64_t{r.v[3]} << 32 | r.v[2]);
    return r123::u01<double>(w);
  }

 private:
  using Philox = r123::Philox4x32_R<10>;

  Philox::ctr_type block(std::uint64_t b) const {
    const Philox::ctr_type ctr{{static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32), trial_, tag_}};
    return Philox{}(ctr, key_);
  }

  r123::double2 pair(std::uint64_t b) const {
    const auto r = block(b);
    return r123::boxmuller(std::uint64_t{r.v[1]} << 32 | r.v[0], std::uint64_t{r.v[3]} << 32 | r.v[2]);
  }

  Philox::key_type key_;
  std::uint32_t trial_;
  std::uint32_t tag_;
};

}  // namespace attnlab
