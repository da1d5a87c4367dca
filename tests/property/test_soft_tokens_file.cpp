// A user's tokens file in place of the SOFT claims' token sets: read strictly (n and d from the file), and every claim
// that draws tokens judges those tokens alone.
#include <attnlab/core/ensemble.hpp>
#include <attnlab/theory/claims.hpp>

#include "support.hpp"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>
#include <string>

using namespace attnlab;

namespace {

std::filesystem::path scratch_file(const std::string& name, const std::string& content) {
  const auto path = std::filesystem::temp_directory_path() / (name + "_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(path) << content;
  return path;
}

std::string tokens_file_error(SoftOptions soft) {
  try {
    soft.load_tokens();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(SoftTokensFile, ReadsEveryNumberAndSetsNAndD) {
  const auto file = scratch_file("tokens", "1e-3, 2\n\n-4,5.5\n0.25,-0\n");
  SoftOptions soft;  // n = 1024, d = 64 until the file sets them
  soft.tokens_file = file.string();
  soft.load_tokens();
  MatrixD expected(3, 2);
  expected << 1e-3, 2, -4, 5.5, 0.25, -0.0;
  EXPECT_EQ(soft.n, 3);
  EXPECT_EQ(soft.d, 2);
  EXPECT_TRUE(soft.file_tokens == expected) << soft.file_tokens;
  std::filesystem::remove(file);
}

TEST(SoftTokensFile, RefusesAMatrixBesideIt) {
  const auto file = scratch_file("tokens_and_matrix", "1,2\n");
  SoftOptions soft;
  soft.tokens_file = file.string();
  soft.matrix_file = file.string();
  EXPECT_EQ(tokens_file_error(soft).rfind("tokens-file: ", 0), 0u) << tokens_file_error(soft);
  std::filesystem::remove(file);
}

// Every SOFT claim but the four that draw no tokens (Lemmas 1, 2 and eq 12 take matrices; the timing claim draws its
// own sizes) labels each evidence row by the file's tokens, whatever its own ensembles, extremes and samplers are.
TEST(SoftTokensFile, EveryClaimThatDrawsTokensJudgesTheFilesTokensAlone) {
  const Index n = 64, d = 4;
  MatrixD T(n, d);
  fill_gaussian(T, GaussianStream(test::seed(), hash_string("tokens-file-test"), 0, StreamTag::Q), 0.7);
  std::string csv;
  char cell[32];
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < d; ++j) std::snprintf(cell, sizeof cell, "%.17g%s", T(i, j), j + 1 < d ? "," : "\n"), csv += cell;
  const auto file = scratch_file("tokens_claims", csv);
  ClaimContext ctx{.seed = test::seed(), .quick = true};
  ctx.soft.tokens_file = file.string();
  ctx.soft.load_tokens();
  std::filesystem::remove(file);
  ASSERT_TRUE(ctx.soft.file_tokens == T);

  const std::set<std::string> token_free{"soft.lemma1", "soft.lemma2", "soft.eq12", "soft.complexity"};
  int checked = 0;
  for (const auto& claim : claim_registry().all()) {
    if (claim.id.rfind("soft.", 0) != 0 || token_free.contains(claim.id)) continue;
    SCOPED_TRACE(claim.id);
    ++checked;
    const auto out = claim.check(ctx);
    // Its inputs are the bottlenecks a conditioning filter would drop: possibly none of the file's.
    if (claim.id != "soft.prop1.unresolved") {
      EXPECT_FALSE(out.evidence.empty()) << out.detail;
    }
    for (const auto& row : out.evidence)
      EXPECT_NE(row.activation.find("tokens_file"), std::string::npos) << row.quantity << " labelled " << row.activation;
  }
  EXPECT_EQ(checked, 19);  // the 23 SOFT claims less the 4 that draw no tokens
}
