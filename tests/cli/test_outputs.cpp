// The output contract of the study binaries, run as a user would run them.
#include "cli_support.hpp"

using namespace attnlab::test::cli;

TEST(StudyOutputs, PolyFrobeniusWritesTheContract) {
  const ScratchDir dir("pf");
  const auto r = run("poly_frobenius", {"--quick", "--out", dir.path.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto csv = slurp(dir / "poly_frobenius.csv");
  EXPECT_EQ(csv.rfind("study,quantity,activation,convention,precision,N,D,d,p,k,sigma_x,sigma_t,trials,mean,se,ci_lo,ci_hi", 0), 0u);
  EXPECT_NE(csv.find(",frob,"), std::string::npos);
  EXPECT_NE(csv.find(",frob2,"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "poly_frobenius.json"));
  EXPECT_NE(slurp(dir / "poly_frobenius.json").find("\"git_sha\""), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / ".partial"));
}
