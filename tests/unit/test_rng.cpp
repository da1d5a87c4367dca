#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/rng.hpp>

#include "support.hpp"

#include <cmath>
#include <vector>

using namespace attnlab;

TEST(GaussianStream, SameKeySameNumbersAnyOrder) {
  const GaussianStream s(test::seed(), 42, 7, StreamTag::X);
  std::vector<double> forward(1001);
  s.fill(std::span<double>(forward), 1.0);
  for (std::uint64_t e = 1000; e-- > 0;) ASSERT_EQ(forward[e], s.normal(e)) << "element " << e;
  std::vector<double> tail(500);
  s.fill(std::span<double>(tail), 1.0, 501);  // starts at an odd element
  for (std::size_t i = 0; i < tail.size(); ++i) ASSERT_EQ(tail[i], forward[501 + i]);
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

TEST(GaussianStream, UniformsInOpenUnitInterval) {
  const GaussianStream s(test::seed(), 5, 0, StreamTag::Search);
  double sum = 0;
  for (int i = 0; i < 100000; ++i) {
    const double u = s.uniform(std::uint64_t(i));
    ASSERT_GT(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
  }
  EXPECT_NEAR(sum / 100000, 0.5, 5 * std::sqrt(1.0 / 12 / 100000));
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
