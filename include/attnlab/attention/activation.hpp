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
  friend bool operator==(const KScale&, const KScale&) = default;
};

// ϕ(m) = out_scale · h(logit_scale · m); the activation's argument is S = logit_scale · m.
struct ElementwiseActivation {
  Elementwise fn = Elementwise::power;
  int p = 1;  // for x^p
  double logit_scale = 1.0;
  double out_scale = 1.0;
  std::shared_ptr<const FormulaTape> formula{};  // h of fn = formula
};

// Row-normalised ϕ_j = g(x_j) / Σ_l g(x_l) over a row x: the functions of row_normalised_functions.def (softmax,
// g = exp; the PERIODIC paper's alternatives, as restated in CLAIMS.md; uniform, g = 1), then a user's `rowexpr:`
// formula (its g evaluated over a row by its tape).
enum class RowNormalised {
#define ATTNLAB_ROW_NORMALISED(fn, name, family, description, ...) fn,
#include <attnlab/attention/row_normalised_functions.def>
  formula
};

// What g needs besides x: softmax's g is taken relative to `shift` (the row maximum; the factor cancels
// in g/Σg); demo.py's `-released` definitions apply the phase or the sine to the unscaled logit m = x/c, so they read
// the logit scale c.
struct RowConstants {
  double shift = 0.0;
  double logit_scale = 1.0;
};

// g(x) and g'(x), by the entry's body.
template <RowNormalised F>
inline void evaluate_row(double x, const RowConstants& k, double& g, double& dg) {
  static_assert(F != RowNormalised::formula, "a formula's g is evaluated by its tape");
#define ATTNLAB_ROW_NORMALISED(fn, name, family, description, ...) \
  if constexpr (F == RowNormalised::fn) __VA_ARGS__ else
#include <attnlab/attention/row_normalised_functions.def>
  {}
}

// h(s) and h'(s) with the function chosen at run time (references and tests).
inline void evaluate(Elementwise f, int p, double s, double& h, double& dh) {
  with_elementwise(f, p, [&]<Elementwise F, int P>() { evaluate<F, P>(s, p, h, dh); });
}

template <class Visit>
decltype(auto) with_row_normalised(RowNormalised f, Visit&& visit) {
  switch (f) {
#define ATTNLAB_ROW_NORMALISED(fn, name, family, description, ...) \
  case RowNormalised::fn:                                          \
    return visit.template operator()<RowNormalised::fn>();
#include <attnlab/attention/row_normalised_functions.def>
    case RowNormalised::formula:
      throw std::invalid_argument("a formula activation runs on the cpu backend's array paths only");
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
//   released demo.py (map_norm before the 1/√d):                   z = c·(m − mean)/sqrt(unbiased var of m +
//   prenorm_eps)
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

// The paper whose claims check an activation: a claim family iterates the registry's entries of its family.
enum class ActivationFamily {
  poly,               // POLY's x^p/k
  softmax,            // the reference every paper compares with
  relu,               // the RELU paper's h(S)/N^alpha
  repoly,             // REPOLY Table 5's further h
  periodic,           // the PERIODIC paper's g, as its paper and layer file define them
  periodic_released,  // their definitions in the paper's released training code (demo.py), named `-released`
  control,            // the trainer's content-free controls
  user,               // a user's formula, expr: or rowexpr:, outside the registry
};

// One entry of elementwise_functions.def or row_normalised_functions.def, or the learned-scale variant of x^p/k.
struct ActivationInfo {
  std::string name;
  std::string description;
  ActivationFamily family;
  bool uses_p;      // x^p/k: takes --p, --k and --convention
  bool uses_alpha;  // h(S)/N^alpha: takes --alpha
  Elementwise fn;
  bool row_normalised = false;
  RowNormalised row = RowNormalised::softmax;
  bool learned_scale = false;  // x^p·θ with θ = 1/k trained (--k gives its initial value)
};
const std::vector<ActivationInfo>& activation_registry();
// The registered names of a family, in the registry's order.
std::vector<std::string> activation_names(ActivationFamily family);
const ActivationInfo& find_activation(const std::string& name);  // throws on unknown names; knows expr and rowexpr

}  // namespace attnlab
