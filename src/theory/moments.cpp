#include <attnlab/theory/moments.hpp>

#include <cmath>
#include <stdexcept>

namespace attnlab::theory {

double rising_by_two(double n, int p) {
  double r = 1;
  for (int k = 0; k < p; ++k) r *= n + 2 * k;
  return r;
}

double double_factorial(int n) {
  if (n < -1) throw std::invalid_argument("double_factorial of n < -1");
  double r = 1;
  for (int k = n; k > 1; k -= 2) r *= k;
  return r;
}

double falling_factorial(double n, int p) {
  double r = 1;
  for (int k = 0; k < p; ++k) r *= n - k;
  return r;
}

namespace {
// N(N−1)[D]_p² + N[D]_2p: the off-diagonal pairs (x_i, x_j independent) plus the diagonal (x_i twice).
double token_pairs(const Ensemble& e, int p) {
  return e.N * (e.N - 1) * std::pow(rising_by_two(e.D, p), 2) + e.N * rising_by_two(e.D, 2 * p);
}
}  // namespace

double frobenius2_exact(const Ensemble& e, int p) {
  return double_factorial(2 * p - 1) * rising_by_two(e.d, p) * std::pow(e.sigma_x, 4 * p) * std::pow(e.sigma_t, 4 * p) *
         token_pairs(e, p);
}

double frobenius2_independent_exact(const Ensemble& e, int p) {
  const double s = std::sqrt(e.D) * e.sigma_x * e.sigma_t;
  return e.N * e.N * product_moment_exact(e.d, p, s, s);
}

double product_moment_exact(double D, int p, double sigma1, double sigma2) {
  // c = Σ a_i b_i; given b, c ~ N(0, σ1²‖b‖²) and ‖b‖²/σ2² ~ χ²_D.
  return double_factorial(2 * p - 1) * rising_by_two(D, p) * std::pow(sigma1 * sigma2, 2 * p);
}

double product_moment_paper(double D, int p, double sigma1, double sigma2) {
  return falling_factorial(D, p) * double_factorial(2 * p - 1) * std::pow(sigma1 * sigma2, 2 * p);
}

double qgrad2_exact(const Ensemble& e, int p) {
  return p * p * double_factorial(2 * p - 3) * rising_by_two(e.d, p) * std::pow(e.sigma_x, 4 * p) *
         std::pow(e.sigma_t, 4 * p - 2) * token_pairs(e, p);
}

double qgrad2_paper(const Ensemble& e, int p) {
  const double s = std::pow(e.sigma_x, 4 * p) * std::pow(e.sigma_t, 4 * p - 2);
  if (p == 1) return (3 * e.N * e.D * e.d + e.N * (e.N - 1) * e.D * (e.D - 1) * e.d) * s;
  return e.N * e.N * std::pow(e.D, 2 * p) * std::pow(e.d, p) * double_factorial(2 * p - 3) * s;
}

double qgrad2_paper_leading(const Ensemble& e) {
  return e.N * e.N * e.D * e.D * e.d * std::pow(e.sigma_x, 4) * std::pow(e.sigma_t, 2);
}

double squared_norm_exact(const EnsembleSpec& spec, const Activation& a, const std::string& quantity) {
  const double unknown = std::nan("");
  const auto* f = std::get_if<ElementwiseActivation>(&a.fn);
  if (!f || a.transforms != Transforms{}) return unknown;
  int p = 0;
  double half = 1;
  switch (f->fn) {
    case Elementwise::power: p = f->p; break;
    case Elementwise::identity: p = 1; break;
    case Elementwise::relu: p = 1, half = 0.5; break;
    case Elementwise::relu2: p = 2, half = 0.5; break;
    default: return unknown;
  }
  const Ensemble e{double(spec.N), double(spec.D), double(spec.d), spec.sigma_x, spec.sigma_t};
  const double c = f->logit_scale, o2 = f->out_scale * f->out_scale;
  // ϕ = o(cM)^p, ∂ϕ/∂S = o p (cM)^(p−1) with S = cM, and the gradients carry c once more through ∂S/∂M.
  if (quantity == "frob2") return half * o2 * std::pow(c, 2 * p) * frobenius2_exact(e, p);
  if (quantity == "jac2") return half * o2 * p * p * std::pow(c, 2 * p - 2) * frobenius2_exact(e, p - 1);
  if (quantity == "qgrad2" || quantity == "kgrad2") return half * o2 * std::pow(c, 2 * p) * qgrad2_exact(e, p);
  return unknown;
}

}  // namespace attnlab::theory
