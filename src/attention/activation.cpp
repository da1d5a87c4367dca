#include <attnlab/attention/activation.hpp>
#include <attnlab/core/text.hpp>

#include <algorithm>
#include <charconv>
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

const std::vector<ActivationInfo>& activation_registry() {
  using F = ActivationFamily;
  using S = ElementwiseScale;
  static const std::vector<ActivationInfo> registry = [] {
    std::vector<ActivationInfo> r{
#define ATTNLAB_ELEMENTWISE(fn, name, scale, family, float_tiles, description, ...) \
  {name, description, F::family, S::scale == S::over_k, S::scale == S::over_n_alpha, Elementwise::fn},
#include <attnlab/attention/elementwise_functions.def>
#define ATTNLAB_ROW_NORMALISED(fn, name, family, description, ...) \
  {name, description, F::family, false, false, Elementwise::power, true, RowNormalised::fn},
#include <attnlab/attention/row_normalised_functions.def>
    };
    // A way of training x^p/k, not a function of its own: it follows poly.
    const auto poly = std::find_if(r.begin(), r.end(), [](const ActivationInfo& info) { return info.name == "poly"; });
    r.insert(poly + 1, ActivationInfo{"poly-learned",
                                      "x^p * theta with theta a trained scale initialised at 1/k (same value as poly "
                                      "at init)",
                                      F::poly, true, false, Elementwise::power, false, RowNormalised::softmax, true});
    return r;
  }();
  return registry;
}

std::vector<std::string> activation_names(ActivationFamily family) {
  std::vector<std::string> names;
  for (const auto& info : activation_registry())
    if (info.family == family) names.push_back(info.name);
  return names;
}

namespace {
// Outside the registry: they are families, not activations, and need their formula to be one.
const ActivationInfo kElementwiseFormula{
    "expr", "h(S) written as a formula: expr:x^3/sqrt(N)", ActivationFamily::user, false, false, Elementwise::formula};
const ActivationInfo kRowFormula{"rowexpr",
                                 "g(S)/sum over the row of g, g written as a formula: rowexpr:exp(x)",
                                 ActivationFamily::user,
                                 false,
                                 false,
                                 Elementwise::power,
                                 true,
                                 RowNormalised::formula};
}  // namespace

const ActivationInfo& find_activation(const std::string& name) {
  for (const auto& info : activation_registry())
    if (info.name == name) return info;
  if (name == kElementwiseFormula.name) return kElementwiseFormula;
  if (name == kRowFormula.name) return kRowFormula;
  std::string known;
  for (const auto& info : activation_registry()) known += (known.empty() ? "" : ", ") + info.name;
  throw std::invalid_argument(
      text("activation: unknown name '", name, "' (known: ", known, ", expr:FORMULA, rowexpr:FORMULA)"));
}

double logit_scale(const Activation& a) {
  return std::visit([](const auto& f) { return f.logit_scale; }, a.fn);
}

ActivationSpec ActivationSpec::parse(const std::string& s) {
  ActivationSpec spec;
  for (const std::string family : {"expr", "rowexpr"})
    if (s.rfind(family + ":", 0) == 0) {
      spec.name = family;
      spec.formula = std::make_shared<const Formula>(Formula::parse(s.substr(family.size() + 1)));
      return spec;
    }
  std::size_t start = 0, plus = s.find('+');
  spec.name = s.substr(0, plus);
  find_activation(spec.name);
  while (plus != std::string::npos) {
    start = plus + 1;
    plus = s.find('+', start);
    const auto transform = s.substr(start, plus == std::string::npos ? std::string::npos : plus - start);
    if (transform == "prenorm" || transform == "prenorm-released") {
      if (spec.transforms.prenorm) throw std::invalid_argument(text("activation: more than one prenorm in '", s, "'"));
      spec.transforms.prenorm = true;
      spec.transforms.prenorm_before_scaling = transform == "prenorm-released";
    } else if (transform == "qkln") {
      spec.transforms.qk_layernorm = true;
    } else {
      throw std::invalid_argument(text("activation: unknown transform '", transform, "' in '", s,
                                       "' (known: prenorm, prenorm-released, qkln)"));
    }
  }
  return spec;
}

void ActivationSpec::validate() const {
  const auto& info = find_activation(name);
  if (info.uses_alpha && !(alpha >= 0 && std::isfinite(alpha)))
    throw std::invalid_argument(text("alpha must be a finite number >= 0 (got ", alpha, ")"));
  // x^p overflows double for |x| > 1 long before p = 64; larger p only burns time.
  if (info.uses_p && (p < 1 || p > 64))
    throw std::invalid_argument(text("p must be a positive integer no larger than 64 (got ", p, ")"));
  if (!(transforms.prenorm_eps > 0) || !(transforms.qk_eps > 0))
    throw std::invalid_argument("prenorm and qk-layernorm eps must be positive");
  if (formula)
    for (const auto& p : formula->parameters())
      if (!params.contains(p))
        throw std::invalid_argument(
            text("param: the parameter '", p, "' of ", label(), " has no value (give --param ", p, "=VALUE)"));
}

