#include "growth_sweep.hpp"

namespace attnlab::poly_claims {
namespace {

std::vector<ActivationSpec> growth_activations() {
  std::vector<ActivationSpec> acts;
  for (int p : {1, 2, 3})
    for (Convention c : {Convention::inside, Convention::outside})
      for (const char* k : {"1", "sqrtN"})
        acts.push_back({.name = "poly", .p = p, .k = KScale::parse(k), .convention = c});
  return acts;
}

}  // namespace

std::vector<Grid> growth_grids(bool quick) {
  if (quick) return {{"A", 16, 16, 1.0, 1.0, {8, 16, 32, 64, 128}}, {"B", 8, 4, 0.5, 2.0, {8, 16, 32, 64, 128}}};
  return {{"A", 64, 64, 1.0, 1.0, {16, 32, 64, 128, 256, 512, 1024, 2048}},
          {"B", 16, 8, 0.5, 2.0, {16, 32, 64, 128, 256, 512, 1024, 2048}}};
}

std::vector<ResultRow> growth_sweep(const ClaimContext& ctx) {
  std::vector<ResultRow> rows;
  for (const auto& g : growth_grids(ctx.quick))
    for (Index N : g.N) {
      AttentionMcConfig c{.ensemble = {.N = N, .D = g.D, .d = g.d, .sigma_x = g.sigma_x, .sigma_t = g.sigma_t},
                          .activations = growth_activations(),
                          .seed = ctx.seed,
                          .trials = ctx.trials_or(64, 16),
                          .precision = Precision::float64,
                          .study = "verify"};
      auto part = ctx.attention_norms(c, text("growth grid ", g.name, " N=", N));
      for (auto& r : part) r.extra.push_back({"grid", g.name});
      rows.insert(rows.end(), part.begin(), part.end());
    }
  return rows;
}

// An estimate moved to `target` as if measured with 100 times the trials: relative errors a tenth as large.
void measured_precisely_at(Estimate& v, double target) {
  const double f = target / v.mean / 10;
  v.se *= f;
  v.ci_lo = target + (v.ci_lo - v.mean) * f;
  v.ci_hi = target + (v.ci_hi - v.mean) * f;
  v.mean = target;
}

}  // namespace attnlab::poly_claims
