#pragma once
// claims.csv and report.md of `verify`.
#include <attnlab/theory/claims.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace attnlab::io {

struct CheckedClaim {
  const Claim* claim;
  ClaimOutcome outcome;
};

// "N claims judged: … identities, … hold, …; … fragile" (report.md's first line and verify's summary).
std::string verdict_counts(const std::vector<CheckedClaim>& checked);
// docs/claims.md: every registered claim by family, the reading scheme, and the claims left out.
std::string claim_catalogue_markdown();
std::string claims_csv(const std::vector<CheckedClaim>& checked);
// verify.png: one row per claim, grouped by family, with measured / claimed and its interval on a log axis where
// both numbers exist and share a sign, and at the right of every row its verdict and both numbers.
Figure verdict_figure(const std::vector<CheckedClaim>& checked, const std::string& name);
std::string report_markdown(const std::vector<CheckedClaim>& checked, const nlohmann::json& run);

}  // namespace attnlab::io
