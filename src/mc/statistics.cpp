#include <attnlab/mc/statistics.hpp>

#include <Eigen/Cholesky>
#include <boost/math/distributions/students_t.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace attnlab {

void Welford::add(double x) {
  ++n_;
  const double delta = x - mean_;
  mean_ += delta / static_cast<double>(n_);
  m2_ += delta * (x - mean_);
}

void Welford::merge(const Welford& other) {
  if (other.n_ == 0) return;
  if (n_ == 0) {
    *this = other;
    return;
  }
  const double na = static_cast<double>(n_), nb = static_cast<double>(other.n_), n = na + nb;
  const double delta = other.mean_ - mean_;
  mean_ += delta * nb / n;
  m2_ += other.m2_ + delta * delta * na * nb / n;
  n_ += other.n_;
}

double Welford::variance() const { return n_ > 1 ? m2_ / static_cast<double>(n_ - 1) : 0.0; }

double Welford::standard_error() const {
  return n_ > 1 ? std::sqrt(variance() / static_cast<double>(n_)) : std::numeric_limits<double>::infinity();
}

double student_t_quantile(double probability, double dof) {
  return boost::math::quantile(boost::math::students_t(dof), probability);
}

MeanInterval student_mean(const std::vector<double>& d) {
  const double n = double(d.size());
  if (d.empty()) return {.value = NAN, .lo = NAN, .hi = NAN};
  const double mean = std::accumulate(d.begin(), d.end(), 0.0) / n;
  if (d.size() < 2) return {.value = mean, .lo = NAN, .hi = NAN, .pairs = 1};
  double ss = 0;
  for (double v : d) ss += (v - mean) * (v - mean);
  const double half = student_t_quantile(0.975, n - 1) * std::sqrt(ss / (n - 1) / n);
  return {.value = mean, .lo = mean - half, .hi = mean + half, .pairs = int(d.size())};
}

double quantile(std::vector<double> v, double q) {
  const double pos = q * double(v.size() - 1);
  const auto lo = std::size_t(pos);
  const double w = pos - double(lo);
  std::nth_element(v.begin(), v.begin() + std::ptrdiff_t(lo), v.end());
  if (w == 0 || lo + 1 >= v.size()) return v[lo];  // an infinite neighbour times 0 would be NaN
  return v[lo] * (1 - w) + *std::min_element(v.begin() + std::ptrdiff_t(lo) + 1, v.end()) * w;
}

double ols_slope(const std::vector<double>& x, const std::vector<double>& y) {
  const double mx = std::accumulate(x.begin(), x.end(), 0.0) / double(x.size());
  const double my = std::accumulate(y.begin(), y.end(), 0.0) / double(y.size());
  double sxy = 0, sxx = 0;
  for (std::size_t i = 0; i < x.size(); ++i) sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
  return sxy / sxx;
}

double geometric_mean(const std::vector<double>& v) {
  double log_sum = 0;
  for (double x : v) log_sum += std::log(x);
  return std::exp(log_sum / double(v.size()));
}

namespace {

// The Fisher information Xᵀ diag(n p (1 − p)) X at beta, with p and the weights.
struct Information {
  VectorD p, weight;
  Eigen::LLT<MatrixD> llt;
};

Information information(const MatrixD& X, const VectorD& trials, const VectorD& beta) {
  Information info;
  info.p = (1 + (-(X * beta)).array().exp()).inverse().matrix();
  info.weight = trials.array() * info.p.array() * (1 - info.p.array());
  info.llt.compute(X.transpose() * info.weight.asDiagonal() * X);
  return info;
}

double penalised(const MatrixD& X, const VectorD& trials, const VectorD& successes, const VectorD& beta,
                 const Information& info) {
  if (info.llt.info() != Eigen::Success) return -HUGE_VAL;
  const VectorD eta = X * beta;
  double log_likelihood = 0;
  for (Index i = 0; i < eta.size(); ++i)  // log(1 + e^eta) without overflow
    log_likelihood += successes(i) * eta(i) -
                      trials(i) * (std::max(eta(i), 0.0) + std::log1p(std::exp(-std::abs(eta(i)))));
  const double log_det = 2 * info.llt.matrixLLT().diagonal().array().log().sum();
  return std::isfinite(log_det) ? log_likelihood + 0.5 * log_det : -HUGE_VAL;
}

}  // namespace

