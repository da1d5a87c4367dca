// claims.csv and report.md: empty fields where a claim has no number, fragility and counts.
#include <attnlab/io/report.hpp>
#include <attnlab/io/table.hpp>

#include <gtest/gtest.h>

namespace attnlab {
namespace {

const Claim& some_claim() { return claim_registry().all().front(); }

TEST(Report, MissingNumbersAreEmptyFieldsAndFragilityIsNamed) {
  ClaimOutcome none{.verdict = Verdict::identity, .detail = "no number"};
  ClaimOutcome fragile{.verdict = Verdict::holds, .measured = 1.5, .claimed = 2, .ci_lo = 1, .ci_hi = 2};
  fragile.fragile.push_back({"bound_slack", 2.0, Verdict::loose});
  const std::vector<io::CheckedClaim> checked{{&some_claim(), none}, {&some_claim(), fragile}};
  const auto csv = io::claims_csv(checked);
  const auto first_row = csv.substr(csv.find('\n') + 1);
  EXPECT_EQ(first_row.rfind(some_claim().id + "," + some_claim().source + ",identity,,,,,,", 0), 0u) << first_row;
  EXPECT_NE(csv.find(",holds,1.5,2,1,2,bound_slack x2 -> loose,"), std::string::npos) << csv;
  EXPECT_EQ(io::verdict_counts(checked),
            "2 claims judged: 1 identities, 1 hold, 0 violated, 0 loose, 0 inexact, 0 inconclusive; 1 fragile");
  const auto md = io::report_markdown(checked, nlohmann::json::object());
  EXPECT_EQ(md.find("nan"), std::string::npos) << "a missing number must not print as nan";
  EXPECT_NE(md.find("**holds** (fragile)"), std::string::npos);
}

}  // namespace
}  // namespace attnlab
