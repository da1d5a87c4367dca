#pragma once
// Verdict rules shared by the claims; the thresholds are stated in the report.
#include <attnlab/mc/statistics.hpp>
#include <attnlab/theory/claims.hpp>

#include <functional>
#include <string>
#include <vector>

namespace attnlab {

// The thresholds shared by the growth, bound and closed-form rules (origins in report.md).
inline const Threshold kExponentTolerance{
    "exponent_tolerance", 0.05,
    "not in the papers, which state O(N^a) only: chosen small against the half-integer steps between the "
    "exponents the papers distinguish (1 against 1/2); the x1/2 and x2 re-judgements show what it decides"};
inline const Threshold kExponentCiMax{
    "exponent_ci_max", 0.5,
    "an exponent interval wider than 0.5 cannot tell O(N^a) from O(N^(a +- 1/2)), the finest distinction the "
    "papers draw (O(N) against O(sqrt N) in POLY Cor 4.1)"};
inline const Threshold kBoundSlack{
    "bound_slack", 0.1,
    "not in the papers; a bound whose worst case found stays more than 10% below it is reported as loose, with "
    "its tight constant in the measured column"};
inline const Threshold kBoundRounding{
    "bound_rounding", 1e-12,
    "relative rounding allowance of a ratio computed in double precision (about 1e4 unit roundoffs)"};
inline const Threshold kClosedForm{
    "closed_form_rel_error", 0.02,
    "not in the papers, whose closed forms are stated with '=' or '~': a relative error within 2% is read "
    "as exact when the 95% interval alone would resolve differences below the formula's own rounding"};

// "O(N^a)": holds when the exponent's CI reaches within tolerance of a or contains it,
// violated when the CI lies above a + tol, loose when it lies below a − tol.
Verdict growth_verdict(const PowerLawFit& fit, double claimed_exponent, const Thresholds& t);

// A deterministic bound f ≤ C·g, given the largest ratio f/(C·g) found and the ratio's rounding allowance.
Verdict bound_verdict(double max_ratio, const Thresholds& t, const Threshold& rounding = kBoundRounding);

// bound_verdict's two edges as falsify crossings, for evidence whose last case `last_to(e, r)` sets to the ratio r and
// whose worst case `worst_to(e, r)` moves to r with the others in proportion: violated just above 1 + rounding with
// the others below 1, loose just below 1 − slack.
template <class Evidence>
std::vector<Crossing<Evidence>> bound_crossings(std::function<void(Evidence&, double)> last_to,
                                                std::function<void(Evidence&, double)> worst_to,
                                                const Threshold& rounding = kBoundRounding) {
  return {{&rounding, "the last input above the bound", Verdict::holds, Verdict::violated,
           [last_to](Evidence& e, double x) { last_to(e, 1 + x); }},
          {&kBoundSlack, "every input below the bound", Verdict::holds, Verdict::loose,
           [worst_to](Evidence& e, double x) { worst_to(e, 1 - x); }}};
}

// An equivalence test of a quantity claimed to lie in [band_lo, band_hi] (a training claim's "like sqrt(N)",
// "comparable"): holds when the 95% interval [lo, hi] lies inside the band, violated when it lies wholly outside, and
// inconclusive when it crosses an edge (not rejected is not shown) or is not finite.
Verdict equivalence_verdict(double lo, double hi, double band_lo, double band_hi);

// A closed form against Monte-Carlo: inexact when the estimate's CI excludes the formula
// and the relative error exceeds the tolerance.
Verdict closed_form_verdict(double formula, const Estimate& mc, const Thresholds& t);

double relative_error(double approx, double reference);

// The more severe of two verdicts: violated > inexact > inconclusive > loose > holds, identity.
Verdict worst(Verdict a, Verdict b);

// One activation's estimates of one quantity along N (rows in N order), ready to fit and plot.
struct Curve {
  std::vector<double> x, y, se, lo, hi;
  std::int64_t nonfinite = 0;
  std::vector<ResultRow> rows;
};
// Rows whose quantity and activation label match and whose extra column "grid" is `grid` (any if empty).
Curve select_curve(const std::vector<ResultRow>& rows, const std::string& quantity, const std::string& activation,
                   const std::string& grid = "");

}  // namespace attnlab