double firth_log_likelihood(const MatrixD& X, const VectorD& trials, const VectorD& successes, const VectorD& beta) {
  return penalised(X, trials, successes, beta, information(X, trials, beta));
}

LogisticFit firth_logistic(const MatrixD& X, const VectorD& trials, const VectorD& successes, const VectorD& start,
                           double tolerance) {
  constexpr int kIterations = 100, kHalvings = 40;
  constexpr double kMaxStep = 5;  // in any coefficient, as logistf's
  LogisticFit fit{.beta = start.size() ? start : VectorD::Zero(X.cols())};
  auto info = information(X, trials, fit.beta);
  double objective = penalised(X, trials, successes, fit.beta, info);
  for (int iteration = 0; iteration < kIterations && std::isfinite(objective); ++iteration) {
    // The hat matrix's diagonal h = w xᵀ I⁻¹ x gives the modified score Xᵀ(y − n p + h (½ − p)).
    const MatrixD root = info.llt.matrixL().solve(X.transpose());
    const VectorD hat = info.weight.array() * root.colwise().squaredNorm().transpose().array();
    const VectorD score = X.transpose() *
                          (successes - trials.cwiseProduct(info.p) + hat.cwiseProduct((0.5 - info.p.array()).matrix()));
    VectorD step = info.llt.solve(score);
    if (step.cwiseAbs().maxCoeff() < tolerance) {
      fit.beta += step, fit.converged = true;
      break;
    }
    if (const double largest = step.cwiseAbs().maxCoeff(); largest > kMaxStep) step *= kMaxStep / largest;
    // Rounding, not the step, decides a fall this small next to the optimum.
    const double floor = objective - 1e-12 * (1 + std::abs(objective));
    VectorD next = fit.beta + step;
    auto next_info = information(X, trials, next);
    double next_objective = penalised(X, trials, successes, next, next_info);
    for (int h = 0; h < kHalvings && !(next_objective >= floor); ++h) {
      step /= 2, next = fit.beta + step;
      next_info = information(X, trials, next);
      next_objective = penalised(X, trials, successes, next, next_info);
    }
    if (!(next_objective >= floor)) break;
    fit.beta = std::move(next), info = std::move(next_info), objective = next_objective;
  }
  return fit;
}

Estimate estimate(const Welford& w, std::int64_t nonfinite, double level) {
  Estimate e;
  e.count = w.count();
  e.nonfinite = nonfinite;
  e.mean = w.mean();
  e.se = w.standard_error();
  if (e.count > 1) {
    const double t = student_t_quantile(0.5 + level / 2, static_cast<double>(e.count - 1));
    e.ci_lo = e.mean - t * e.se;
    e.ci_hi = e.mean + t * e.se;
  } else {
    e.ci_lo = -std::numeric_limits<double>::infinity();
    e.ci_hi = std::numeric_limits<double>::infinity();
  }
  return e;
}

Estimate estimate(std::span<const double> values, double level) {
  Welford w;
  std::int64_t nonfinite = 0;
  for (double v : values) {
    if (std::isfinite(v)) w.add(v);
    else ++nonfinite;
  }
  return estimate(w, nonfinite, level);
}

