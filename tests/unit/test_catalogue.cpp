// docs/claims.md is the registry's catalogue: the committed file and the generated text must agree.
#include <attnlab/io/report.hpp>
#include <attnlab/theory/claims.hpp>

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace attnlab {
namespace {

TEST(Catalogue, CommittedFileMatchesTheRegistry) {
  std::ifstream in(std::filesystem::path(ATTNLAB_SOURCE_DIR) / "docs" / "claims.md");
  ASSERT_TRUE(in) << "docs/claims.md is missing";
  std::stringstream committed;
  committed << in.rdbuf();
  EXPECT_EQ(committed.str(), io::claim_catalogue_markdown())
      << "docs/claims.md is out of date: build/studies/claims_catalogue > docs/claims.md";
}

TEST(Catalogue, ListsEveryRegisteredClaimOnce) {
  const auto md = io::claim_catalogue_markdown();
  for (const auto& c : claim_registry().all()) {
    const auto cell = "| `" + c.id + "` |";
    const auto first = md.find(cell);
    ASSERT_NE(first, std::string::npos) << c.id;
    EXPECT_EQ(md.find(cell, first + 1), std::string::npos) << c.id << " listed twice";
  }
}

}  // namespace
}  // namespace attnlab
