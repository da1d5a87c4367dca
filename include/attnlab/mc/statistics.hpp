#pragma once
// Running moments, confidence intervals, log-log fits and a penalised logistic regression.
#include <attnlab/core/types.hpp>

#include <cstdint>
#include <limits>
#include <span>
#include <vector>

namespace attnlab {

// Welford's running mean and variance; merge() is Chan et al.'s pairwise update, so
// accumulators merged in a fixed order give the same numbers for any thread count.
class Welford {
 public:
  void add(double x);
  void merge(const Welford& other);
  std::int64_t count() const { return n_; }
  double mean() const { return mean_; }
  double variance() const;  // unbiased
  double standard_error() const;

 private:
  std::int64_t n_ = 0;
  double mean_ = 0;
  double m2_ = 0;
};

struct Estimate {
  std::int64_t count = 0;
  std::int64_t nonfinite = 0;  // trials whose value was Inf or NaN (excluded, never averaged)
  double mean = 0;
  double se = 0;
  double ci_lo = 0;
  double ci_hi = 0;
  // With a control variate: the per-trial variance without it over the residual variance with it (the factor by which
  // the control multiplies the trials' worth); NaN for a plain mean.
  double variance_ratio = std::numeric_limits<double>::quiet_NaN();
  bool finite() const { return nonfinite == 0 && count > 0; }
};

// 95% two-sided Student-t interval from a sample; Inf/NaN values are counted, not used.
Estimate estimate(std::span<const double> values, double level = 0.95);
Estimate estimate(const Welford& w, std::int64_t nonfinite = 0, double level = 0.95);

// E[y] from pairs (y_t, c_t) whose control c has the known expectation c_mean: the regression estimator
// ȳ − β̂(c̄ − c_mean) with β̂ the least-squares slope of y on c, its standard error s_e·sqrt(1/n + (c̄ − c_mean)²/S_cc)
// from the residual variance s_e² (n − 2 degrees of freedom, Student t interval). A pair with an Inf/NaN is counted,
// not used. Where c does not vary (or n < 3) this is the plain estimate of y.
Estimate estimate_with_control(std::span<const double> y, std::span<const double> c, double c_mean,
                               double level = 0.95);

double student_t_quantile(double probability, double dof);

// The mean of a sample with a Student-t 95% interval on size − 1 degrees of freedom (NaN ends below two values, all
// NaN for none); `pairs` is the sample's size.
struct MeanInterval {
  double value = 0, lo = 0, hi = 0;
  int pairs = 0;
};
MeanInterval student_mean(const std::vector<double>& d);

// The q-quantile, interpolated between the two order statistics about q (n − 1) (selected, not sorted: the sensitivity
// scan asks for thousands).
double quantile(std::vector<double> v, double q);

// The least-squares slope of y on x.
double ols_slope(const std::vector<double>& x, const std::vector<double>& y);

double geometric_mean(const std::vector<double>& v);

// Binomial logistic regression, logit P(row i) = X.row(i) β with successes(i) of trials(i), fitted by Firth's
// penalised likelihood ℓ(β) + ½ log det I(β) (Firth 1993; the Jeffreys prior), whose estimate stays finite where the
// data separate completely. Newton steps on the modified score, halved until the penalised likelihood does not fall,
// until a step moves no coefficient by `tolerance` (they converge linearly, not as Newton's on a likelihood).
struct LogisticFit {
  VectorD beta{};
  bool converged = false;
};
LogisticFit firth_logistic(const MatrixD& X, const VectorD& trials, const VectorD& successes, const VectorD& start = {},
                           double tolerance = 1e-12);

// The penalised log-likelihood firth_logistic maximises, at beta (-inf where I(beta) is singular).
double firth_log_likelihood(const MatrixD& X, const VectorD& trials, const VectorD& successes, const VectorD& beta);

// Weighted least squares fit of log y = a + b log x with y's standard errors propagated
// by the delta method (se(log y) = se(y)/y); the CI on the exponent uses Student t with
// n − 2 degrees of freedom and the larger of the model-based and residual-based errors.
struct PowerLawFit {
  double exponent = 0;
  double exponent_se = 0;
  double ci_lo = 0;
  double ci_hi = 0;
  double prefactor = 0;  // e^a
  std::size_t points = 0;
};
// Throws std::domain_error when the points cannot determine a slope (all SE infinite, one x).
PowerLawFit fit_power_law(std::span<const double> x, std::span<const double> y, std::span<const double> y_se,
                          double level = 0.95);
// Unweighted fit for points without a standard error (deterministic values, timings): the residual scatter alone
// sets the interval, so points exactly on a line get a zero-width one.
PowerLawFit fit_power_law(std::span<const double> x, std::span<const double> y, double level = 0.95);

}  // namespace attnlab