Estimate estimate_with_control(std::span<const double> y, std::span<const double> c, double c_mean, double level) {
  if (y.size() != c.size()) throw std::invalid_argument("estimate_with_control: y and c differ in size");
  std::vector<double> ys, cs;
  std::int64_t nonfinite = 0;
  for (std::size_t t = 0; t < y.size(); ++t) {
    if (std::isfinite(y[t]) && std::isfinite(c[t])) ys.push_back(y[t]), cs.push_back(c[t]);
    else ++nonfinite;
  }
  const auto n = static_cast<double>(ys.size());
  double y_bar = 0, c_bar = 0;
  for (std::size_t t = 0; t < ys.size(); ++t) y_bar += ys[t], c_bar += cs[t];
  y_bar /= n, c_bar /= n;
  double s_cc = 0, s_cy = 0, s_yy = 0;
  for (std::size_t t = 0; t < ys.size(); ++t) {
    const double dc = cs[t] - c_bar, dy = ys[t] - y_bar;
    s_cc += dc * dc, s_cy += dc * dy, s_yy += dy * dy;
  }
  // A control that is constant up to rounding carries no information (and would divide by ~0).
  if (ys.size() < 3 || !(s_cc > 1e-24 * n * c_bar * c_bar)) {
    Welford plain;
    for (double v : ys) plain.add(v);
    return estimate(plain, nonfinite, level);
  }
  const double beta = s_cy / s_cc;
  const double residual_variance = std::max(0.0, s_yy - beta * s_cy) / (n - 2);
  Estimate e{.count = std::int64_t(ys.size()), .nonfinite = nonfinite};
  e.mean = y_bar - beta * (c_bar - c_mean);
  e.se = std::sqrt(residual_variance * (1 / n + (c_bar - c_mean) * (c_bar - c_mean) / s_cc));
  const double t = student_t_quantile(0.5 + level / 2, n - 2);
  e.ci_lo = e.mean - t * e.se;
  e.ci_hi = e.mean + t * e.se;
  e.variance_ratio = (s_yy / (n - 1)) / residual_variance;
  return e;
}

namespace {

// Least squares of log y on log x with weights w (all 1 without standard errors); `known_errors` says whether the
// weights are inverse variances (the interval is then never narrower than the model's) or only relative.
PowerLawFit fit_log_log(std::span<const double> x, std::span<const double> y, std::span<const double> w,
                        bool known_errors, double level) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  std::vector<double> lx(x.size()), ly(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    if (!(x[i] > 0) || !(y[i] > 0)) throw std::invalid_argument("fit_power_law: x and y must be positive");
    lx[i] = std::log(x[i]);
    ly[i] = std::log(y[i]);
    sw += w[i];
    sx += w[i] * lx[i];
    sy += w[i] * ly[i];
    sxx += w[i] * lx[i] * lx[i];
    sxy += w[i] * lx[i] * ly[i];
  }
  const double det = sw * sxx - sx * sx;
  if (!(sw > 0) || !(det > 1e-12 * sw * sw))
    throw std::domain_error("fit_power_law: needs finite standard errors and at least two distinct x");
  PowerLawFit fit;
  fit.points = x.size();
  fit.exponent = (sw * sxy - sx * sy) / det;
  const double a = (sy - fit.exponent * sx) / sw;
  fit.prefactor = std::exp(a);
  double chi2 = 0;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double r = ly[i] - a - fit.exponent * lx[i];
    chi2 += w[i] * r * r;
  }
  const double dof = static_cast<double>(x.size() - 2);
  const double scale = known_errors ? std::max(1.0, chi2 / dof) : chi2 / dof;
  fit.exponent_se = std::sqrt(sw / det * scale);
  const double t = student_t_quantile(0.5 + level / 2, dof);
  fit.ci_lo = fit.exponent - t * fit.exponent_se;
  fit.ci_hi = fit.exponent + t * fit.exponent_se;
  return fit;
}

void require_points(std::size_t x, std::size_t y) {
  if (x != y) throw std::invalid_argument("fit_power_law: size mismatch");
  if (x < 3) throw std::invalid_argument("fit_power_law: needs at least 3 points");
}

}  // namespace

PowerLawFit fit_power_law(std::span<const double> x, std::span<const double> y, std::span<const double> y_se,
                          double level) {
  require_points(x.size(), y.size());
  if (x.size() != y_se.size()) throw std::invalid_argument("fit_power_law: size mismatch");
  std::vector<double> w(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    const double s = std::max(y_se[i] / y[i], 1e-12);
    w[i] = 1 / (s * s);
  }
  return fit_log_log(x, y, w, true, level);
}

PowerLawFit fit_power_law(std::span<const double> x, std::span<const double> y, double level) {
  require_points(x.size(), y.size());
  return fit_log_log(x, y, std::vector<double>(x.size(), 1.0), false, level);
}

}  // namespace attnlab
