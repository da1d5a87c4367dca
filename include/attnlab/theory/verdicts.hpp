#pragma once
// Verdict rules shared by the claims; the thresholds are stated in the report.
#include <attnlab/mc/statistics.hpp>
#include <attnlab/theory/claims.hpp>

namespace attnlab {

struct VerdictTolerances {
  double exponent = 0.05;       // |fitted − claimed| exponent still read as "holds"
  double exponent_ci_max = 0.5; // a wider CI on an exponent is inconclusive
  double bound_loose = 0.9;     // max ratio below this fraction of the bound: loose
  double closed_form = 0.02;    // relative error of a closed form still read as exact
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

}  // namespace attnlab
