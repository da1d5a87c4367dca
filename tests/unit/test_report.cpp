// claims.csv and report.md: empty fields where a claim has no number, fragility and counts.
#include <attnlab/io/report.hpp>
#include <attnlab/io/table.hpp>

#include "support.hpp"

#include <cmath>

namespace attnlab {
namespace {

const Claim& some_claim() { return claim_registry().all().front(); }

TEST(Report, MissingNumbersAreEmptyFieldsAndFragilityIsNamed) {
  ClaimOutcome none{.verdict = Verdict::identity, .detail = "no number"};
  ClaimOutcome fragile{.verdict = Verdict::holds, .measured = 1.5, .claimed = 2, .ci_lo = 1, .ci_hi = 2};
  fragile.sensitivity.push_back(
      {.threshold = "bound_slack", .above = 2.0, .verdict_above = Verdict::loose, .fragile = true});
  fragile.sensitivity.push_back({.threshold = "bound_rounding", .below = 0.0625, .verdict_below = Verdict::violated});
  const std::vector<io::CheckedClaim> checked{{&some_claim(), none}, {&some_claim(), fragile}};
  const auto csv = io::claims_csv(checked);
  const auto first_row = csv.substr(csv.find('\n') + 1);
  EXPECT_EQ(first_row.rfind(some_claim().id + "," + some_claim().source + ",identity,,,,,,", 0), 0u) << first_row;
  EXPECT_NE(csv.find(",holds,1.5,2,1,2,bound_slack x2 -> loose,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",bound_slack x2 -> loose; bound_rounding x0.0625 -> violated\n"), std::string::npos) << csv;
  EXPECT_EQ(io::verdict_counts(checked),
            "2 claims judged: 1 identities, 1 hold, 0 violated, 0 loose, 0 inexact, 0 inconclusive; 1 fragile");
  const auto md = io::report_markdown(checked, nlohmann::json::object());
  EXPECT_EQ(md.find("nan"), std::string::npos) << "a missing number must not print as nan";
  EXPECT_NE(md.find("**holds** (fragile)"), std::string::npos);
}

// An interval is printed wherever it is finite, a zero-width one included (an exact fit), in claims.csv and in
// report.md alike; a claim without one has empty cells in both.
TEST(Report, IntervalsAreTheSameInTheCsvAndTheReport) {
  ClaimOutcome exact_fit{.verdict = Verdict::holds, .measured = 2, .claimed = 2, .ci_lo = 2, .ci_hi = 2};
  ClaimOutcome no_interval{.verdict = Verdict::loose, .measured = 0.5, .claimed = 2};
  const std::vector<io::CheckedClaim> checked{{&some_claim(), exact_fit}, {&some_claim(), no_interval}};
  const auto csv = io::claims_csv(checked);
  EXPECT_NE(csv.find(",holds,2,2,2,2,"), std::string::npos) << csv;
  EXPECT_NE(csv.find(",loose,0.5,2,,,"), std::string::npos) << csv;
  const auto md = io::report_markdown(checked, nlohmann::json::object());
  EXPECT_NE(md.find("| **holds** | 2 | 2 | [2, 2] |"), std::string::npos);
  EXPECT_NE(md.find("| **loose** | 0.5 | 2 |  |"), std::string::npos);
}

// The Jacobian bound's table column is the tight constant and its text leads with the same number. Two equal logits
// give s = (1/2, 1/2) and grad softmax = diag(s) - s s^T = [[1/4, -1/4], [-1/4, 1/4]], of Frobenius norm 1/2: the
// constant the search must find (it is the supremum), 0.5, and its ratio to the claimed 2, 0.25.
TEST(Report, SoftmaxJacobianBoundSaysOneNumberInTextAndTable) {
  const auto& claim = claim_registry().find("poly.softmax_jac_bound");
  const auto out = claim.check({.seed = test::seed(), .quick = true});
  EXPECT_NEAR(out.measured, 0.5, 1e-9);
  EXPECT_EQ(out.claimed, 2);
  EXPECT_TRUE(std::isnan(out.ci_lo) && std::isnan(out.ci_hi)) << "a largest value found has no interval";
  EXPECT_EQ(out.detail.rfind("tight constant 0.5 against the claimed 2 ", 0), 0u) << out.detail;
  EXPECT_NE(out.detail.find("ratio to the bound 0.25"), std::string::npos) << out.detail;
  const auto csv = io::claims_csv({{&claim, out}});
  EXPECT_NE(csv.find(",loose,0.5,2,,,"), std::string::npos) << csv;
}

}  // namespace
}  // namespace attnlab
