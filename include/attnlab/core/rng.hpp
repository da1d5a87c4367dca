#pragma once
// Counter-based Gaussian streams: Philox4x32-10 (Random123's generator, the same on CPU and GPU)
// and Box–Muller. The e-th number of a stream depends only on (seed, configuration, trial, tag, e),
// so results never depend on thread count or evaluation order. log, sin and cos are written out
// here as plain arithmetic, in double and in float, so that the vectorised fill, the one-number path and the GPU give
// the same bits.
#include <attnlab/core/hd.hpp>

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string_view>
#include <type_traits>

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

namespace philox {

struct Block {
  std::uint32_t v[4];
};

// One Philox4x32 round on (c0, c1, c2, c3) under (k0, k1); the key is bumped by kBump0, kBump1 between rounds. Words
// may be wider than 32 bits and hold 32-bit values: 64-bit lanes suit the vector 32×32→64 multiply (25% faster).
constexpr std::uint32_t kBump0 = 0x9E3779B9u, kBump1 = 0xBB67AE85u;
template <class Word>
ATTNLAB_HD inline void round(Word& c0, Word& c1, Word& c2, Word& c3, Word k0, Word k1) {
  const std::uint64_t p0 = std::uint64_t{0xD2511F53u} * c0, p1 = std::uint64_t{0xCD9E8D57u} * c2;
  const Word n0 = static_cast<Word>((p1 >> 32) ^ c1 ^ k0);
  const Word n2 = static_cast<Word>((p0 >> 32) ^ c3 ^ k1);
  c1 = static_cast<Word>(p1 & 0xffffffffu);
  c3 = static_cast<Word>(p0 & 0xffffffffu);
  c0 = n0;
  c2 = n2;
}

// Philox4x32-10 (Salmon et al. 2011), bit-identical to r123::Philox4x32_R<10>.
ATTNLAB_HD inline Block generate(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2, std::uint32_t c3,
                                 std::uint32_t k0, std::uint32_t k1) {
  for (int r = 0; r < 10; ++r, k0 += kBump0, k1 += kBump1) round(c0, c1, c2, c3, k0, k1);
  return {{c0, c1, c2, c3}};
}

// A 32-bit value (in a word of any width, as in round()) as a double, exactly, placed in the mantissa of 2^52: AVX2 has
// no vector conversion from 64-bit integers, and a loop that needs one stays scalar.
template <class Word>
ATTNLAB_HD inline double exact_double(Word v) {
  return hd::double_of(0x4330000000000000ULL | std::uint64_t{v}) - 0x1.0p52;
}

// 53-bit uniform in (0, 1) from two words: ((hi·2^32 + lo) >> 11)·2^-53 + 2^-54, its integer formed exactly in double.
template <class Word>
ATTNLAB_HD inline double open_unit(Word lo, Word hi) {
  return (exact_double(hi) * 0x1.0p21 + exact_double(lo >> 11)) * 0x1.0p-53 + 0x1.0p-54;
}

// u > 0 (finite, normal) as 2^e m with m ∈ [√½, √2); returns m. Exact.
ATTNLAB_HD inline double split_unit(double u, int& e) {
  const std::uint64_t bits = hd::bits_of(u), m = (bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL;
  const bool high = hd::double_of(m) > 1.4142135623730951;
  e = static_cast<int>(bits >> 52) - 1023 + int(high);
  // m/2 for m > √2 as its exponent less one: integer arithmetic, which the vectoriser may select (m * 0.5 under a
  // condition stayed a branch: a floating multiply may trap, so it is not speculated)
  return hd::double_of(m - (std::uint64_t{high} << 52));
}

// Natural log of u > 0 (finite, normal): log m = 2 atanh((m−1)/(m+1)).
ATTNLAB_HD inline double log(double u) {
  int e;
  const double m = split_unit(u, e);
  const double f = (m - 1) / (m + 1), s = f * f;
  // Σ s^k/(2k+1) to k = 10: |f| ≤ 0.1716 leaves a truncation error below 1e-17.
  double series = 1.0 / 21;
  for (int k = 9; k >= 0; --k) series = series * s + 1.0 / (2 * k + 1);
  const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
  return e * ln2_hi + (e * ln2_lo + 2 * f * series);
}

// The same in float arithmetic. m − 1 is exact in double, so rounding it to float keeps log m's relative accuracy
// where u is near 1 (rounding u itself to float would not). Series to k = 4: truncation below 2e-9 relative.
ATTNLAB_HD inline float log_float(double u) {
  int e;
  const float g = static_cast<float>(split_unit(u, e) - 1);
  const float f = g / (2 + g), s = f * f;
  float series = 1.0f / 9;
  for (int k = 3; k >= 0; --k) series = series * s + 1.0f / static_cast<float>(2 * k + 1);
  return static_cast<float>(e) * 0.693147182f + 2 * f * series;
}

// 2πu = quadrant·π/2 + r with r ∈ [−π/4, π/4], for u ∈ [0, 1).
ATTNLAB_HD inline double quarter_turns(double u, int& quadrant) {
  const double t = 4 * u;
  quadrant = static_cast<int>(t + 0.5);
  return (t - quadrant) * 1.5707963267948966;
}

// sin and cos of quadrant·π/2 + r from sin r and cos r.
template <class R>
ATTNLAB_HD inline void by_quadrant(int quadrant, R sr, R cr, R& s, R& c) {
  const int q = quadrant & 3;
  s = q == 0 ? sr : q == 1 ? cr : q == 2 ? -sr : -cr;
  c = q == 0 ? cr : q == 1 ? -sr : q == 2 ? -cr : sr;
}

// sin and cos of 2πu for u ∈ [0, 1): Taylor series of r (truncation error below 1e-17).
ATTNLAB_HD inline void sincos_turns(double u, double& s, double& c) {
  int quadrant;
  const double r = quarter_turns(u, quadrant), r2 = r * r;
  // (−1)^k/(2k+1)! and (−1)^k/(2k)!, k = 8 … 0
  constexpr double sin_c[] = {2.8114572543455206e-15,  -7.6471637318198164e-13, 1.6059043836821613e-10,
                              -2.5052108385441720e-08, 2.7557319223985888e-06,  -1.9841269841269841e-04,
                              8.3333333333333333e-03,  -1.6666666666666667e-01, 1.0};
  constexpr double cos_c[] = {4.7794773323873853e-14,
                              -1.1470745597729725e-11,
                              2.0876756987868099e-09,
                              -2.7557319223985891e-07,
                              2.4801587301587302e-05,
                              -1.3888888888888889e-03,
                              4.1666666666666667e-02,
                              -0.5,
                              1.0};
  double sr = sin_c[0], cr = cos_c[0];
  for (int k = 1; k < 9; ++k) {
    sr = sr * r2 + sin_c[k];
    cr = cr * r2 + cos_c[k];
  }
  by_quadrant(quadrant, sr * r, cr, s, c);
}

// The same in float arithmetic after the reduction in double: k = 4 for sin, 5 for cos (truncation below 2e-9).
ATTNLAB_HD inline void sincos_turns(double u, float& s, float& c) {
  int quadrant;
  const float r = static_cast<float>(quarter_turns(u, quadrant)), r2 = r * r;
  constexpr float sin_c[] = {2.75573192e-06f, -1.98412698e-04f, 8.33333333e-03f, -1.66666667e-01f, 1.0f};
  constexpr float cos_c[] = {-2.75573192e-07f, 2.48015873e-05f, -1.38888889e-03f, 4.16666667e-02f, -0.5f, 1.0f};
  float sr = sin_c[0], cr = cos_c[0];
  for (int k = 1; k < 5; ++k) {
    sr = sr * r2 + sin_c[k];
    cr = cr * r2 + cos_c[k];
  }
  by_quadrant(quadrant, sr * r, cr * r2 + cos_c[5], s, c);
}

// Box–Muller's radius √(−2 log u) of the first uniform of a block, from its words v0 and v1, in double or float.
template <class T = double, class Word>
ATTNLAB_HD inline T radius(Word v0, Word v1) {
  if constexpr (std::is_same_v<T, float>) return hd::sqrt(-2 * log_float(open_unit(v0, v1)));
  else return hd::sqrt(-2 * log(open_unit(v0, v1)));
}

// The two standard normals of block b of stream (key, trial, tag), in double or float arithmetic.
template <class T = double>
ATTNLAB_HD inline void normal_pair(std::uint64_t b, std::uint32_t trial, std::uint32_t tag, std::uint32_t k0,
                                   std::uint32_t k1, T& z0, T& z1) {
  const Block r = generate(static_cast<std::uint32_t>(b), static_cast<std::uint32_t>(b >> 32), trial, tag, k0, k1);
  T s, c;
  sincos_turns(open_unit(r.v[2], r.v[3]), s, c);
  const T rho = radius<T>(r.v[0], r.v[1]);
  z0 = rho * c;
  z1 = rho * s;
}

}  // namespace philox

// The Philox key of (seed, configuration): computed once on the host, shared by every trial's streams.
struct StreamKey {
  std::uint32_t k0, k1;
};
inline StreamKey stream_key(std::uint64_t seed, std::uint64_t configuration) {
  const std::uint64_t h = hash_words({seed, configuration});
  return {static_cast<std::uint32_t>(h), static_cast<std::uint32_t>(h >> 32)};
}

class GaussianStream {
 public:
  GaussianStream(std::uint64_t seed, std::uint64_t configuration, std::uint32_t trial, StreamTag tag)
      : GaussianStream(stream_key(seed, configuration), trial, tag) {}
  ATTNLAB_HD GaussianStream(StreamKey key, std::uint32_t trial, StreamTag tag)
      : k0_(key.k0), k1_(key.k1), trial_(trial), tag_(static_cast<std::uint32_t>(tag)) {}

  // out[i] = sigma · z_{first+i}; vectorised over blocks, identical to sample<T>(first + i, sigma).
  template <class T>
  void fill(std::span<T> out, double sigma, std::uint64_t first = 0) const;

  // Standard normal e, in double or float arithmetic.
  template <class T = double>
  ATTNLAB_HD T normal(std::uint64_t e) const {
    T z0, z1;
    philox::normal_pair(e / 2, trial_, tag_, k0_, k1_, z0, z1);
    return e % 2 == 0 ? z0 : z1;
  }
  // sigma · z_e in T: float's samples come from the same words through Box–Muller in float arithmetic, within a few
  // float ulps of double's (rounding double's would cost as much as double's).
  template <class T>
  ATTNLAB_HD T sample(std::uint64_t e, double sigma) const {
    return static_cast<T>(sigma) * normal<T>(e);
  }

 private:
  std::uint32_t k0_, k1_, trial_, tag_;
};

}  // namespace attnlab
