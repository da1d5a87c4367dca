#include <attnlab/study/study.hpp>

#include <algorithm>

namespace attnlab::study {

namespace {
template <class T>
std::vector<T> sorted_unique(std::vector<T> v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  return v;
}
}  // namespace

// Sorted and without repeats, so that curves run in N order and no configuration appears twice.
std::vector<EnsembleSpec> StudyOptions::ensembles() const {
  std::vector<EnsembleSpec> specs;
  for (Index n : sorted_unique(N))
    for (Index dd : sorted_unique(D))
      for (Index h : sorted_unique(d))
        for (double sx : sorted_unique(sigma_x))
          for (double st : sorted_unique(sigma_t)) specs.push_back({n, dd, h, sx, st});
  return specs;
}

std::vector<ActivationSpec> StudyOptions::activation_specs() const {
  std::vector<ActivationSpec> specs;
  const auto conv = parse_convention(convention);
  FormulaParameters values;
  for (const auto& assignment : params) parse_formula_parameter(assignment, values);
  for (const auto& name : activations) {
    auto spec = ActivationSpec::parse(name);
    spec.convention = conv;
    if (spec.formula) spec.params = values;
    const auto& info = find_activation(spec.name);
    if (info.uses_alpha) {
      for (double a : sorted_unique(alpha)) spec.alpha = a, specs.push_back(spec);
    } else if (!info.uses_p) {
      specs.push_back(spec);
    } else {
      for (int power : sorted_unique(p))
        for (const auto& scale : sorted_unique(k)) spec.p = power, spec.k = KScale::parse(scale), specs.push_back(spec);
    }
  }
  return specs;
}

bool StudyOptions::was_given(const std::string& flag) const {
  return std::find(given.begin(), given.end(), flag) != given.end();
}

ClaimContext claim_context(const StudyOptions& o, StudyContext& ctx) {
  ClaimContext claims{o.seed, o.quick, static_cast<std::uint32_t>(o.trials), ctx.cache,
                      [&ctx](const std::string& label) { return ctx.progress->task(label); }};
  claims.control_variates = !o.plain_means;
  return claims;
}

}  // namespace attnlab::study
