#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/rng.hpp>

#include <Random123/philox.h>

#include "support.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

using namespace attnlab;

// The vectorised fill against the one-number path, in double and in float, σ ≠ 1.
template <class T>
void expect_fill_equals_samples() {
  const GaussianStream s(test::seed(), 42, 7, StreamTag::X);
  const double sigma = 1.3;
  std::vector<T> forward(1001);
  s.fill(std::span<T>(forward), sigma);
  for (std::uint64_t e = 1000; e-- > 0;) ASSERT_EQ(forward[e], s.sample<T>(e, sigma)) << "element " << e;
  std::vector<T> tail(500);
  s.fill(std::span<T>(tail), sigma, 501);  // starts at an odd element
  for (std::size_t i = 0; i < tail.size(); ++i) ASSERT_EQ(tail[i], forward[501 + i]);
  // past 2^33 elements the block counter's high word is non-zero: the vectorised fill carries it in its own lane
  const std::uint64_t far = (std::uint64_t{1} << 33) + 1;
  std::vector<T> high(300);
  s.fill(std::span<T>(high), sigma, far);
  for (std::size_t i = 0; i < high.size(); ++i)
    ASSERT_EQ(high[i], s.sample<T>(far + i, sigma)) << "element " << far + i;
}

TEST(GaussianStream, SameKeySameNumbersAnyOrder) {
  expect_fill_equals_samples<double>();
  expect_fill_equals_samples<float>();
}

// Float's normals are double's words through Box–Muller in float arithmetic: a few roundings of float each in the
// logarithm (2), the square root (1), sine or cosine (2), their product and σ (1 each), so within 7 ulps of double's
// normal rounded to float; over 2^20 normals, tails included.
TEST(GaussianStream, FloatNormalsAreWithinSevenUlpsOfDoubles) {
  const GaussianStream s(test::seed(), 5, 1, StreamTag::K);
  const std::size_t n = std::size_t{1} << 20;
  std::vector<float> f(n);
  std::vector<double> d(n);
  s.fill(std::span<float>(f), 0.7);
  s.fill(std::span<double>(d), 0.7);
  double worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float rounded = static_cast<float>(d[i]);
    const double ulp = std::nextafter(std::abs(rounded), INFINITY) - std::abs(rounded);
    worst = std::max(worst, std::abs(double(f[i]) - d[i]) / ulp);
  }
  std::printf("worst distance of float's normals from double's: %.2f ulps\n", worst);
  EXPECT_LT(worst, 7.0);
  EXPECT_GT(worst, 0.0) << "float's normals should come from float arithmetic";
}

TEST(GaussianStream, DifferentKeysGiveDifferentStreams) {
  const auto seed = test::seed();
  const GaussianStream a(seed, 1, 0, StreamTag::X), b(seed, 2, 0, StreamTag::X), c(seed, 1, 1, StreamTag::X),
      d(seed, 1, 0, StreamTag::Q), e(seed + 1, 1, 0, StreamTag::X);
  for (const auto* other : {&b, &c, &d, &e}) EXPECT_NE(a.normal(0), other->normal(0));
}

TEST(GaussianStream, MomentsAreStandardNormal) {
  // Mean 0, variance 1, E z^4 = 3 within 5 standard errors for n = 200000.
  const GaussianStream s(test::seed(), 3, 0, StreamTag::Logits);
  const int n = 200000;
  double m1 = 0, m2 = 0, m4 = 0;
  for (int i = 0; i < n; ++i) {
    const double z = s.normal(std::uint64_t(i));
    m1 += z, m2 += z * z, m4 += z * z * z * z;
  }
  m1 /= n, m2 /= n, m4 /= n;
  EXPECT_LT(std::abs(m1), 5 * std::sqrt(1.0 / n));
  EXPECT_LT(std::abs(m2 - 1), 5 * std::sqrt(2.0 / n));
  EXPECT_LT(std::abs(m4 - 3), 5 * std::sqrt(96.0 / n));
}

TEST(Ensemble, FloatSamplesAreTheSameNormalsInFloat) {
  const EnsembleSpec spec{9, 5, 3, 0.7, 1.3};
  EnsembleSample<double> d;
  EnsembleSample<float> f;
  draw_ensemble(spec, test::seed(), 4, d);
  draw_ensemble(spec, test::seed(), 4, f);
  EXPECT_EQ(d.X.rows(), 9);
  EXPECT_EQ(d.Q.cols(), 3);
  EXPECT_TRUE(f.X.cast<double>().isApprox(d.X, 1e-6));
  EXPECT_TRUE(f.K.cast<double>().isApprox(d.K, 1e-6));
  EXPECT_NE(d.Q(0, 0), d.K(0, 0));
}

TEST(Ensemble, SigmaScalesTheSameNoise) {
  EnsembleSpec a{6, 4, 2, 1.0, 1.0}, b = a;
  b.sigma_x = 2.5;
  EnsembleSample<double> sa, sb;
  draw_ensemble(a, test::seed(), 0, sa);
  draw_ensemble(b, test::seed(), 0, sb);
  EXPECT_TRUE(sb.X.isApprox(2.5 * sa.X, 1e-15));
  EXPECT_EQ(sb.Q, sa.Q);
}