void parse_formula_parameter(const std::string& assignment, FormulaParameters& params) {
  const auto eq = assignment.find('=');
  const std::string name = assignment.substr(0, eq);
  double value = 0;
  const char* end = assignment.data() + assignment.size();
  const bool number = eq != std::string::npos && std::from_chars(assignment.data() + eq + 1, end, value).ptr == end &&
                      eq + 1 < assignment.size();
  if (name.empty() || !number || !std::isfinite(value))
    throw std::invalid_argument(text("param must be NAME=NUMBER with a finite number (got '", assignment, "')"));
  params[name] = value;
}

std::vector<std::string> split_activation_list(const std::string& list) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char c : list) {
    depth += c == '(' ? 1 : c == ')' ? -1 : 0;
    if (c == ',' && depth <= 0) parts.emplace_back();
    else parts.back() += c;
  }
  return parts;
}

namespace {

ActivationFunction resolve_function(const ActivationSpec& spec, const ActivationInfo& info, Index N, Index d) {
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(d));
  if (spec.formula) {
    auto tape = spec.formula->compile(double(N), double(d), spec.params);
    if (info.row_normalised) return RowActivation{RowNormalised::formula, inv_sqrt_d, std::move(tape)};
    return ElementwiseActivation{Elementwise::formula, 1, inv_sqrt_d, 1.0, std::move(tape)};
  }
  if (info.row_normalised) return RowActivation{info.row, inv_sqrt_d};
  if (info.uses_alpha) return ElementwiseActivation{info.fn, 1, inv_sqrt_d, std::pow(double(N), -spec.alpha)};
  if (!info.uses_p) return ElementwiseActivation{info.fn, 1, inv_sqrt_d, 1.0};  // off: h alone, no constant
  const double inv_k = 1.0 / spec.k.resolve(N);
  switch (spec.convention) {
    case Convention::inside: return ElementwiseActivation{Elementwise::power, spec.p, inv_sqrt_d, inv_k};
    case Convention::outside: return ElementwiseActivation{Elementwise::power, spec.p, 1.0, inv_sqrt_d * inv_k};
    case Convention::none: return ElementwiseActivation{Elementwise::power, spec.p, 1.0, inv_k};
  }
  throw std::logic_error("unreachable convention");
}

std::string shortest(double v) {
  char buf[32];
  return {buf, std::to_chars(buf, buf + sizeof buf, v).ptr};
}

// "a=0.5, b=2"
std::string parameter_list(const FormulaParameters& params, const Formula& f) {
  std::string out;
  for (const auto& name : f.parameters())
    if (const auto it = params.find(name); it != params.end())
      out += text(out.empty() ? "" : ", ", name, "=", shortest(it->second));
  return out;
}

std::string transform_suffix(const Transforms& t) {
  return text(t.prenorm ? (t.prenorm_before_scaling ? "+prenorm-released" : "+prenorm") : "",
              t.qk_layernorm ? "+qkln" : "");
}

}  // namespace

void ActivationSpec::validate(Index N, Index d) const {
  validate();
  if (transforms.prenorm && N < 2)
    throw std::invalid_argument(text("N must be at least 2 for prenorm, which standardises rows (got ", N, ")"));
  if (transforms.qk_layernorm && d < 2)
    throw std::invalid_argument(text("d must be at least 2 for qk-layernorm, which normalises over d (got ", d, ")"));
}

Activation ActivationSpec::resolve(Index N, Index d) const {
  return {resolve_function(*this, find_activation(name), N, d), transforms};
}

std::string ActivationSpec::label() const {
  if (formula) {
    const auto values = parameter_list(params, *formula);
    return text(name, ":", formula->canonical(), values.empty() ? "" : " (" + values + ")");
  }
  const auto& info = find_activation(name);
  const auto suffix = transform_suffix(transforms);
  if (info.row_normalised) return name + suffix;
  if (info.uses_alpha) return (alpha == 0 ? name : text(name, "/N^", alpha)) + suffix;
  if (!info.uses_p) return name + suffix;  // off: no constant to show
  const std::string power = p == 1 ? "x" : text("x^", p);
  if (info.learned_scale) return text(power, "*theta, theta0 = 1/", k.str(), " (", to_string(convention), ")", suffix);
  const std::string scale = k.sqrt_n ? "/sqrtN" : (k.value == 1.0 ? "" : "/" + k.str());
  return text(power, scale, " (", to_string(convention), ")", suffix);
}

std::string ActivationSpec::key() const {
  if (formula) return label();
  return text(name, ":p=", p, ":k=", k.str(), ":", to_string(convention), ":alpha=", alpha,
              transform_suffix(transforms), transforms.prenorm ? text(":eps=", transforms.prenorm_eps) : "",
              transforms.qk_layernorm ? text(":qkeps=", transforms.qk_eps) : "");
}

}  // namespace attnlab
