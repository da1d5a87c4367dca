#pragma once
// Attention activations ϕ applied to the logits M = X Q Kᵀ Xᵀ (unscaled).
// Elementwise activations act entry by entry; row-normalised ones act on each row.
#include <attnlab/attention/elementwise.hpp>
#include <attnlab/attention/formula.hpp>
#include <attnlab/core/types.hpp>
#include <attnlab/core/vmath.hpp>

#include <algorithm>
#include <cmath>
#include <memory>
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

// ϕ(m) = out_scale · h(logit_scale · m); the activation's argument is S = logit_scale · m.
struct ElementwiseActivation {
  Elementwise fn = Elementwise::power;
  int p = 1;  // for x^p
  double logit_scale = 1.0;
  double out_scale = 1.0;
  std::shared_ptr<const FormulaTape> formula{};  // h of fn = formula
};

// Row-normalised ϕ_j = g(x_j) / Σ_l g(x_l) over a row x: softmax (g = exp), the PERIODIC paper's
// alternatives, as restated in CLAIMS.md, uniform (g = 1: every entry 1/n, content-free attention) and a user's
// `rowexpr:` formula (its g evaluated over a row by its tape). The `_released` ones are the definitions of the paper's released
// training code (demo.py) where they differ from the paper and its layer file (periodic_softmax.py): they apply
// the phase or the sine to the unscaled logit m = x/c, c = the logit scale 1/√d, so g depends on c.
enum class RowNormalised {
  softmax,
  sinmax_constant,
  sinmax,
  cosmax,
  sin2max,
  sin2max_shifted,
  sirenmax,
  sinsoftmax,
  sin2max_released,
  sinsoftmax_released,
  uniform,
  formula
};

// What g needs besides x: softmax's g is taken relative to `shift` (the row maximum; the factor cancels
// in g/Σg); the released definitions read the logit scale c.
struct RowConstants {
  double shift = 0.0;
  double logit_scale = 1.0;
};

// g(x) and g'(x).
template <RowNormalised F>
inline void evaluate_row(double x, const RowConstants& k, double& g, double& dg) {
  using R = RowNormalised;
  if constexpr (F == R::softmax) {
    g = dg = vmath::exp(x - k.shift);
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
  } else if constexpr (F == R::sinsoftmax) {
    g = vmath::exp(vmath::sin(x)), dg = vmath::cos(x) * g;
  } else if constexpr (F == R::sin2max_released) {  // sin²((m − π/4)c + π/4) = sin²(x + (π/4)(1 − c))
    const double phase = x + 0.78539816339744831 * (1 - k.logit_scale);
    const double s = vmath::sin(phase);
    g = s * s, dg = vmath::sin(2 * phase);
  } else if constexpr (F == R::sinsoftmax_released) {  // e^{c sin m}, m = x/c
    const double m = x / k.logit_scale;
    g = vmath::exp(k.logit_scale * vmath::sin(m)), dg = vmath::cos(m) * g;
  } else {
    static_assert(F == R::uniform);
    g = 1, dg = 0;
  }
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
    case R::sin2max_released: return visit.template operator()<R::sin2max_released>();
    case R::sinsoftmax_released: return visit.template operator()<R::sinsoftmax_released>();
    case R::uniform: return visit.template operator()<R::uniform>();
    case R::formula: throw std::invalid_argument("a formula activation runs on the cpu backend's array paths only");
  }
  throw std::logic_error("unreachable row-normalised function");
}

// The same with the function chosen at run time (references and tests).
inline void evaluate_row(RowNormalised f, double x, const RowConstants& k, double& g, double& dg) {
  with_row_normalised(f, [&]<RowNormalised F>() { evaluate_row<F>(x, k, g, dg); });
}

// ϕ = row-normalised g applied to logit_scale · M.
struct RowActivation {
  RowNormalised fn = RowNormalised::softmax;
  double logit_scale = 1.0;
  std::shared_ptr<const FormulaTape> formula{};  // g of fn = formula
};

// Transforms that compose with any activation. Prenorm (PERIODIC §3.6, as CLAIMS.md restates the
// reference code) standardises each row of the activation's argument x = c·m (c the logit scale):
//   paper and layer file (periodic_softmax.py, after the 1/√d):  z = (x − mean)/sqrt(unbiased var + prenorm_eps)
//   released demo.py (map_norm before the 1/√d):                   z = c·(m − mean)/sqrt(unbiased var of m + prenorm_eps)
// prenorm_before_scaling picks the second. Both are a(x − x̄)/sqrt(var x + a²·eps) with a = 1 or c.
// qk-layernorm (RELU) applies LayerNorm without affine over the d head dimensions to every q_i = x_iQ
// and k_j = x_jK before the dot product; its eps is timm's ViT default.
struct Transforms {
  bool prenorm = false;
  bool prenorm_before_scaling = false;  // with prenorm: demo.py's placement
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
  std::string name = "poly";  // a name in activation_names(), or expr / rowexpr with `formula`
  int p = 3;
  KScale k{};
  Convention convention = Convention::inside;
  double alpha = 1.0;  // the L^-alpha of the RELU paper's h(S)/L^alpha, L = N
  Transforms transforms{};
  std::shared_ptr<const Formula> formula{};  // h of "expr:h" (ϕ = h(S)) or g of "rowexpr:g" (ϕ = g/Σg)
  FormulaParameters params{};                // the formula's parameters by name

  // "name" or "name+prenorm", "name+prenorm-released", "name+qkln", "name+prenorm+qkln"; the name must be
  // registered and at most one prenorm given. "expr:FORMULA" and "rowexpr:FORMULA" take the rest as the formula
  // (no transforms), refused with FormulaError where malformed.
  static ActivationSpec parse(const std::string& s);
  Activation resolve(Index N, Index d) const;
  std::string label() const;  // e.g. "x^3/sqrtN (inside)", "relu/N^1", "softmax+prenorm", "expr:x^3/sqrt(N)"
  std::string key() const;    // every parameter, for caches
  void validate() const;      // throws std::invalid_argument naming the parameter
  void validate(Index N, Index d) const;  // and that the transforms suit the shape
};

// "a=0.5" of --param into `params`; throws std::invalid_argument naming the flag.
void parse_formula_parameter(const std::string& assignment, FormulaParameters& params);

// A list of activations split at the commas outside parentheses, so that "softmax,expr:max(x,0)" is two.
std::vector<std::string> split_activation_list(const std::string& list);

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
const ActivationInfo& find_activation(const std::string& name);  // throws on unknown names; knows expr and rowexpr

}  // namespace attnlab
