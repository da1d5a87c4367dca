#include <attnlab/mc/statistics.hpp>

#include "support.hpp"

#include <cmath>
#include <limits>
#include <numeric>
#include <utility>
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
  // Noisy power laws with known exponent 1 and 5% relative errors: the 95% CI must cover it in at least 90% of fits,
  // and be no wider on average than 2.5 times the z interval of the known errors (its t quantile on 4 degrees of
  // freedom and its floor on the residual scale make it up to about 1.7 times wider; an infinite one covers always).
  int covered = 0;
  const int fits = 400;
  const std::vector<double> sizes{8.0, 16.0, 32.0, 64.0, 128.0, 256.0};
  double mean_log = 0, spread = 0;
  for (double n : sizes) mean_log += std::log(n) / double(sizes.size());
  for (double n : sizes) spread += std::pow(std::log(n) - mean_log, 2);
  const double z_half_width = 1.96 * 0.05 / std::sqrt(spread);
  double half_widths = 0;
  SplitmixGauss gauss(test::seed());
  for (int f = 0; f < fits; ++f) {
    std::vector<double> x, y, se;
    for (double n : sizes) {
      const double s = 0.05 * n;
      x.push_back(n);
      y.push_back(n + s * gauss());
      se.push_back(s);
    }
    const auto fit = fit_power_law(x, y, se);
    covered += fit.ci_lo <= 1.0 && 1.0 <= fit.ci_hi;
    half_widths += 0.5 * (fit.ci_hi - fit.ci_lo) / fits;
  }
  // 95% nominal over 400 fits: binomial sd 4.4, so 0.9 lies 4.6 sd below.
  EXPECT_GE(covered, 0.9 * fits);
  EXPECT_LE(half_widths, 2.5 * z_half_width) << "mean half-width against the z interval's " << z_half_width;
}

// Without standard errors the residuals set the interval: exact points give a zero-width one, and log-normal
// noise of unknown size is covered at the nominal rate (ordinary least squares' t interval is exact there).
TEST(PowerLawFit, UnweightedFitTakesItsIntervalFromTheResiduals) {
  const std::vector<double> x{8, 16, 32, 64},
      exact{2 * std::pow(8, -0.5), 2 * std::pow(16, -0.5), 2 * std::pow(32, -0.5), 2 * std::pow(64, -0.5)};
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

// y = 2 + 0.8c + 0.5ε with c ~ N(3, 1) known to have mean 3: given the c's, the regression estimator at c = 3 is
// normal with the Student interval's exact 95% coverage, and Var y / Var(y | c) = (0.64 + 0.25)/0.25.
namespace {
std::pair<std::vector<double>, std::vector<double>> linear_with_control(SplitmixGauss& gauss, int n) {
  std::vector<double> y, c;
  for (int t = 0; t < n; ++t) {
    c.push_back(3 + gauss());
    y.push_back(2 + 0.8 * c.back() + 0.5 * gauss());
  }
  return {y, c};
}
}  // namespace

TEST(ControlVariate, IntervalCoversTheMeanAtItsLevel) {
  const int replicates = 2000;
  int covered = 0;
  SplitmixGauss gauss(test::seed());
  for (int r = 0; r < replicates; ++r) {
    const auto [y, c] = linear_with_control(gauss, 20);
    const auto e = estimate_with_control(y, c, 3.0);
    covered += e.ci_lo <= 4.4 && 4.4 <= e.ci_hi;
  }
  // 4 binomial standard deviations (0.49% each) either side of 95%.
  EXPECT_NEAR(double(covered) / replicates, 0.95, 4 * std::sqrt(0.95 * 0.05 / replicates));
}

TEST(ControlVariate, VarianceRatioIsTheVarianceExplained) {
  SplitmixGauss gauss(test::seed());
  const auto [y, c] = linear_with_control(gauss, 20000);
  const auto cv = estimate_with_control(y, c, 3.0);
  const auto plain = estimate(y);
  // Both ratios have relative standard error about sqrt(2/n) = 1%.
  EXPECT_TRUE(test::close(cv.variance_ratio, 0.89 / 0.25, 0.05, 0));
  EXPECT_TRUE(test::close(plain.se / cv.se, std::sqrt(0.89 / 0.25), 0.05, 0));
  EXPECT_TRUE(std::isnan(plain.variance_ratio));
}

TEST(ControlVariate, ExactWhereYIsLinearInTheControl) {
  const std::vector<double> c{0.5, 2.0, -1.0, 4.0, 3.5}, y{2.0, 5.0, -1.0, 9.0, 8.0};  // y = 2c + 1
  const auto e = estimate_with_control(y, c, 10.0);
  EXPECT_TRUE(test::close(e.mean, 21.0, 1e-12, 0));
  EXPECT_TRUE(test::close(e.se, 0, 0, 1e-12));
}

TEST(ControlVariate, WrongControlMeanMovesTheEstimateByTheSlope) {
  SplitmixGauss gauss(test::seed());
  const auto [y, c] = linear_with_control(gauss, 200);
  const auto right = estimate_with_control(y, c, 3.0), wrong = estimate_with_control(y, c, 3.5);
  // The estimate moves by 0.5 β̂; given the c's, β̂ is normal about 0.8 with standard error 0.5 / √Σ(c − c̄)² (σ_ε = 0.5),
  // held here to 5 of them: a false alarm in 1.7 million runs.
  const double c_mean = std::accumulate(c.begin(), c.end(), 0.0) / double(c.size());
  double spread = 0;
  for (double v : c) spread += (v - c_mean) * (v - c_mean);
  EXPECT_NEAR(wrong.mean - right.mean, 0.8 * 0.5, 5 * 0.5 * (0.5 / std::sqrt(spread)));
}

TEST(ControlVariate, ConstantControlGivesThePlainMeanAndPairsWithInfOrNaNAreCounted) {
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> y{1, 2, 3, 4, 5, 6}, c{7, 7, 7, 7, inf, 7};
  const auto e = estimate_with_control(y, c, 100.0);
  const auto plain = estimate(std::vector<double>{1, 2, 3, 4, 6});
  EXPECT_EQ(e.count, 5);
  EXPECT_EQ(e.nonfinite, 1);
  EXPECT_DOUBLE_EQ(e.mean, plain.mean);
  EXPECT_DOUBLE_EQ(e.ci_hi, plain.ci_hi);
  EXPECT_TRUE(std::isnan(e.variance_ratio));
  EXPECT_THROW(estimate_with_control(y, std::vector<double>{1, 2}, 0.0), std::invalid_argument);
}

// Bounds clamped to ±∞ (the k-sweep's censored exponents) go through the quantile: an order statistic hit exactly
// is returned as it is, whatever its neighbour (∞ times the weight 0 would be NaN), and one between a finite value
// and an infinite one is the infinite one.
TEST(Quantile, InfiniteNeighboursOfAnExactOrderStatistic) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(quantile({1.0, inf}, 0.0), 1.0);
  EXPECT_EQ(quantile({-inf, 2.0, 3.0}, 0.5), 2.0);
  EXPECT_EQ(quantile({-inf, -inf, 2.0}, 0.25), -inf);
  EXPECT_EQ(quantile({1.0, 2.0, inf}, 0.75), inf);
  EXPECT_DOUBLE_EQ(quantile({1.0, 2.0, 3.0, 4.0}, 0.5), 2.5);
}

