#pragma once
// Attention activations ϕ applied to the logits M = X Q Kᵀ Xᵀ (unscaled).
// Elementwise activations act entry by entry; row-normalised ones act on each row.
#include <attnlab/core/types.hpp>
#include <attnlab/core/vmath.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
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
    const double cdf = 0.5 * vmath::erfc(-s * 0.70710678118654752), pdf = 0.39894228040143268 * vmath::exp(-0.5 * s * s);
    h = s * cdf;
    dh = cdf + s * pdf;
  } else if constexpr (F == E::softplus) {  // log(1 + e^s) without overflow
    h = std::max(s, 0.0) + std::log1p(vmath::exp(-std::abs(s)));
    dh = s >= 0 ? 1 / (1 + vmath::exp(-s)) : vmath::exp(s) / (1 + vmath::exp(s));
  } else if constexpr (F == E::identity) {
    h = s;
    dh = 1.0;
  } else if constexpr (F == E::relu6) {
    h = std::min(std::max(s, 0.0), 6.0);
    dh = s > 0 && s < 6 ? 1.0 : 0.0;
  } else if constexpr (F == E::sigmoid) {
    const double e = vmath::exp(-std::abs(s)), sig = s >= 0 ? 1 / (1 + e) : e / (1 + e);
    h = sig;
    dh = sig * (1 - sig);
  } else if constexpr (F == E::elu) {
    h = s > 0 ? s : std::expm1(s);
    dh = s > 0 ? 1.0 : vmath::exp(s);
  } else if constexpr (F == E::tanh) {
    h = std::tanh(s);
    dh = 1 - h * h;
  } else {
    static_assert(F == E::exp);
    h = vmath::exp(s);
    dh = h;
  }
}

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
template <RowNormalised F>
inline void evaluate_row(double x, double shift, double& g, double& dg) {
  using R = RowNormalised;
  if constexpr (F == R::softmax) {
    g = dg = vmath::exp(x - shift);
  } else if constexpr (F == R::sinmax_constant) {
    g = 1 + vmath::sin(10 * x), dg = 10 * vmath::cos(10 * x);
  } else if constexpr (F == R::sinmax) {
    g = vmath::sin(x), dg = vmath::cos(x);
  } else if constexpr (F == R::cosmax) {
    g = vmath::cos(x), dg = -vmath::sin(x);
  } else if constexpr (F == R::sin2max) {
    g = vmath::sin(x) * vmath::sin(x), dg = vmath::sin(2 * x);
  } else if constexpr (F == R::sin2max_shifted) {
    const double s = vmath::sin(x + 0.78539816339744831);
    g = s * s, dg = vmath::cos(2 * x);
  } else if constexpr (F == R::sirenmax) {  // (sin x + 1)/(2 − 2 sin x): poles where sin x = 1
    const double s = vmath::sin(x), c = vmath::cos(x);
    g = (s + 1) / (2 - 2 * s), dg = c / ((1 - s) * (1 - s));
  } else {
    static_assert(F == R::sinsoftmax);
    g = vmath::exp(vmath::sin(x)), dg = vmath::cos(x) * g;
  }
}

// Calls visit.template operator()<F, P>() with the run-time function as template arguments, so that
// loops over entries specialise (small powers unrolled: P = 0 means "use p").
template <class Visit>
decltype(auto) with_elementwise(Elementwise f, int p, Visit&& visit) {
  using E = Elementwise;
  switch (f) {
    case E::power:
      switch (p) {
        case 1: return visit.template operator()<E::power, 1>();
        case 2: return visit.template operator()<E::power, 2>();
        case 3: return visit.template operator()<E::power, 3>();
        case 4: return visit.template operator()<E::power, 4>();
        case 5: return visit.template operator()<E::power, 5>();
        default: return visit.template operator()<E::power, 0>();
      }
    case E::relu: return visit.template operator()<E::relu, 0>();
    case E::relu2: return visit.template operator()<E::relu2, 0>();
    case E::gelu: return visit.template operator()<E::gelu, 0>();
    case E::softplus: return visit.template operator()<E::softplus, 0>();
    case E::identity: return visit.template operator()<E::identity, 0>();
    case E::relu6: return visit.template operator()<E::relu6, 0>();
    case E::sigmoid: return visit.template operator()<E::sigmoid, 0>();
    case E::elu: return visit.template operator()<E::elu, 0>();
    case E::tanh: return visit.template operator()<E::tanh, 0>();
    case E::exp: return visit.template operator()<E::exp, 0>();
  }
  throw std::logic_error("unreachable elementwise function");
}

