#include <attnlab/attention/activation.hpp>
#include <attnlab/core/text.hpp>

#include <cmath>
#include <stdexcept>

namespace attnlab {

Convention parse_convention(const std::string& s) {
  if (s == "inside") return Convention::inside;
  if (s == "outside") return Convention::outside;
  if (s == "none") return Convention::none;
  throw std::invalid_argument(text("convention must be inside, outside or none (got '", s, "')"));
}

std::string to_string(Convention c) {
  switch (c) {
    case Convention::inside: return "inside";
    case Convention::outside: return "outside";
    case Convention::none: return "none";
  }
  return "?";
}

double KScale::resolve(Index N) const { return sqrt_n ? std::sqrt(static_cast<double>(N)) : value; }

std::string KScale::str() const { return sqrt_n ? "sqrtN" : text(value); }

KScale KScale::parse(const std::string& s) {
  if (s == "sqrtN") return {true, 0.0};
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != s.size() || !(v > 0) || !std::isfinite(v))
    throw std::invalid_argument(text("k must be a positive number or sqrtN (got '", s, "')"));
  return {false, v};
}

void evaluate(Elementwise f, int p, double s, double& h, double& dh) {
  using E = Elementwise;
  switch (f) {
    case E::power: return evaluate<E::power>(s, p, h, dh);
    case E::relu: return evaluate<E::relu>(s, p, h, dh);
    case E::relu2: return evaluate<E::relu2>(s, p, h, dh);
    case E::gelu: return evaluate<E::gelu>(s, p, h, dh);
    case E::softplus: return evaluate<E::softplus>(s, p, h, dh);
    case E::identity: return evaluate<E::identity>(s, p, h, dh);
    case E::relu6: return evaluate<E::relu6>(s, p, h, dh);
    case E::sigmoid: return evaluate<E::sigmoid>(s, p, h, dh);
    case E::elu: return evaluate<E::elu>(s, p, h, dh);
    case E::tanh: return evaluate<E::tanh>(s, p, h, dh);
    case E::exp: return evaluate<E::exp>(s, p, h, dh);
  }
}

const std::vector<ActivationInfo>& activation_registry() {
  using E = Elementwise;
  using R = RowNormalised;
  static const std::vector<ActivationInfo> registry{
      {"poly", "x^p/k applied to the logits, 1/sqrt(d) placed by --convention", true, false, E::power},
      {"softmax", "row-wise softmax of S = XQK^TX^T/sqrt(d)", false, false, E::power, true, R::softmax},
      {"sinmax-constant", "(1 + sin 10x)/sum over the row (PERIODIC demo code)", false, false, E::power, true,
       R::sinmax_constant},
      {"sinmax", "sin x/sum over the row", false, false, E::power, true, R::sinmax},
      {"cosmax", "cos x/sum over the row", false, false, E::power, true, R::cosmax},
      {"sin2max", "sin^2 x/sum over the row", false, false, E::power, true, R::sin2max},
      {"sin2max-shifted", "sin^2(x + pi/4)/sum over the row", false, false, E::power, true, R::sin2max_shifted},
      {"sirenmax", "(sin x + 1)/(2 - 2 sin x)/sum over the row", false, false, E::power, true, R::sirenmax},
      {"sinsoftmax", "softmax(sin x)", false, false, E::power, true, R::sinsoftmax},
      {"relu", "relu(S)/N^alpha, S = XQK^TX^T/sqrt(d)", false, true, E::relu},
      {"relu2", "relu(S)^2/N^alpha", false, true, E::relu2},
      {"gelu", "gelu(S)/N^alpha, exact erf form", false, true, E::gelu},
      {"softplus", "log(1 + e^S)/N^alpha", false, true, E::softplus},
      {"identity", "S/N^alpha", false, true, E::identity},
      {"relu6", "min(max(S, 0), 6)/N^alpha", false, true, E::relu6},
      {"sigmoid", "sigmoid(S)/N^alpha", false, true, E::sigmoid},
      {"elu", "elu(S)/N^alpha (REPOLY Table 5)", false, true, E::elu},
      {"tanh", "tanh(S)/N^alpha (REPOLY Table 5)", false, true, E::tanh},
      {"exp", "e^S/N^alpha (REPOLY Table 5)", false, true, E::exp},
  };
  return registry;
}

const ActivationInfo& find_activation(const std::string& name) {
  for (const auto& info : activation_registry())
    if (info.name == name) return info;
  std::string known;
  for (const auto& info : activation_registry()) known += (known.empty() ? "" : ", ") + info.name;
  throw std::invalid_argument(text("activation: unknown name '", name, "' (known: ", known, ")"));
}

void ActivationSpec::validate() const {
  const auto& info = find_activation(name);
  if (info.uses_alpha && !(alpha >= 0 && std::isfinite(alpha)))
    throw std::invalid_argument(text("alpha must be a finite number >= 0 (got ", alpha, ")"));
  // x^p overflows double for |x| > 1 long before p = 64; larger p only burns time.
  if (info.uses_p && (p < 1 || p > 64))
    throw std::invalid_argument(text("p must be a positive integer no larger than 64 (got ", p, ")"));
}

Activation ActivationSpec::resolve(Index N, Index d) const {
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(d));
  const auto& info = find_activation(name);
  if (info.row_normalised) return RowActivation{info.row, inv_sqrt_d};
  if (info.uses_alpha) return ElementwiseActivation{info.fn, 1, inv_sqrt_d, std::pow(double(N), -alpha)};
  const double inv_k = 1.0 / k.resolve(N);
  switch (convention) {
    case Convention::inside: return ElementwiseActivation{Elementwise::power, p, inv_sqrt_d, inv_k};
    case Convention::outside: return ElementwiseActivation{Elementwise::power, p, 1.0, inv_sqrt_d * inv_k};
    case Convention::none: return ElementwiseActivation{Elementwise::power, p, 1.0, inv_k};
  }
  throw std::logic_error("unreachable convention");
}

std::string ActivationSpec::label() const {
  if (find_activation(name).row_normalised) return name;
  if (find_activation(name).uses_alpha) return alpha == 0 ? name : text(name, "/N^", alpha);
  const std::string power = p == 1 ? "x" : text("x^", p);
  const std::string scale = k.sqrt_n ? "/sqrtN" : (k.value == 1.0 ? "" : "/" + k.str());
  return text(power, scale, " (", to_string(convention), ")");
}

}  // namespace attnlab
