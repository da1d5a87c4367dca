#include <attnlab/mc/statistics.hpp>

#include "support.hpp"

#include <cmath>
#include <limits>
#include <vector>

using namespace attnlab;

TEST(Welford, MatchesTwoPassMoments) {
  const std::vector<double> x{1.5, -2.0, 3.25, 8.0, 0.125, -1.0, 4.0};
  Welford w;
  for (double v : x) w.add(v);
  double mean = 0;
  for (double v : x) mean += v;
  mean /= x.size();
  double ss = 0;
  for (double v : x) ss += (v - mean) * (v - mean);
  EXPECT_TRUE(test::close(w.mean(), mean, 1e-15, 1e-15));
  EXPECT_TRUE(test::close(w.variance(), ss / (x.size() - 1), 1e-14, 0));
  EXPECT_TRUE(test::close(w.standard_error(), std::sqrt(ss / (x.size() - 1) / x.size()), 1e-14, 0));
}

TEST(Welford, MergeEqualsSequentialAdd) {
  Welford all, left, right;
  for (int i = 0; i < 100; ++i) {
    const double v = std::sin(i * 0.37) * 10 + i;
    all.add(v);
    (i < 37 ? left : right).add(v);
  }
  left.merge(right);
  EXPECT_EQ(left.count(), all.count());
  EXPECT_TRUE(test::close(left.mean(), all.mean(), 1e-13, 0));
  EXPECT_TRUE(test::close(left.variance(), all.variance(), 1e-12, 0));
}

TEST(Estimate, StudentIntervalAndNonFiniteCounted) {
  const std::vector<double> x{1, 2, 3, 4, std::numeric_limits<double>::infinity(), std::nan("")};
  const auto e = estimate(x);
  EXPECT_EQ(e.count, 4);
  EXPECT_EQ(e.nonfinite, 2);
  EXPECT_FALSE(e.finite());
  EXPECT_DOUBLE_EQ(e.mean, 2.5);
  // t_{0.975, 3} = 3.182446305284263
  const double half = 3.182446305284263 * std::sqrt(5.0 / 3.0 / 4.0);
  EXPECT_TRUE(test::close(e.ci_hi - e.mean, half, 1e-9, 0));
  EXPECT_TRUE(test::close(e.mean - e.ci_lo, half, 1e-9, 0));
}

TEST(PowerLawFit, RecoversAnExactExponent) {
  std::vector<double> x, y, se;
  for (double n : {8.0, 16.0, 32.0, 64.0, 128.0}) {
    x.push_back(n);
    y.push_back(3.0 * std::pow(n, 0.75));
    se.push_back(0.01 * y.back());
  }
  const auto fit = fit_power_law(x, y, se);
  EXPECT_TRUE(test::close(fit.exponent, 0.75, 1e-12, 1e-12));
  EXPECT_TRUE(test::close(fit.prefactor, 3.0, 1e-10, 0));
  EXPECT_LE(fit.ci_lo, 0.75);
  EXPECT_GE(fit.ci_hi, 0.75);
}

// Box–Muller on a splitmix stream, enough for a coverage check.
class SplitmixGauss {
 public:
  explicit SplitmixGauss(std::uint64_t seed) : state_(seed) {}
  double operator()() { return std::sqrt(-2 * std::log(uniform())) * std::cos(2 * M_PI * uniform()); }

 private:
  double uniform() {
    state_ += 0x9e3779b97f4a7c15ULL;
    std::uint64_t z = state_;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return ((z ^ (z >> 31)) >> 11) * 0x1.0p-53 + 0x1.0p-54;
  }
  std::uint64_t state_;
};

TEST(PowerLawFit, CoverageOfTheExponentInterval) {
  // Noisy power laws with known exponent 1: the 95% CI must cover it in about 95% of fits.
  int covered = 0;
  const int fits = 400;
  SplitmixGauss gauss(test::seed());
  for (int f = 0; f < fits; ++f) {
    std::vector<double> x, y, se;
    for (double n : {8.0, 16.0, 32.0, 64.0, 128.0, 256.0}) {
      const double s = 0.05 * n;
      x.push_back(n);
      y.push_back(n + s * gauss());
      se.push_back(s);
    }
    const auto fit = fit_power_law(x, y, se);
    covered += fit.ci_lo <= 1.0 && 1.0 <= fit.ci_hi;
  }
  EXPECT_GE(covered, 0.9 * fits);
}

// Without standard errors the residuals set the interval: exact points give a zero-width one, and log-normal
// noise of unknown size is covered at the nominal rate (ordinary least squares' t interval is exact there).
TEST(PowerLawFit, UnweightedFitTakesItsIntervalFromTheResiduals) {
  const std::vector<double> x{8, 16, 32, 64}, exact{2 * std::pow(8, -0.5), 2 * std::pow(16, -0.5), 2 * std::pow(32, -0.5),
                                                   2 * std::pow(64, -0.5)};
  const auto line = fit_power_law(x, exact);
  EXPECT_NEAR(line.exponent, -0.5, 1e-12);
  EXPECT_NEAR(line.ci_hi - line.ci_lo, 0, 1e-9);

  int covered = 0;
  const int fits = 400;
  SplitmixGauss gauss(test::seed());
  for (int f = 0; f < fits; ++f) {
    std::vector<double> y;
    for (double n : x) y.push_back(n * std::exp(0.1 * gauss()));
    const auto fit = fit_power_law(x, y);
    covered += fit.ci_lo <= 1.0 && 1.0 <= fit.ci_hi;
  }
  EXPECT_GE(covered, 0.9 * fits);
  EXPECT_LE(covered, 0.99 * fits) << "an interval that always covers is too wide";
}

TEST(PowerLawFit, RejectsBadInput) {
  const std::vector<double> x{1, 2, 3}, y{1, -2, 3}, se{1, 1, 1};
  EXPECT_THROW(fit_power_law(x, y, se), std::invalid_argument);
  EXPECT_THROW(fit_power_law(std::vector<double>{1, 2}, std::vector<double>{1, 2}, std::vector<double>{1, 1}),
               std::invalid_argument);
}
