#pragma once
// Attention activations ϕ applied to the logits M = X Q Kᵀ Xᵀ (unscaled).
// Elementwise activations act entry by entry; row-normalised ones act on each row.
#include <attnlab/core/types.hpp>

#include <algorithm>
#include <cmath>
#include <string>
#include <variant>
#include <vector>

namespace attnlab {

// Where the 1/√d of S = XQKᵀXᵀ/√d sits for x^p: POLY Thm 4.2 scales inside the power,
// Thm 4.3 outside; `none` drops it (the proofs' (XQKᵀXᵀ)^p).
enum class Convention { inside, outside, none };
Convention parse_convention(const std::string& s);
std::string to_string(Convention c);

// The 1/k of x^p/k: a fixed number or √N (resolved once N is known).
struct KScale {
  bool sqrt_n = false;
  double value = 1.0;
  double resolve(Index N) const;
  std::string str() const;
  static KScale parse(const std::string& s);  // "1", "16", "sqrtN"
};

// The elementwise functions h of ϕ = out_scale · h(S): x^p (POLY), the RELU paper's h ∈ {relu, relu²,
// gelu, softplus, identity, relu6, sigmoid} and REPOLY Table 5's elu, tanh, exp.
enum class Elementwise { power, relu, relu2, gelu, softplus, identity, relu6, sigmoid, elu, tanh, exp };

// h(s) and h'(s). F (and P for x^P) fixed at compile time lets the tile loops specialise; P = 0 uses p.
template <Elementwise F, int P = 0>
inline void evaluate(double s, int p, double& h, double& dh) {
  using E = Elementwise;
  if constexpr (F == E::power) {
    const int n = P > 0 ? P : p;
    double r = 1.0;  // s^(n-1)
    for (int q = 1; q < n; ++q) r *= s;
    h = r * s;
    dh = n * r;
  } else if constexpr (F == E::relu) {
    h = s > 0 ? s : 0.0;
    dh = s > 0 ? 1.0 : 0.0;
  } else if constexpr (F == E::relu2) {
    h = s > 0 ? s * s : 0.0;
    dh = s > 0 ? 2 * s : 0.0;
  } else if constexpr (F == E::gelu) {  // exact: s Φ(s)
    const double cdf = 0.5 * std::erfc(-s * 0.70710678118654752), pdf = 0.39894228040143268 * std::exp(-0.5 * s * s);
    h = s * cdf;
    dh = cdf + s * pdf;
  } else if constexpr (F == E::softplus) {  // log(1 + e^s) without overflow
    h = std::max(s, 0.0) + std::log1p(std::exp(-std::abs(s)));
    dh = s >= 0 ? 1 / (1 + std::exp(-s)) : std::exp(s) / (1 + std::exp(s));
  } else if constexpr (F == E::identity) {
    h = s;
    dh = 1.0;
  } else if constexpr (F == E::relu6) {
    h = std::min(std::max(s, 0.0), 6.0);
    dh = s > 0 && s < 6 ? 1.0 : 0.0;
  } else if constexpr (F == E::sigmoid) {
    const double e = std::exp(-std::abs(s)), sig = s >= 0 ? 1 / (1 + e) : e / (1 + e);
    h = sig;
    dh = sig * (1 - sig);
  } else if constexpr (F == E::elu) {
    h = s > 0 ? s : std::expm1(s);
    dh = s > 0 ? 1.0 : std::exp(s);
  } else if constexpr (F == E::tanh) {
    h = std::tanh(s);
    dh = 1 - h * h;
  } else {
    static_assert(F == E::exp);
    h = std::exp(s);
    dh = h;
  }
}

// The same with the function chosen at run time (references and tests).
void evaluate(Elementwise f, int p, double s, double& h, double& dh);

// ϕ(m) = out_scale · h(logit_scale · m); the activation's argument is S = logit_scale · m.
struct ElementwiseActivation {
  Elementwise fn = Elementwise::power;
  int p = 1;  // for x^p
  double logit_scale = 1.0;
  double out_scale = 1.0;
};

// Row-normalised ϕ_j = g(x_j) / Σ_l g(x_l) over a row x: softmax (g = exp) and the PERIODIC paper's
// alternatives, as restated in CLAIMS.md.
enum class RowNormalised { softmax, sinmax_constant, sinmax, cosmax, sin2max, sin2max_shifted, sirenmax, sinsoftmax };

// g(x) and g'(x). Softmax's g is taken relative to `shift` (the row maximum): the factor cancels in g/Σg.
inline void evaluate_row(RowNormalised f, double x, double shift, double& g, double& dg) {
  using R = RowNormalised;
  switch (f) {
    case R::softmax: g = dg = std::exp(x - shift); return;
    case R::sinmax_constant: g = 1 + std::sin(10 * x), dg = 10 * std::cos(10 * x); return;
    case R::sinmax: g = std::sin(x), dg = std::cos(x); return;
    case R::cosmax: g = std::cos(x), dg = -std::sin(x); return;
    case R::sin2max: g = std::sin(x) * std::sin(x), dg = std::sin(2 * x); return;
    case R::sin2max_shifted: {
      const double s = std::sin(x + 0.78539816339744831);
      g = s * s, dg = std::cos(2 * x);
      return;
    }
    case R::sirenmax: {  // (sin x + 1)/(2 − 2 sin x): poles where sin x = 1
      const double s = std::sin(x), c = std::cos(x);
      g = (s + 1) / (2 - 2 * s), dg = c / ((1 - s) * (1 - s));
      return;
    }
    case R::sinsoftmax: g = std::exp(std::sin(x)), dg = std::cos(x) * g; return;
  }
}

// ϕ = row-normalised g applied to logit_scale · M.
struct RowActivation {
  RowNormalised fn = RowNormalised::softmax;
  double logit_scale = 1.0;
};

using Activation = std::variant<ElementwiseActivation, RowActivation>;

// An activation as the user names it, before N and d fix its constants.
struct ActivationSpec {
  std::string name = "poly";  // a name in activation_names()
  int p = 3;
  KScale k{};
  Convention convention = Convention::inside;
  double alpha = 1.0;  // the L^-alpha of the RELU paper's h(S)/L^alpha, L = N

  Activation resolve(Index N, Index d) const;
  std::string label() const;  // e.g. "x^3/sqrtN (inside)", "relu/N^1"
  void validate() const;      // throws std::invalid_argument naming the parameter
};

struct ActivationInfo {
  std::string name;
  std::string description;
  bool uses_p;      // x^p/k: takes --p, --k and --convention
  bool uses_alpha;  // h(S)/N^alpha: takes --alpha
  Elementwise fn;
  bool row_normalised = false;
  RowNormalised row = RowNormalised::softmax;
};
const std::vector<ActivationInfo>& activation_registry();
const ActivationInfo& find_activation(const std::string& name);  // throws on unknown names

}  // namespace attnlab
