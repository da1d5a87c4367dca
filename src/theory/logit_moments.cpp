#include <attnlab/core/text.hpp>
#include <attnlab/theory/logit_moments.hpp>

#include <boost/math/quadrature/gauss_kronrod.hpp>
#include <boost/math/quadrature/tanh_sinh.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

namespace attnlab::theory {
namespace {

constexpr double kInvSqrt2Pi = 0.39894228040143268;
constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kRelTol = 1e-12;

double pdf(double x) { return kInvSqrt2Pi * std::exp(-0.5 * x * x); }
double upper_tail(double x) { return 0.5 * std::erfc(x / std::sqrt(2.0)); }  // 1 − Φ(x) without cancellation

double h_value(Elementwise h, int p, double s) {
  double v, dv;
  with_elementwise(h, p, [&]<Elementwise F, int P>() { evaluate<F, P>(s, p, v, dv); });
  return v;
}

void check_sigma(double sigma) {
  if (!(sigma >= 0 && std::isfinite(sigma)))
    throw std::invalid_argument(text("sigma must be a finite number >= 0 (got ", sigma, ")"));
}

// ∫ f(σz)φ(z) dz, split at 0 where relu-like functions have their kink.
double gaussian_expectation(const std::function<double(double)>& f, double sigma) {
  if (sigma == 0) return f(0);
  using GK = boost::math::quadrature::gauss_kronrod<double, 31>;
  const auto g = [&](double z) {
    const double w = pdf(z);
    return w == 0 ? 0.0 : f(sigma * z) * w;  // far nodes of the infinite map: f may overflow where φ is 0
  };
  return GK::integrate(g, -kInf, 0.0, 15, kRelTol) + GK::integrate(g, 0.0, kInf, 15, kRelTol);
}

// Homogeneous h of degree k (h(cs) = c^k h(s), c > 0): for any symmetric S, E h(S) = E|S|^k (h(1) + h(−1))/2.
struct Homogeneous {
  double degree, at_plus_one, at_minus_one;
};
bool homogeneous(Elementwise h, int p, Homogeneous& out) {
  using E = Elementwise;
  if (h == E::power) return out = {double(p), 1.0, (p % 2 == 0) ? 1.0 : -1.0}, true;
  if (h == E::relu) return out = {1.0, 1.0, 0.0}, true;
  if (h == E::relu2) return out = {2.0, 1.0, 0.0}, true;
  if (h == E::identity) return out = {1.0, 1.0, -1.0}, true;
  return false;
}
Moments homogeneous_moments(const Homogeneous& h, const std::function<double(double)>& abs_moment) {
  return {abs_moment(h.degree) * (h.at_plus_one + h.at_minus_one) / 2,
          abs_moment(2 * h.degree) * (h.at_plus_one * h.at_plus_one + h.at_minus_one * h.at_minus_one) / 2};
}

// E|Z|^k = 2^{k/2} Γ((k+1)/2)/√π
double normal_abs_moment(double k) {
  return std::exp(0.5 * k * std::log(2.0) + std::lgamma(0.5 * (k + 1)) - 0.5 * std::log(M_PI));
}
// E (χ²_n/n)^s = (2/n)^s Γ(n/2 + s)/Γ(n/2)
double scaled_chi2_moment(double n, double s) {
  return std::exp(s * std::log(2.0 / n) + std::lgamma(n / 2 + s) - std::lgamma(n / 2));
}
// qk-layernorm: S = √d t with t² ~ Beta(1/2, (d−2)/2), E|t|^k = Γ((k+1)/2)Γ((d−1)/2)/(Γ(1/2)Γ((d−1+k)/2)).
double qkln_abs_moment(double d, double k) {
  return std::exp(0.5 * k * std::log(d) + std::lgamma(0.5 * (k + 1)) + std::lgamma(0.5 * (d - 1)) -
                  0.5 * std::log(M_PI) - std::lgamma(0.5 * (d - 1 + k)));
}

void check_ensemble(const EnsembleSpec& e, bool qk_layernorm) {
  if (!(e.D >= 1)) throw std::invalid_argument(text("D must be at least 1 (got ", e.D, ")"));
  if (!(e.d >= (qk_layernorm ? 2 : 1)))
    throw std::invalid_argument(
        text("d must be at least ", qk_layernorm ? "2 for qk-layernorm" : "1", " (got ", e.d, ")"));
  check_sigma(e.sigma_x);
  check_sigma(e.sigma_t);
  if (qk_layernorm && !(e.sigma_x > 0 && e.sigma_t > 0))  // LayerNorm of q = 0 is 0, not a sphere point
    throw std::invalid_argument("sigma_x and sigma_t must be positive for qk-layernorm's logit law");
}

// τ² = c·V_D V'_D V_d off the diagonal, c·V_D² V_d on it, c = σx⁴σt⁴D².
double tau2_scale(const EnsembleSpec& e) { return std::pow(e.sigma_x * e.sigma_t, 4) * double(e.D) * double(e.D); }

// E|S|^k = E τ^k E|Z|^k with E τ^k a product of scaled chi-square moments.
double mixture_abs_moment(const EnsembleSpec& e, bool diagonal, double k) {
  const double D = double(e.D), d = double(e.d);
  const double x_part = diagonal ? scaled_chi2_moment(D, k) : std::pow(scaled_chi2_moment(D, k / 2), 2);
  return std::pow(tau2_scale(e), k / 2) * x_part * scaled_chi2_moment(d, k / 2) * normal_abs_moment(k);
}

// E f(S) for S = √d t under qk-layernorm: tanh–sinh over t ∈ [0, 1] of (f(√d t) + f(−√d t)) times the
// density (1−t)^{b−1}(1+t)^{b−1}/(2^{2b−1}B(b,b)), b = (d−2)/2, split where relu6 has its kink (S = 6);
// near t = 1 the quadrature's own complement gives 1 − t without cancellation (singular there for d = 3).
double qkln_expectation(const std::function<double(double)>& f, double d) {
  const double root_d = std::sqrt(d);
  if (d == 2) return (f(root_d) + f(-root_d)) / 2;
  const double b = (d - 2) / 2, log_norm = (2 * b - 1) * std::log(2.0) + 2 * std::lgamma(b) - std::lgamma(2 * b);
  std::vector<double> breaks{0};
  if (6 < root_d) breaks.push_back(6 / root_d);
  breaks.push_back(1);
  thread_local boost::math::quadrature::tanh_sinh<double> integrator;  // its tables are built once
  double sum = 0;
  for (std::size_t i = 0; i + 1 < breaks.size(); ++i) {
    const double end = breaks[i + 1];
    // tc is b − t on the right half of [a, b] and a − t on the left (Boost's convention)
    const auto g = [&](double t, double tc) {
      const double one_minus_t = (end == 1 && tc > 0) ? tc : 1 - t;
      return (f(root_d * t) + f(-root_d * t)) * std::exp((b - 1) * (std::log(one_minus_t) + std::log1p(t)) - log_norm);
    };
    sum += integrator.integrate(g, breaks[i], end, kRelTol);
  }
  return sum;
}

// A density sampled at s = (first + i)·h.
struct GridDensity {
  double h;
  long first;
  std::vector<double> p;
};

// The density of m·log G, G ~ Gamma(κ, 1), which is e^{κu − e^u}/(mΓ(κ)) at u = s/m, over the grid points
// where it exceeds 1e-22 of its mode (tails beyond add < 1e-20 to any moment used here).
GridDensity log_gamma_density(double kappa, double m, double h) {
  const auto density = [&](double s) { return std::exp(kappa * s / m - std::exp(s / m) - std::lgamma(kappa)) / m; };
  const long mode = std::lround(m * std::log(kappa) / h);
  const double floor = 1e-22 * density(double(mode) * h);
  long lo = mode, hi = mode;
  while (density(double(lo - 1) * h) > floor) --lo;
  while (density(double(hi + 1) * h) > floor) ++hi;
  GridDensity g{h, lo, {}};
  for (long i = lo; i <= hi; ++i) g.p.push_back(density(double(i) * h));
  return g;
}

// The density of a sum of independent variables: trapezoidal convolution, spectrally accurate for these
// analytic, fast-decaying densities.
GridDensity convolve(const GridDensity& a, const GridDensity& b) {
  GridDensity c{a.h, a.first + b.first, std::vector<double>(a.p.size() + b.p.size() - 1, 0.0)};
  for (std::size_t i = 0; i < a.p.size(); ++i)
    for (std::size_t j = 0; j < b.p.size(); ++j) c.p[i + j] += a.h * a.p[i] * b.p[j];
  return c;
}

// Calls visit(τ, weight) over a grid of log τ²: with χ²_n/n = 2G/n, G ~ Gamma(n/2, 1),
// log τ² = log(c·(2/D)²(2/d)) + log G_D + log G'_D + log G_d off the diagonal (2 log G_D on it), whose
// density is the convolution of log-gamma densities. The trapezoidal rule resolves a log-gamma density
// of shape κ (width ~1/√κ) to ~1e-11 with h = 0.25/√κ: the error is ~exp(κ(1 − cos y) − 2πy/h) at y = 1/√κ.
template <class Visit>
void for_each_scale(const EnsembleSpec& e, bool diagonal, Visit&& visit) {
  const double kx = double(e.D) / 2, kq = double(e.d) / 2, h = 0.25 / std::sqrt(std::max({kx, kq, 1.0}));
  const GridDensity gq = log_gamma_density(kq, 1, h);
  const GridDensity sum = diagonal ? convolve(log_gamma_density(kx, 2, h), gq)
                                   : convolve(convolve(log_gamma_density(kx, 1, h), log_gamma_density(kx, 1, h)), gq);
  const double offset = std::log(tau2_scale(e) * (2 / double(e.D)) * (2 / double(e.D)) * (2 / double(e.d)));
  for (std::size_t i = 0; i < sum.p.size(); ++i)
    visit(std::exp(0.5 * (offset + double(sum.first + long(i)) * h)), h * sum.p[i]);
}

}  // namespace

Moments gaussian_moments(Elementwise h, double sigma, int p) {
  using E = Elementwise;
  check_sigma(sigma);
  if (h == E::power && p < 1) throw std::invalid_argument(text("p must be at least 1 (got ", p, ")"));
  if (sigma == 0) {
    const double v = h_value(h, p, 0);
    return {v, v * v};
  }
  if (Homogeneous hom; homogeneous(h, p, hom))
    return homogeneous_moments(hom, [&](double k) { return std::pow(sigma, k) * normal_abs_moment(k); });
  const double s2 = sigma * sigma;
  switch (h) {
    case E::gelu: {  // Stein's lemma E[Zg(Z)] = E g'(Z) twice, and P(Y1 ≤ σZ, Y2 ≤ σZ) = 1/4 + asin(ρ)/2π
      const double mean = s2 * kInvSqrt2Pi / std::sqrt(1 + s2);
      const double cdf2 = 0.25 + std::asin(s2 / (1 + s2)) / (2 * M_PI);
      return {mean, s2 * (cdf2 + s2 / (M_PI * (1 + s2) * std::sqrt(1 + 2 * s2)))};
    }
    case E::relu6: {  // E[Z; 0<Z<c] = φ(0) − φ(c), E[Z²; 0<Z<c] = Φ(c) − 1/2 − cφ(c), c = 6/σ
      const double c = 6 / sigma, tail = upper_tail(c);
      return {sigma * (pdf(0) - pdf(c)) + 6 * tail, s2 * (0.5 - tail - c * pdf(c)) + 36 * tail};
    }
    case E::elu: {  // E[e^{σZ}; Z<0] = e^{σ²/2}Φ(−σ), E[e^{2σZ}; Z<0] = e^{2σ²}Φ(−2σ)
      const double e1 = std::exp(s2 / 2) * upper_tail(sigma), e2 = std::exp(2 * s2) * upper_tail(2 * sigma);
      return {sigma * pdf(0) + e1 - 0.5, s2 / 2 + e2 - 2 * e1 + 0.5};
    }
    case E::exp: return {std::exp(s2 / 2), std::exp(2 * s2)};
    default: break;
  }
  const auto f = [&](double s) { return h_value(h, p, s); };
  const auto f2 = [&](double s) { return std::pow(h_value(h, p, s), 2); };
  // sigmoid(s) + sigmoid(−s) = 1 and tanh is odd
  const double mean = h == E::sigmoid ? 0.5 : h == E::tanh ? 0.0 : gaussian_expectation(f, sigma);
  return {mean, gaussian_expectation(f2, sigma)};
}

double logit_variance(const EnsembleSpec& e, bool qk_layernorm) {
  check_ensemble(e, qk_layernorm);
  return qk_layernorm ? double(e.d) / double(e.d - 1) : tau2_scale(e);
}

double logit_scale_expectation(const std::function<double(double)>& f, const EnsembleSpec& e, bool diagonal) {
  check_ensemble(e, false);
  double sum = 0;
  for_each_scale(e, diagonal, [&](double tau, double weight) { sum += weight * f(tau); });
  return sum;
}

double logit_expectation(const std::function<double(double)>& f, const EnsembleSpec& e, bool qk_layernorm,
                         bool diagonal) {
  check_ensemble(e, qk_layernorm);
  if (qk_layernorm) return qkln_expectation(f, double(e.d));
  return logit_scale_expectation([&](double tau) { return gaussian_expectation(f, tau); }, e, diagonal);
}

EntryMoments logit_moments(Elementwise h, const EnsembleSpec& e, bool qk_layernorm, int p) {
  check_ensemble(e, qk_layernorm);
  if (h == Elementwise::power && p < 1) throw std::invalid_argument(text("p must be at least 1 (got ", p, ")"));
  if (h == Elementwise::exp && !qk_layernorm)
    throw std::invalid_argument("exp: E e^S is infinite for the logits without qk-layernorm (E e^{tau^2/2} diverges)");
  const auto entry = [&](bool diagonal) -> Moments {
    if (Homogeneous hom; homogeneous(h, p, hom))
      return homogeneous_moments(hom, [&](double k) {
        return qk_layernorm ? qkln_abs_moment(double(e.d), k) : mixture_abs_moment(e, diagonal, k);
      });
    if (qk_layernorm) {
      const double mean = qkln_expectation([&](double s) { return h_value(h, p, s); }, double(e.d));
      return {mean, qkln_expectation([&](double s) { return std::pow(h_value(h, p, s), 2); }, double(e.d))};
    }
    // Given τ, S ~ N(0, τ²): both moments from the Gaussian closed forms (or quadrature) at each node.
    Moments m{};
    for_each_scale(e, diagonal, [&](double tau, double weight) {
      const Moments at = gaussian_moments(h, tau, p);
      m.mean += weight * at.mean;
      m.second += weight * at.second;
    });
    return m;
  };
  // With qk-layernorm the diagonal has the off-diagonal law (header): computed once.
  const Moments off = entry(false);
  return {off, qk_layernorm ? off : entry(true)};
}

WeightLevels weight_levels(const EntryMoments& m, double N, double alpha) {
  if (!(N >= 1)) throw std::invalid_argument(text("N must be at least 1 (got ", N, ")"));
  const double scale = std::pow(N, -alpha);
  const double mean_weight = scale * ((N - 1) * m.off_diagonal.mean + m.diagonal.mean) / N;
  return {mean_weight, N * mean_weight, scale * scale * N * ((N - 1) * m.off_diagonal.second + m.diagonal.second)};
}

WeightLevels weight_limits(const EntryMoments& m) {
  return {m.off_diagonal.mean, m.off_diagonal.mean, m.off_diagonal.second};
}

double softmax_row_norm2(double N, double sigma) {
  if (!(N >= 1 && std::isfinite(N))) throw std::invalid_argument(text("N must be at least 1 (got ", N, ")"));
  check_sigma(sigma);
  if (N == 1 || sigma == 0) return 1 / N;
  // t = s/N keeps the integrand's scale O(1) for every N: N·E‖p‖² = ∫₀^∞ s F(s/N) L(s/N)^{N−1} ds.
  const auto one_minus_L = [&](double t) {
    return gaussian_expectation([&](double x) { return -std::expm1(-t * std::exp(x)); }, sigma);
  };
  const auto F = [&](double t) {
    return gaussian_expectation([&](double x) { return std::exp(2 * x - t * std::exp(x)); }, sigma);
  };
  const auto integrand = [&](double s) {
    const double t = s / N;
    return s * F(t) * std::exp((N - 1) * std::log1p(-one_minus_L(t)));
  };
  using GK = boost::math::quadrature::gauss_kronrod<double, 31>;
  return GK::integrate(integrand, 0.0, kInf, 15, 1e-10) / N;
}

double softmax_row_norm2_limit_times_n(double sigma) {
  check_sigma(sigma);
  return std::exp(sigma * sigma);
}

}  // namespace attnlab::theory
