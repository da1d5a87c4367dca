// Falsifiability: every registered claim's verdict rule, handed its own quick-mode evidence changed into
// what the claim's failure would look like, must say violated or inexact; changed into what its success
// would look like, holds, loose or identity. A rule that cannot be turned is an identity or no check.
#include <attnlab/io/table.hpp>
#include <attnlab/theory/claims.hpp>

#include "support.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace attnlab {
namespace {

class MemoryCache final : public ResultCache {
 public:
  bool find(const std::string& key, std::vector<ResultRow>& rows) override {
    const auto it = rows_.find(key);
    if (it == rows_.end()) return false;
    rows = it->second;
    return true;
  }
  void store(const std::string& key, const std::vector<ResultRow>& rows) override { rows_[key] = rows; }

 private:
  std::map<std::string, std::vector<ResultRow>> rows_;
};

// Quick-mode evidence of a claim, measured once per process (claims share sweeps through the cache).
const std::any& quick_evidence(const Claim& claim) {
  static MemoryCache cache;
  static std::map<std::string, std::any> measured;
  if (const auto it = measured.find(claim.id); it != measured.end()) return it->second;
  ClaimContext ctx{.seed = test::seed(), .quick = true, .cache = &cache};
  ctx.training_rows = [](const std::string& sweep) {  // the committed full sweeps, as verify reads them
    const auto csv = std::filesystem::path(ATTNLAB_SOURCE_DIR) / "results" / (sweep + ".csv");
    std::ifstream in(csv);
    std::stringstream text;
    text << in.rdbuf();
    return in ? io::rows_from_csv(text.str(), csv.string()) : std::vector<ResultRow>{};
  };
  return measured[claim.id] = claim.measure(ctx);
}

bool refutes(Verdict v) { return v == Verdict::violated || v == Verdict::inexact; }
bool supports(Verdict v) { return v == Verdict::holds || v == Verdict::loose || v == Verdict::identity; }

std::vector<std::string> claim_ids() {
  std::vector<std::string> ids;
  for (const auto& c : claim_registry().all()) ids.push_back(c.id);
  return ids;
}

class Falsify : public ::testing::TestWithParam<std::string> {};

TEST_P(Falsify, ContradictingEvidenceRefutesTheClaim) {
  const auto& claim = claim_registry().find(GetParam());
  if (!claim.contradict) {
    EXPECT_FALSE(claim.identity.empty()) << claim.id << ": no contradicting evidence and no identity";
    return;
  }
  const auto outcome = claim.judged(claim.contradict(quick_evidence(claim)), Thresholds{});
  EXPECT_TRUE(refutes(outcome.verdict)) << claim.id << " judged contradicting evidence "
                                        << to_string(outcome.verdict) << ": " << outcome.detail;
}

TEST_P(Falsify, SupportingEvidenceUpholdsTheClaim) {
  const auto& claim = claim_registry().find(GetParam());
  const auto outcome = claim.judged(claim.support(quick_evidence(claim)), Thresholds{});
  EXPECT_TRUE(supports(outcome.verdict)) << claim.id << " judged supporting evidence " << to_string(outcome.verdict)
                                         << ": " << outcome.detail;
}

INSTANTIATE_TEST_SUITE_P(Claims, Falsify, ::testing::ValuesIn(claim_ids()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param;
                           for (auto& ch : name)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return name;
                         });

// ---- the machinery: thresholds, fragility, identities, registration --------------------------------

const Threshold kLimit{"limit", 1.0, "test"};

Claim threshold_claim(double measured, std::string identity = "") {
  return make_claim<double>({.id = "test.claim", .source = "test", .statement = "x <= limit", .method = "test",
                             .identity = std::move(identity)},
                            {.measure = [measured](const ClaimContext&) { return measured; },
                             .judge = [](const double& x, const Thresholds& t) {
                               return ClaimOutcome{.verdict = x <= t(kLimit) ? Verdict::holds : Verdict::violated};
                             },
                             .contradict = [](double& x) { x = 2; },
                             .support = [](double& x) { x = 0; }});
}

TEST(Thresholds, ScaledValueIsReadAndRecorded) {
  const Thresholds own;
  EXPECT_EQ(own(kLimit), 1.0);
  EXPECT_EQ(own.scaled(kLimit, 0.5)(kLimit), 0.5);
  ASSERT_EQ(own.read().count("limit"), 1u);
  EXPECT_EQ(own.read().at("limit"), &kLimit);
}

TEST(Thresholds, VerdictNearItsThresholdIsFragileAndFarFromItIsNot) {
  // 0.85 <= 1 holds down to x0.9 and changes at the next multiplier, x0.8: fragile, inside x1/2..x2. 0.2 changes only
  // at x1/8, outside the range: reported, not fragile. Raising the limit never changes a verdict that holds.
  const auto near = threshold_claim(0.85).check({});
  EXPECT_EQ(near.verdict, Verdict::holds);
  ASSERT_EQ(near.sensitivity.size(), 1u);
  EXPECT_EQ(near.sensitivity[0].threshold, "limit");
  EXPECT_EQ(near.sensitivity[0].below, 0.8);
  EXPECT_EQ(near.sensitivity[0].verdict_below, Verdict::violated);
  EXPECT_EQ(near.sensitivity[0].above, HUGE_VAL);
  EXPECT_TRUE(near.fragile());
  ASSERT_EQ(near.thresholds.size(), 1u);
  const auto far = threshold_claim(0.2).check({});
  EXPECT_EQ(far.sensitivity.at(0).below, 0.125);
  EXPECT_FALSE(far.fragile());
  EXPECT_FALSE(threshold_claim(0.01).check({}).fragile());
}

// A threshold whose origin justifies only x0.9..x1.1: a change at x0.8 is reported, not fragile; one at x0.9 is.
TEST(Thresholds, FragileOnlyWithinTheJustifiedMultipliers) {
  static const Threshold narrow{"narrow", 1.0, "test", 0.9, 1.1};
  const auto claim = [](double measured) {
    return make_claim<double>({.id = "test.narrow", .source = "test", .statement = "x <= narrow", .method = "test"},
                              {.measure = [measured](const ClaimContext&) { return measured; },
                               .judge = [](const double& x, const Thresholds& t) {
                                 return ClaimOutcome{.verdict = x <= t(narrow) ? Verdict::holds : Verdict::violated};
                               },
                               .contradict = [](double& x) { x = 2; },
                               .support = [](double& x) { x = 0; }});
  };
  const auto outside = claim(0.85).check({}), inside = claim(0.95).check({});
  EXPECT_EQ(outside.sensitivity.at(0).below, 0.8);
  EXPECT_FALSE(outside.fragile());
  EXPECT_EQ(inside.sensitivity.at(0).below, 0.9);
  EXPECT_TRUE(inside.fragile());
}

TEST(Identity, HoldingIdentityIsReportedAsIdentityAndAFailingOneAsViolated) {
  EXPECT_EQ(threshold_claim(0.1, "by construction").check({}).verdict, Verdict::identity);
  EXPECT_EQ(threshold_claim(3, "by construction").check({}).verdict, Verdict::violated);
}

TEST(Registry, RejectsACheckThatCannotBeContradicted) {
  ClaimRegistry r;
  auto claim = threshold_claim(0.1);
  claim.contradict = {};
  EXPECT_THROW(r.add(claim), std::logic_error);
  claim.identity = "by construction";
  EXPECT_NO_THROW(r.add(claim));
  EXPECT_THROW(r.add(claim), std::logic_error);  // twice
}

}  // namespace
}  // namespace attnlab
