#pragma once
// Attention activations ϕ applied to the logits M = X Q Kᵀ Xᵀ (unscaled).
// Elementwise activations act entry by entry; row-normalised ones act on each row.
#include <attnlab/core/types.hpp>

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

// ϕ(m) = out_scale · (logit_scale · m)^p; the activation's argument is S = logit_scale · m.
struct PowerActivation {
  int p = 1;
  double logit_scale = 1.0;
  double out_scale = 1.0;
};

// ϕ = row-wise softmax(logit_scale · M).
struct SoftmaxActivation {
  double logit_scale = 1.0;
};

using Activation = std::variant<PowerActivation, SoftmaxActivation>;

// An activation as the user names it, before N and d fix its constants.
struct ActivationSpec {
  std::string name = "poly";  // a name in activation_names()
  int p = 3;
  KScale k{};
  Convention convention = Convention::inside;

  Activation resolve(Index N, Index d) const;
  std::string label() const;  // e.g. "x^3/sqrtN (inside)"
  void validate() const;      // throws std::invalid_argument naming the parameter
};

struct ActivationInfo {
  std::string name;
  std::string description;
  bool uses_p;  // x^p/k: takes --p and --k
};
const std::vector<ActivationInfo>& activation_registry();
const ActivationInfo& find_activation(const std::string& name);  // throws on unknown names

}  // namespace attnlab
