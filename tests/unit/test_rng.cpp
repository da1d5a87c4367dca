#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/rng.hpp>

#include <Random123/philox.h>

#include "support.hpp"

#include <cmath>
#include <vector>
#include <algorithm>

using namespace attnlab;

TEST(GaussianStream, SameKeySameNumbersAnyOrder) {
  const GaussianStream s(test::seed(), 42, 7, StreamTag::X);
  std::vector<double> forward(1001);
  s.fill(std::span<double>(forward), 1.0);
  for (std::uint64_t e = 1000; e-- > 0;) ASSERT_EQ(forward[e], s.normal(e)) << "element " << e;
  std::vector<double> tail(500);
  s.fill(std::span<double>(tail), 1.0, 501);  // starts at an odd element
  for (std::size_t i = 0; i < tail.size(); ++i) ASSERT_EQ(tail[i], forward[501 + i]);
  // past 2^33 elements the block counter's high word is non-zero: the vectorised fill carries it in its own lane
  const std::uint64_t far = (std::uint64_t{1} << 33) + 1;
  std::vector<double> high(300);
  s.fill(std::span<double>(high), 1.0, far);
  for (std::size_t i = 0; i < high.size(); ++i) ASSERT_EQ(high[i], s.normal(far + i)) << "element " << far + i;
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

TEST(Ensemble, FloatSamplesAreRoundedDoubleSamples) {
  const EnsembleSpec spec{9, 5, 3, 0.7, 1.3};
  EnsembleSample<double> d;
  EnsembleSample<float> f;
  draw_ensemble(spec, test::seed(), 4, d);
  draw_ensemble(spec, test::seed(), 4, f);
  EXPECT_EQ(d.X.rows(), 9);
  EXPECT_EQ(d.Q.cols(), 3);
  EXPECT_TRUE(f.X.isApprox(d.X.cast<float>(), 0.0f));
  EXPECT_TRUE(f.K.isApprox(d.K.cast<float>(), 0.0f));
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
