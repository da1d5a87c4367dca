#include <attnlab/theory/verdicts.hpp>

#include <algorithm>
#include <cmath>

namespace attnlab {

Verdict growth_verdict(const PowerLawFit& fit, double a, const Thresholds& t) {
  if (!std::isfinite(fit.exponent) || fit.ci_hi - fit.ci_lo > t(kExponentCiMax)) return Verdict::inconclusive;
  const double tol = t(kExponentTolerance);
  if (fit.ci_lo > a + tol) return Verdict::violated;
  if (fit.ci_hi < a - tol) return Verdict::loose;
  return Verdict::holds;
}

Verdict bound_verdict(double max_ratio, const Thresholds& t, const Threshold& rounding) {
  if (!std::isfinite(max_ratio)) return Verdict::inconclusive;
  if (max_ratio > 1 + t(rounding)) return Verdict::violated;
  if (max_ratio < 1 - t(kBoundSlack)) return Verdict::loose;
  return Verdict::holds;
}

Verdict equivalence_verdict(double lo, double hi, double band_lo, double band_hi) {
  if (!(std::isfinite(lo) && std::isfinite(hi))) return Verdict::inconclusive;
  if (band_lo <= lo && hi <= band_hi) return Verdict::holds;
  if (hi < band_lo || lo > band_hi) return Verdict::violated;
  return Verdict::inconclusive;
}

double relative_error(double approx, double reference) { return (approx - reference) / std::abs(reference); }

Verdict closed_form_verdict(double formula, const Estimate& mc, const Thresholds& t) {
  if (!mc.finite()) return Verdict::inconclusive;
  const bool outside = formula < mc.ci_lo || formula > mc.ci_hi;
  if (outside && std::abs(relative_error(formula, mc.mean)) > t(kClosedForm)) return Verdict::inexact;
  return Verdict::holds;
}

namespace {
int severity(Verdict v) {
  switch (v) {
    case Verdict::violated: return 4;
    case Verdict::inexact: return 3;
    case Verdict::inconclusive: return 2;
    case Verdict::loose: return 1;
    case Verdict::holds: return 0;
    case Verdict::identity: return 0;
  }
  return 0;
}
}  // namespace

Verdict worst(Verdict a, Verdict b) { return severity(a) >= severity(b) ? a : b; }

Curve select_curve(const std::vector<ResultRow>& rows, const std::string& quantity, const std::string& activation,
                   const std::string& grid) {
  Curve c;
  for (const auto& r : rows) {
    const bool on_grid = grid.empty() || extra_value(r, "grid") == grid;
    if (!on_grid || r.quantity != quantity || r.activation != activation) continue;
    c.x.push_back(double(r.N));
    c.y.push_back(r.value.mean);
    c.se.push_back(r.value.se);
    c.lo.push_back(r.value.ci_lo);
    c.hi.push_back(r.value.ci_hi);
    c.nonfinite += r.value.nonfinite;
    c.rows.push_back(r);
  }
  return c;
}

}  // namespace attnlab
