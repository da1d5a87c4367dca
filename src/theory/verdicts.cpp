#include <attnlab/theory/verdicts.hpp>

#include <cmath>

namespace attnlab {

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::holds: return "holds";
    case Verdict::violated: return "violated";
    case Verdict::loose: return "loose";
    case Verdict::inexact: return "inexact";
    case Verdict::inconclusive: return "inconclusive";
  }
  return "?";
}

Verdict growth_verdict(const PowerLawFit& fit, double a) {
  if (!std::isfinite(fit.exponent) || fit.ci_hi - fit.ci_lo > tolerances.exponent_ci_max) return Verdict::inconclusive;
  if (fit.ci_lo > a + tolerances.exponent) return Verdict::violated;
  if (fit.ci_hi < a - tolerances.exponent) return Verdict::loose;
  return Verdict::holds;
}

Verdict bound_verdict(double max_ratio) {
  if (!std::isfinite(max_ratio)) return Verdict::inconclusive;
  if (max_ratio > 1 + 1e-12) return Verdict::violated;
  if (max_ratio < tolerances.bound_loose) return Verdict::loose;
  return Verdict::holds;
}

double relative_error(double approx, double reference) { return (approx - reference) / std::abs(reference); }

Verdict closed_form_verdict(double formula, const Estimate& mc) {
  if (!mc.finite()) return Verdict::inconclusive;
  const bool outside = formula < mc.ci_lo || formula > mc.ci_hi;
  if (outside && std::abs(relative_error(formula, mc.mean)) > tolerances.closed_form) return Verdict::inexact;
  return Verdict::holds;
}

}  // namespace attnlab
