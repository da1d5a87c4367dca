#include <attnlab/core/text.hpp>
#include <attnlab/mc/sweep.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace attnlab {
std::string describe_quantity(const std::string& quantity) {
  static const std::map<std::string, std::string> names{{"frob", "||phi(S)||_F"},
                                                        {"frob2", "||phi(S)||_F^2"},
                                                        {"jac", "||d phi(S)/dS||_F"},
                                                        {"jac2", "||d phi(S)/dS||_F^2"},
                                                        {"qgrad", "||d phi(S)/dQ||_F"},
                                                        {"qgrad2", "||d phi(S)/dQ||_F^2"},
                                                        {"kgrad", "||d phi(S)/dK||_F"},
                                                        {"kgrad2", "||d phi(S)/dK||_F^2"},
                                                        {"mean_weight", "mean attention weight"},
                                                        {"row_sum", "row sum of phi(S)"},
                                                        {"row_sum2", "squared row sum of phi(S)"}};
  const auto it = names.find(quantity);
  return it == names.end() ? quantity : it->second;
}

void add_reference_slopes(Figure& f, const std::vector<double>& slopes) {
  double x_lo = std::numeric_limits<double>::infinity(), x_hi = 0;
  for (const auto& s : f.series)
    for (double x : s.x) x_lo = std::min(x_lo, x), x_hi = std::max(x_hi, x);
  double log_sum = 0;
  int count = 0;
  for (const auto& s : f.series)
    for (std::size_t i = 0; i < s.x.size(); ++i)
      if (s.x[i] == x_lo && s.y[i] > 0 && std::isfinite(s.y[i])) log_sum += std::log(s.y[i]), ++count;
  if (count == 0 || !(x_hi > x_lo)) return;
  const double y_lo = std::exp(log_sum / count);
  for (double slope : slopes)
    f.series.push_back({.label = text("N^", sig(slope, 3), " (reference)"),
                        .x = {x_lo, x_hi},
                        .y = {y_lo, y_lo * std::pow(x_hi / x_lo, slope)},
                        .reference = true});
}

SweepResult run_sweep(const SweepSpec& spec, ResultCache* cache,
                      const std::function<ProgressFn(const std::string&)>& progress) {
  SweepResult result;
  for (const auto& e : spec.ensembles) {
    const AttentionMcConfig config{
        .ensemble = e,
        .activations = spec.activations,
        .seed = spec.seed,
        .trials = spec.trials,
        .precision = spec.precision,
        .study = spec.study,
        .backend = spec.backend,
        .gradients = std::any_of(spec.quantities.begin(), spec.quantities.end(), is_gradient_quantity),
        .exact_mean = spec.exact_mean};
    auto rows = cached(cache, cache_key(config),
                       [&] { return run_attention_norms(config, progress ? progress(e.describe()) : ProgressFn{}); });
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
  // What each figure's curves share goes in its title; their labels keep only what tells them apart.
  std::map<std::string, std::set<std::tuple<Index, Index, double, double>>> settings;
  for (const auto& [key, members] : groups) {
    const auto& [quantity, activation, D, d, sigma_x, sigma_t] = key;
    settings[quantity].insert({D, d, sigma_x, sigma_t});
  }
  std::map<std::string, Figure> figures;
  std::vector<ResultRow> fits;
  for (const auto& [key, members] : groups) {
    const auto& [quantity, activation, D, d, sigma_x, sigma_t] = key;
    const bool shared = settings[quantity].size() == 1;
    const std::string setting = text(
        "D=", D, ", d=", d, sigma_x == 1 && sigma_t == 1 ? "" : text(", sigma_x=", sigma_x, ", sigma_t=", sigma_t));
    Series s{.label = shared ? activation : text(activation, ", ", setting)};
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
      fig = {.name = quantity == spec.fitted.front() ? spec.study : spec.study + "_" + quantity,
             .title = text("E ", describe_quantity(quantity), " against N (", spec.study, shared ? ", " + setting : "",
                           "; mean over ", spec.trials, " trials)"),
             .xlabel = "N (sequence length, tokens)",
             .ylabel = text("E ", describe_quantity(quantity), " with 95% CI"),
             .logx = true,
             .logy = true};
    if (members.size() >= 3 && finite) {
      try {
        const auto fit = fit_power_law(s.x, s.y, se);
        s.fit = SeriesFit{.law = fit};
        ResultRow row = *members.front();
        row.quantity = quantity + "_exponent";
        row.N = 0;
        row.value = Estimate{.count = static_cast<std::int64_t>(fit.points),
                             .nonfinite = 0,
                             .mean = fit.exponent,
                             .se = fit.exponent_se,
                             .ci_lo = fit.ci_lo,
                             .ci_hi = fit.ci_hi};
        row.extra.push_back({"N_range", text(s.x.front(), "-", s.x.back())});
        row.extra.push_back({"prefactor", fit.prefactor});
        fits.push_back(std::move(row));
      } catch (const std::domain_error&) {
        // e.g. one trial per point: no standard errors to weigh the fit
      }
    }
    fig.series.push_back(std::move(s));
  }
  result.rows.insert(result.rows.end(), fits.begin(), fits.end());
  for (auto& [q, f] : figures) {
    add_reference_slopes(f, spec.reference_slopes);
    result.figures.push_back(std::move(f));
  }
  return result;
}

}  // namespace attnlab
