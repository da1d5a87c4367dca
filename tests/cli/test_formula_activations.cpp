// Activations written as formulas through the studies: poly_frobenius gives the built-in's numbers for the formula it
// spells, the normalised text keys the outputs, train and a training sweep take a formula, and malformed formulas are
// refused with exit 2 and one line before any output.
#include "cli/cli_support.hpp"

#include <nlohmann/json.hpp>

#include <cmath>
#include <map>

using namespace attnlab::test::cli;

namespace {

// mean of each (quantity, N) of one activation's rows
std::map<std::pair<std::string, std::string>, double> means_of(const Csv& csv, const std::string& label) {
  std::map<std::pair<std::string, std::string>, double> means;
  for (std::size_t i = 0; i < csv.rows.size(); ++i)
    if (csv.at(i, "activation") == label) means[{csv.at(i, "quantity"), csv.at(i, "N")}] = std::stod(csv.at(i, "mean"));
  return means;
}

}  // namespace

// Plain means: the built-in x^p/k also has exact moments as control variates, which a formula does not.
TEST(FormulaActivations, PolyFrobeniusGivesTheBuiltInsNumbers) {
  const ScratchDir dir("formula_poly");
  const std::vector<std::string> common{"--N",      "16,64", "--D",    "8", "--d",          "8",
                                        "--trials", "24",    "--seed", "5", "--plain-means"};
  auto builtin_args = common, formula_args = common;
  builtin_args.insert(builtin_args.end(),
                      {"--activation", "poly", "--p", "3", "--k", "sqrtN", "--out", (dir / "b").string()});
  formula_args.insert(formula_args.end(), {"--activation", "expr: x^3 / sqrt(N)", "--out", (dir / "f").string()});
  const auto b = run("poly_frobenius", builtin_args), f = run("poly_frobenius", formula_args);
  ASSERT_EQ(b.code, 0) << b.err;
  ASSERT_EQ(f.code, 0) << f.err;
  const auto builtin = means_of(read_csv(dir / "b" / "poly_frobenius.csv"), "x^3/sqrtN (inside)");
  const auto formula = means_of(read_csv(dir / "f" / "poly_frobenius.csv"), "expr:x^3/sqrt(N)");
  ASSERT_FALSE(builtin.empty());
  ASSERT_EQ(builtin.size(), formula.size());
  for (const auto& [key, mean] : builtin) {
    ASSERT_TRUE(formula.contains(key)) << key.first << " N=" << key.second;
    EXPECT_LE(std::abs(formula.at(key) - mean), 1e-12 * std::abs(mean)) << key.first << " N=" << key.second;
  }
  const auto json = nlohmann::json::parse(slurp(dir / "f" / "poly_frobenius.json"));
  EXPECT_NE(json.dump().find("expr:x^3/sqrt(N)"), std::string::npos) << "the normalised text in the JSON";
}

TEST(FormulaActivations, MalformedFormulasAreRefusedInOneLine) {
  const ScratchDir dir("formula_bad");
  for (const auto& [activation, says] :
       std::vector<std::pair<std::string, std::string>>{{"expr:x^^2", "at position 3 expected"},
                                                        {"softmax,rowexpr:exp(x", "at position 6 expected ')'"},
                                                        {"expr:a*x", "'a'"},
                                                        {"expr:foo(x)", "at position 1 expected a function"}}) {
    const auto r = run("poly_frobenius", {"--activation", activation, "--quick", "--out", (dir / "out").string()});
    EXPECT_EQ(r.code, 2) << activation;
    ASSERT_EQ(r.err_lines().size(), 1u) << r.err;
    EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
    EXPECT_FALSE(std::filesystem::exists(dir / "out")) << "output written for invalid input";
  }
}

TEST(FormulaActivations, TrainAndATrainingSweepTakeAFormula) {
  const ScratchDir dir("formula_train");
  const auto t = run(
      "train", {"--quick", "--model", "micro", "--data", "recall", "--patch", "8x8", "--steps", "4", "--activation",
                "expr:a*max(x,0)^2/N", "--param", "a=0.5", "--out", (dir / "t").string()});
  ASSERT_EQ(t.code, 0) << t.err;
  EXPECT_NE(slurp(dir / "t" / "train.json").find("expr:a*max(x,0)^2/N (a=0.5)"), std::string::npos);
  const auto s = run("activation_table", {"--quick", "--N", "16", "--activation", "rowexpr:exp(x),expr:x/(1+exp(-x))/N",
                                          "--controls", "softmax", "--out", (dir / "s").string()});
  ASSERT_EQ(s.code, 0) << s.err;
  const auto csv = slurp(dir / "s" / "activation_table.csv");
  EXPECT_NE(csv.find("rowexpr:exp(x)"), std::string::npos);
  EXPECT_NE(csv.find("expr:x/(1+exp(-x))/N"), std::string::npos);
}

TEST(FormulaActivations, CharacteriseWritesTheCardBesideSoftmax) {
  const ScratchDir dir("formula_card");
  const auto r = run("characterise",
                     {"--quick", "--activation", "expr:1/(1+exp(-(x - log(N))))", "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto card = slurp(dir / "out" / "card.md");
  for (const char* label : {"| softmax |", "| expr:1/(1+exp(-(x-log(N)))) |"})
    EXPECT_NE(card.find(label), std::string::npos) << label;
  for (const char* quantity : {"frob_exponent", "jac_exponent", "qgrad_exponent", "max_jac_over_sqrtN",
                               "saturated_share", "positive_share", "accuracy_gap_recall"})
    EXPECT_NE(slurp(dir / "out" / "characterise.csv").find(quantity), std::string::npos) << quantity;
  EXPECT_NE(r.out.find("activation card"), std::string::npos) << r.out;
  const auto bad = run("characterise", {"--quick", "--tasks", "imagenet", "--out", (dir / "bad").string()});
  EXPECT_EQ(bad.code, 2);
  EXPECT_EQ(bad.err_lines().size(), 1u) << bad.err;
}
