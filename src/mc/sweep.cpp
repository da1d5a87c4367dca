#include <attnlab/core/text.hpp>
#include <attnlab/mc/sweep.hpp>

#include <algorithm>
#include <map>
#include <tuple>

namespace attnlab {

SweepResult run_sweep(const SweepSpec& spec, ResultCache* cache,
                      const std::function<ProgressFn(const std::string&)>& progress) {
  SweepResult result;
  for (const auto& e : spec.ensembles) {
    const AttentionMcConfig config{e, spec.activations, spec.seed, spec.trials, spec.precision, spec.study, spec.backend};
    auto rows = cached(cache, cache_key(config), [&] {
      return run_attention_norms(config, progress ? progress(e.describe()) : ProgressFn{});
    });
    for (auto& r : rows)
      if (std::find(spec.quantities.begin(), spec.quantities.end(), r.quantity) != spec.quantities.end())
        result.rows.push_back(std::move(r));
  }
  // One fit per curve: the points of a (quantity, activation, D, d, sigma) over N.
  using Key = std::tuple<std::string, std::string, Index, Index, double, double>;
  std::map<Key, std::vector<const ResultRow*>> groups;
  for (const auto& r : result.rows)
    if (std::find(spec.fitted.begin(), spec.fitted.end(), r.quantity) != spec.fitted.end())
      groups[{r.quantity, r.activation, r.D, r.d, r.sigma_x, r.sigma_t}].push_back(&r);
  std::map<std::string, Figure> figures;
  std::vector<ResultRow> fits;
  for (const auto& [key, members] : groups) {
    const auto& [quantity, activation, D, d, sigma_x, sigma_t] = key;
    Series s{text(activation, ", D=", D, ", d=", d, sigma_x == 1 && sigma_t == 1 ? "" : text(", sx=", sigma_x, ", st=", sigma_t)),
             {}, {}, {}, {}, true};
    std::vector<double> se;
    bool finite = true;
    for (const auto* r : members) {
      finite &= r->value.finite();
      s.x.push_back(double(r->N));
      s.y.push_back(r->value.mean);
      s.lo.push_back(r->value.ci_lo);
      s.hi.push_back(r->value.ci_hi);
      se.push_back(r->value.se);
    }
    auto& fig = figures[quantity];
    if (fig.name.empty())
      fig = {quantity == spec.fitted.front() ? spec.study : spec.study + "_" + quantity,
             text("E ", quantity, " over N (", spec.study, ")"), "N", text(quantity, ": mean with 95% CI"), true, true, {}, {}};
    fig.series.push_back(s);
    if (members.size() < 3 || !finite) continue;
    PowerLawFit fit;
    try {
      fit = fit_power_law(s.x, s.y, se);
    } catch (const std::domain_error&) {
      continue;  // e.g. one trial per point: no standard errors to weigh the fit
    }
    ResultRow row = *members.front();
    row.quantity = quantity + "_exponent";
    row.N = 0;
    row.value = Estimate{static_cast<std::int64_t>(fit.points), 0, fit.exponent, fit.exponent_se, fit.ci_lo, fit.ci_hi};
    row.extra.push_back({"N_range", text(s.x.front(), "-", s.x.back())});
    row.extra.push_back({"prefactor", text(fit.prefactor)});
    fits.push_back(std::move(row));
  }
  result.rows.insert(result.rows.end(), fits.begin(), fits.end());
  for (auto& [q, f] : figures) result.figures.push_back(std::move(f));
  return result;
}

}  // namespace attnlab
