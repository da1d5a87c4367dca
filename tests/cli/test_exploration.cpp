// Exploration as a user asks it: grid flags on a claim study sweep that grid instead of judging claims, the
// closing table on stdout carries the CSV's numbers, and reference slopes are recorded.
#include "cli/cli_support.hpp"

#include <attnlab/core/text.hpp>

#include <cmath>
#include <regex>

using namespace attnlab::test::cli;

namespace {

// The table's lines of `quantity` ("<quantity>: E ... against N" up to the next such header).
std::vector<std::string> table_block(const std::string& out, const std::string& quantity) {
  std::vector<std::string> block;
  bool inside = false;
  for (const auto& line : lines_of(out)) {
    if (!line.starts_with("  ")) inside = line.starts_with(quantity + ": ");
    else if (inside) block.push_back(line);
  }
  return block;
}

// The whitespace-separated words of a table line.
std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> w;
  for (std::string word; in >> word;) w.push_back(word);
  return w;
}

}  // namespace

// RELU's question with qk-layernorm, asked of relu_scaling with grid flags: an exploratory sweep of exactly that grid
// (no claims.csv, no report, "exploratory": true), whose table prints each CSV mean and exponent to four digits.
TEST(Exploration, GridFlagsOnAClaimStudySweepThatGridAndPrintItsTable) {
  const ScratchDir dir("explore_relu");
  const auto r = run("relu_scaling", {"--activation", "relu+qkln", "--alpha", "0.5", "--N", "8,16,32", "--D", "8",
                                      "--d", "8", "--trials", "6", "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out" / "claims.csv"));
  EXPECT_FALSE(fs::exists(dir / "out" / "report.md"));
  EXPECT_TRUE(contains(r.err, "exploratory")) << r.err;
  EXPECT_FALSE(contains(r.err + r.out, "holds")) << r.err << r.out;
  const auto meta = slurp(dir / "out" / "relu_scaling.json");
  EXPECT_TRUE(contains(meta, "\"exploratory\": true")) << meta;

  const auto csv = read_csv(dir / "out" / "relu_scaling.csv");
  std::set<std::string> quantities, activations, sizes;
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    quantities.insert(csv.at(i, "quantity"));
    activations.insert(csv.at(i, "activation"));
    if (!csv.at(i, "N").empty()) sizes.insert(csv.at(i, "N"));
  }
  EXPECT_EQ(activations, (std::set<std::string>{"relu/N^0.5+qkln"}));
  EXPECT_EQ(sizes, (std::set<std::string>{"8", "16", "32"}));
  for (const char* q : {"mean_weight", "row_sum", "frob", "mean_weight_exponent", "row_sum_exponent", "frob_exponent"})
    EXPECT_TRUE(quantities.count(q)) << q;

  // Every fitted quantity's block: one line per N with the CSV's mean, then the exponent row's mean.
  for (const std::string quantity : {"mean_weight", "row_sum", "frob"}) {
    SCOPED_TRACE(quantity);
    const auto block = table_block(r.out, quantity);
    ASSERT_EQ(block.size(), 5u) << r.out;  // header, N = 8, 16, 32, exponent
    for (std::size_t i = 0; i < csv.rows.size(); ++i) {
      const bool exponent = csv.at(i, "quantity") == quantity + "_exponent";
      if (csv.at(i, "quantity") != quantity && !exponent) continue;
      const std::string key = exponent ? "exponent" : csv.at(i, "N");
      const std::string mean = attnlab::sig(std::stod(csv.at(i, "mean")));
      bool found = false;
      for (const auto& line : block) {
        const auto w = words(line);
        for (std::size_t k = 0; k + 1 < w.size(); ++k) found |= w[k] == key && w[k + 1] == mean;
      }
      EXPECT_TRUE(found) << key << " " << mean << " not in:\n" << r.out;
    }
  }
}

// softmax_bounds with a grid flag answers "softmax norms at sigma_t = 0.3" as a sweep of softmax alone, and records
// the reference slopes it drew; without grid flags it judges its two claims as before.
TEST(Exploration, SoftmaxBoundsExploresWithGridFlagsAndJudgesWithout) {
  const ScratchDir dir("explore_softmax");
  const auto r = run("softmax_bounds", {"--sigma-t", "0.3", "--N", "8,16,32", "--D", "8", "--d", "8", "--trials", "4",
                                        "--reference-slope", "0.5,1", "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir / "out" / "claims.csv"));
  const auto meta = slurp(dir / "out" / "softmax_bounds.json");
  EXPECT_TRUE(std::regex_search(meta, std::regex("\"reference_slopes\": \\[\\s*0\\.5,\\s*1\\.0\\s*\\]"))) << meta;
  const auto csv = read_csv(dir / "out" / "softmax_bounds.csv");
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    EXPECT_EQ(csv.at(i, "activation"), "softmax");
    EXPECT_EQ(csv.at(i, "sigma_t"), "0.3");
  }
  EXPECT_EQ(table_block(r.out, "jac").size(), 5u) << r.out;

  const auto judged = run("softmax_bounds", {"--quick", "--out", (dir / "judged").string()});
  ASSERT_EQ(judged.code, 0) << judged.err;
  EXPECT_EQ(read_csv(dir / "judged" / "claims.csv").rows.size(), 2u);
  EXPECT_TRUE(contains(judged.out, "claims judged")) << judged.out;
  EXPECT_FALSE(contains(slurp(dir / "judged" / "softmax_bounds.json"), "\"exploratory\": true"));
}