TEST(Ensemble, ValidateNamesTheParameter) {
  const auto message = [](EnsembleSpec s) {
    try {
      s.validate();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_EQ(message({0, 4, 4, 1, 1}).rfind("N ", 0), 0u);
  EXPECT_EQ(message({4, 0, 4, 1, 1}).rfind("D ", 0), 0u);
  EXPECT_EQ(message({4, 4, 0, 1, 1}).rfind("d ", 0), 0u);
  EXPECT_EQ(message({4, 4, 4, 0, 1}).rfind("sigma-x", 0), 0u);
  EXPECT_EQ(message({4, 4, 4, 1, -1}).rfind("sigma-t", 0), 0u);
  EXPECT_EQ(message({4, 4, 4, 1, 1}), "");
}

TEST(Philox, BitIdenticalToRandom123) {
  r123::Philox4x32_R<10> reference;
  for (std::uint32_t i = 0; i < 1000; ++i) {
    const std::uint32_t c[4] = {i * 2654435761u, ~i, i ^ 0x5bd1e995u, 7 * i}, k[2] = {i + 1, i * 40503u};
    const auto expected = reference({{c[0], c[1], c[2], c[3]}}, {{k[0], k[1]}});
    const auto got = philox::generate(c[0], c[1], c[2], c[3], k[0], k[1]);
    for (int w = 0; w < 4; ++w) ASSERT_EQ(got.v[w], expected.v[w]) << "counter " << i << " word " << w;
  }
}

// The uniform formed in double without a 64-bit conversion (which keeps the sampling loops vector on AVX2) is the
// 53-bit integer's own value, for the words at the ends of their range and for Philox's words.
TEST(Philox, OpenUnitIsTheFiftyThreeBitFraction) {
  const auto direct = [](std::uint32_t lo, std::uint32_t hi) {
    return static_cast<double>((std::uint64_t{hi} << 32 | lo) >> 11) * 0x1.0p-53 + 0x1.0p-54;
  };
  const std::uint32_t ends[] = {0u, 1u, 2047u, 2048u, 0x7fffffffu, 0x80000000u, 0xfffff800u, 0xffffffffu};
  for (std::uint32_t lo : ends)
    for (std::uint32_t hi : ends) ASSERT_EQ(philox::open_unit(lo, hi), direct(lo, hi)) << lo << " " << hi;
  for (std::uint32_t i = 0; i < 100000; ++i) {
    const auto b = philox::generate(i, 0, 0, 0, 1, 2);
    ASSERT_EQ(philox::open_unit(b.v[0], b.v[1]), direct(b.v[0], b.v[1])) << "counter " << i;
    ASSERT_EQ(philox::open_unit(std::uint64_t{b.v[2]}, std::uint64_t{b.v[3]}), direct(b.v[2], b.v[3]));
  }
}

TEST(Philox, LogAndSincosAreAccurate) {
  double worst_log = 0, worst_trig = 0;
  for (int i = 1; i <= 200000; ++i) {
    const double u = std::ldexp(double(i) / 200000, -(i % 60));  // (0, 1] across 60 binades
    worst_log = std::max(worst_log, std::abs(philox::log(u) - std::log(u)) / std::max(1.0, std::abs(std::log(u))));
    const double v = double(i - 1) / 200000;  // [0, 1)
    double s, c;
    philox::sincos_turns(v, s, c);
    worst_trig = std::max({worst_trig, std::abs(s - std::sin(2 * M_PI * v)), std::abs(c - std::cos(2 * M_PI * v))});
  }
  EXPECT_LT(worst_log, 4e-16);
  EXPECT_LT(worst_trig, 2e-15);  // std::sin(2πv) itself carries the rounding of 2πv
}

// In float arithmetic: the logarithm within 5 float roundings relative to |log u| itself (a dense scan of [0.5, 1)
// reaches 4.1), near u = 1 too (where rounding u to float first would lose all of it), and sine and cosine within 3
// roundings of 1.
TEST(Philox, FloatLogAndSincosAreAccurate) {
  const double eps = std::ldexp(1.0, -24);
  double worst_log = 0, worst_trig = 0;
  for (int i = 1; i <= 200000; ++i) {
    for (const double u : {std::ldexp(double(i) / 200000, -(i % 60)), 1 - std::ldexp(double(i), -50)}) {
      const double exact = std::log(u);
      worst_log = std::max(worst_log, std::abs(philox::log_float(u) - exact) / std::abs(exact));
    }
    const double v = double(i - 1) / 200000;
    float s, c;
    philox::sincos_turns(v, s, c);
    worst_trig = std::max({worst_trig, std::abs(s - std::sin(2 * M_PI * v)), std::abs(c - std::cos(2 * M_PI * v))});
  }
  EXPECT_LT(worst_log, 5 * eps);
  EXPECT_LT(worst_trig, 3 * eps);
}
