#pragma once
// Verdict rules shared by the claims; the thresholds are stated in the report.
#include <attnlab/mc/statistics.hpp>
#include <attnlab/theory/claims.hpp>

#include <string>
#include <vector>

namespace attnlab {

struct VerdictTolerances {
  double exponent = 0.05;       // |fitted − claimed| exponent still read as "holds"
  double exponent_ci_max = 0.5; // a wider CI on an exponent is inconclusive
  double bound_loose = 0.9;     // max ratio below this fraction of the bound: loose
  double closed_form = 0.02;    // relative error of a closed form still read as exact
  double level_factor = 3.0;    // training norms: "at the level of" within this factor, "far larger" beyond it
  double comparable_accuracy = 0.02;  // accuracies "comparable": a − b not below −0.02 (two points) with 95% confidence
  double iid_at_init = 0.2;     // relative distance of a step-0 norm from its i.i.d. prediction still read as agreement
};
inline constexpr VerdictTolerances tolerances{};

// "O(N^a)": holds when the exponent's CI reaches within tolerance of a or contains it,
// violated when the CI lies above a + tol, loose when it lies below a − tol.
Verdict growth_verdict(const PowerLawFit& fit, double claimed_exponent);

// A deterministic bound f ≤ C·g, given the largest ratio f/(C·g) found.
Verdict bound_verdict(double max_ratio);

// A closed form against Monte-Carlo: inexact when the estimate's CI excludes the formula
// and the relative error exceeds the tolerance.
Verdict closed_form_verdict(double formula, const Estimate& mc);

double relative_error(double approx, double reference);

// The more severe of two verdicts: violated > inexact > inconclusive > loose > holds.
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