// With one intercept, the hat values sum to 1 and Firth's score equation solves to p = (y + ½)/(n + 1), finite at 0
// of n where maximum likelihood is not.
TEST(FirthLogistic, InterceptAloneIsTheJeffreysShare) {
  const MatrixD X = MatrixD::Ones(2, 1);
  for (const auto& [y0, y1] : {std::pair{0.0, 0.0}, std::pair{2.0, 1.0}, std::pair{5.0, 3.0}}) {
    const auto fit = firth_logistic(X, VectorD{{5.0, 3.0}}, VectorD{{y0, y1}});
    ASSERT_TRUE(fit.converged);
    EXPECT_TRUE(test::close(1 / (1 + std::exp(-fit.beta(0))), (y0 + y1 + 0.5) / 9, 1e-10, 0)) << y0 << ", " << y1;
  }
}

// Groups with an intercept each and one shared slope (the k-sweep's retrieval fit), drawn at random and once
// separated completely: the estimate is a stationary point of the penalised likelihood by central differences, and
// no nearby point scores higher.
TEST(FirthLogistic, MaximisesThePenalisedLikelihood) {
  SplitmixGauss gauss(test::seed());
  constexpr Index groups = 3, points = 6;
  MatrixD X = MatrixD::Zero(groups * points, groups + 1);
  VectorD trials = VectorD::Constant(groups * points, 4), random(groups * points), separated(groups * points);
  for (Index g = 0; g < groups; ++g)
    for (Index i = 0; i < points; ++i) {
      const Index row = g * points + i;
      const double x = -1.5 + 0.6 * double(i), p = 1 / (1 + std::exp(-(2.5 * x - 0.4 * double(g))));
      X(row, g) = 1, X(row, groups) = x;
      random(row) = 0;
      for (int run = 0; run < 4; ++run) random(row) += 0.5 * (1 + std::erf(gauss() / std::sqrt(2.0))) < p;
      separated(row) = x > 0 ? 4 : 0;
    }
  for (const VectorD& successes : {random, separated}) {
    const auto fit = firth_logistic(X, trials, successes);
    ASSERT_TRUE(fit.converged);
    ASSERT_TRUE(fit.beta.allFinite());
    const double best = firth_log_likelihood(X, trials, successes, fit.beta);
    for (Index j = 0; j < fit.beta.size(); ++j) {
      constexpr double h = 1e-5;
      VectorD up = fit.beta, down = fit.beta;
      up(j) += h, down(j) -= h;
      const double f_up = firth_log_likelihood(X, trials, successes, up),
                   f_down = firth_log_likelihood(X, trials, successes, down);
      EXPECT_TRUE(test::close((f_up - f_down) / (2 * h), 0, 0, 1e-6)) << "coefficient " << j;
      for (double step : {-0.05, 0.05}) {
        VectorD near = fit.beta;
        near(j) += step;
        EXPECT_LT(firth_log_likelihood(X, trials, successes, near), best) << "coefficient " << j << " + " << step;
      }
    }
  }
}