// h(s) and h'(s) with the function chosen at run time (references and tests).
inline void evaluate(Elementwise f, int p, double s, double& h, double& dh) {
  with_elementwise(f, p, [&]<Elementwise F, int P>() { evaluate<F, P>(s, p, h, dh); });
}

template <class Visit>
decltype(auto) with_row_normalised(RowNormalised f, Visit&& visit) {
  using R = RowNormalised;
  switch (f) {
    case R::softmax: return visit.template operator()<R::softmax>();
    case R::sinmax_constant: return visit.template operator()<R::sinmax_constant>();
    case R::sinmax: return visit.template operator()<R::sinmax>();
    case R::cosmax: return visit.template operator()<R::cosmax>();
    case R::sin2max: return visit.template operator()<R::sin2max>();
    case R::sin2max_shifted: return visit.template operator()<R::sin2max_shifted>();
    case R::sirenmax: return visit.template operator()<R::sirenmax>();
    case R::sinsoftmax: return visit.template operator()<R::sinsoftmax>();
  }
  throw std::logic_error("unreachable row-normalised function");
}

// The same with the function chosen at run time (references and tests).
inline void evaluate_row(RowNormalised f, double x, double shift, double& g, double& dg) {
  with_row_normalised(f, [&]<RowNormalised F>() { evaluate_row<F>(x, shift, g, dg); });
}

// ϕ = row-normalised g applied to logit_scale · M.
struct RowActivation {
  RowNormalised fn = RowNormalised::softmax;
  double logit_scale = 1.0;
};

// Transforms that compose with any activation. Prenorm (PERIODIC §3.6, as CLAIMS.md restates the
// reference code) standardises each row of S: z = (x − mean)/sqrt(unbiased var + prenorm_eps).
// qk-layernorm (RELU) applies LayerNorm without affine over the d head dimensions to every q_i = x_iQ
// and k_j = x_jK before the dot product; its eps is timm's ViT default.
struct Transforms {
  bool prenorm = false;
  bool qk_layernorm = false;
  double prenorm_eps = 1e-5;
  double qk_eps = 1e-6;
  bool operator==(const Transforms&) const = default;
};

using ActivationFunction = std::variant<ElementwiseActivation, RowActivation>;

struct Activation {
  ActivationFunction fn;
  Transforms transforms{};
};

double logit_scale(const Activation& a);

// An activation as the user names it, before N and d fix its constants.
struct ActivationSpec {
  std::string name = "poly";  // a name in activation_names()
  int p = 3;
  KScale k{};
  Convention convention = Convention::inside;
  double alpha = 1.0;  // the L^-alpha of the RELU paper's h(S)/L^alpha, L = N
  Transforms transforms{};

  // "name" or "name+prenorm", "name+qkln", "name+prenorm+qkln"; the name must be registered.
  static ActivationSpec parse(const std::string& s);
  Activation resolve(Index N, Index d) const;
  std::string label() const;  // e.g. "x^3/sqrtN (inside)", "relu/N^1", "softmax+prenorm"
  std::string key() const;    // every parameter, for caches
  void validate() const;      // throws std::invalid_argument naming the parameter
  void validate(Index N, Index d) const;  // and that the transforms suit the shape
};

struct ActivationInfo {
  std::string name;
  std::string description;
  bool uses_p;      // x^p/k: takes --p, --k and --convention
  bool uses_alpha;  // h(S)/N^alpha: takes --alpha
  Elementwise fn;
  bool row_normalised = false;
  RowNormalised row = RowNormalised::softmax;
  bool learned_scale = false;  // x^p·θ with θ = 1/k trained (--k gives its initial value)
};
const std::vector<ActivationInfo>& activation_registry();
const ActivationInfo& find_activation(const std::string& name);  // throws on unknown names

}  // namespace attnlab
