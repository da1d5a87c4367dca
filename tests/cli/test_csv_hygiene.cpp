// Every CSV the binaries write, read strictly (cli_support.hpp): one column per name, as many fields in every
// record, RFC 4180 quoting, numbers or nothing in numeric columns. The reader is first shown each kind of fault.
#include "cli_support.hpp"

using namespace attnlab::test::cli;

namespace {

bool finds(const std::string& csv, const std::string& what) {
  for (const auto& p : strict_csv_problems(csv))
    if (p.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(StrictCsv, FindsEachKindOfFault) {
  EXPECT_TRUE(strict_csv_problems("a,b,mean\n\"x,\"\"y\"\"\",,1.5e-3\r\nz,w,-inf\n").empty());
  EXPECT_TRUE(strict_csv_problems("1,2.5\n-3,4\n").empty()) << "a matrix has no header";
  EXPECT_TRUE(finds("a,b\n1,2,3\n", "record 2 has 3 fields, the first 2"));
  EXPECT_TRUE(finds("a,status,status\nx,y,z\n", "the header names 'status' twice"));
  EXPECT_TRUE(finds("a,mean\nx,0.5x\n", "'0.5x' in numeric column mean"));
  EXPECT_TRUE(finds("a,mean\nx,nan\n", "'nan' in numeric column mean")) << "a missing number is an empty field";
  EXPECT_TRUE(finds("a,b\nx\"y\",z\n", "a quote inside an unquoted field"));
  EXPECT_TRUE(finds("a,b\n\"x\"y,z\n", "text after a closing quote"));
  EXPECT_TRUE(finds("a,b\n\"x,z\n", "a quoted field never closed"));
  EXPECT_TRUE(finds("1,2\n3,\n", "an empty field in numeric data"));
}

// A quick verify writes verify.csv (the evidence of every claim, with their extra columns), claims.csv and the
// worst inputs; the claim studies and the sweep write theirs.
TEST(StrictCsv, EveryOutputOfAQuickVerifyIsStrict) {
  const ScratchDir dir("strict_verify");
  const auto r = run("verify", {"--quick", "--out", dir.path.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  expect_strict_csvs(dir.path);
  const auto header = lines_of(slurp(dir / "verify.csv")).front();
  EXPECT_NE(header.find(",claim_id,"), std::string::npos) << "the extra columns follow the fixed ones";
}

// The claims that once left verify.png undrawn ("gnuplot failed"): a single ratio placed past the axis' end.
TEST(StrictCsv, VerifyFigureIsDrawnForAFewClaims) {
  const ScratchDir dir("verify_few");
  const auto r = run("verify", {"--quick", "--claims", "soft.nystrom_error,soft.complexity,periodic.sirenmax_poles",
                                "--out", dir.path.string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err.find("gnuplot failed"), std::string::npos) << r.err;
  EXPECT_TRUE(fs::exists(dir / "verify.png"));
  expect_strict_csvs(dir.path);
}
