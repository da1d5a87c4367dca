// A TOML config sets every flag it names (the command line wins), and Inf/NaN estimates are
// reported per configuration instead of being averaged.
#include "cli_support.hpp"

#include <set>

using namespace attnlab::test::cli;

namespace {

const char* const small_grid_toml =
    "N = [8, 16]\n"
    "D = 4\n"
    "d = 4\n"
    "p = [2]\n"
    "k = [\"1\"]\n"
    "activation = [\"poly\"]\n"
    "trials = 3\n"
    "sigma-x = 0.5\n"
    "seed = 7\n";

TEST(Config, TomlValuesLandInTheCsv) {
  const ScratchDir dir("config");
  std::ofstream(dir / "grid.toml") << small_grid_toml;
  const auto r = run("poly_frobenius", {"--config", (dir / "grid.toml").string(), "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto csv = read_csv(dir / "out" / "poly_frobenius.csv");
  ASSERT_EQ(csv.rows.size(), 8u);  // 2 N × frob, frob2, jac, jac2 of x^2
  std::set<std::string> ns;
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    ns.insert(csv.at(i, "N"));
    EXPECT_EQ(csv.at(i, "D"), "4");
    EXPECT_EQ(csv.at(i, "d"), "4");
    EXPECT_EQ(csv.at(i, "p"), "2");
    EXPECT_EQ(csv.at(i, "k"), "1");
    EXPECT_EQ(csv.at(i, "sigma_x"), "0.5");
    EXPECT_EQ(csv.at(i, "trials"), "3");
    EXPECT_EQ(csv.at(i, "status"), "ok");
  }
  EXPECT_EQ(ns, (std::set<std::string>{"8", "16"}));
  EXPECT_NE(slurp(dir / "out" / "poly_frobenius.json").find("\"seed\": 7"), std::string::npos);
}

TEST(Config, CommandLineOverridesTheConfig) {
  const ScratchDir dir("config_override");
  std::ofstream(dir / "grid.toml") << small_grid_toml;
  const auto r = run("poly_frobenius", {"--config", (dir / "grid.toml").string(), "--N", "32", "--sigma-x=2",
                                        "--trials", "5", "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto csv = read_csv(dir / "out" / "poly_frobenius.csv");
  ASSERT_EQ(csv.rows.size(), 4u);
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    EXPECT_EQ(csv.at(i, "N"), "32");       // command line
    EXPECT_EQ(csv.at(i, "sigma_x"), "2");  // command line, --flag=value form
    EXPECT_EQ(csv.at(i, "trials"), "5");   // command line
    EXPECT_EQ(csv.at(i, "D"), "4");        // config
    EXPECT_EQ(csv.at(i, "p"), "2");        // config
  }
}

bool is_nonfinite_row(const Csv& csv, std::size_t i) { return csv.at(i, "status").rfind("nonfinite", 0) == 0; }

std::size_t count_nonfinite_warnings(const std::string& err) {
  std::size_t n = 0;
  for (const auto& line : lines_of(err)) n += line.find(": warning: non-finite") != std::string::npos;
  return n;
}

// x^40 of logits ~ (1e20)^2 overflows double: every trial is Inf or NaN.
TEST(NonFinite, HugeSigmaAndPowerMarkEveryRowAndWarn) {
  for (const std::string study : {"poly_frobenius", "poly_gradient"}) {
    SCOPED_TRACE(study);
    const ScratchDir dir("nonfinite");
    const auto r = run(study, {"--N", "8", "--D", "4", "--d", "4", "--p", "40", "--sigma-x", "1e20", "--activation",
                               "poly", "--trials", "3", "--out", (dir / "out").string()});
    ASSERT_EQ(r.code, 0) << r.err;
    const auto csv = read_csv(dir / "out" / (study + ".csv"));
    ASSERT_FALSE(csv.rows.empty());
    for (std::size_t i = 0; i < csv.rows.size(); ++i) {
      EXPECT_TRUE(is_nonfinite_row(csv, i)) << csv.at(i, "quantity") << ": " << csv.at(i, "status");
      for (const char* column : {"mean", "se", "ci_lo", "ci_hi"}) EXPECT_EQ(csv.at(i, column), "") << column;
      EXPECT_EQ(csv.at(i, "nonfinite"), "3");
    }
    EXPECT_EQ(count_nonfinite_warnings(r.err), csv.rows.size()) << r.err;
  }
}

// One grid, three kinds of configuration: only the overflowing one is marked.
TEST(NonFinite, ReportedPerConfigurationNeverAveragedIn) {
  const ScratchDir dir("nonfinite_mixed");
  const auto r = run("poly_frobenius",
                     {"--N", "8", "--D", "4", "--d", "4", "--p", "1,40", "--k", "1", "--sigma-x", "1e20",
                      "--activation", "poly,softmax", "--trials", "3", "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto csv = read_csv(dir / "out" / "poly_frobenius.csv");
  std::size_t marked = 0, clean = 0;
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    SCOPED_TRACE(csv.at(i, "activation") + " " + csv.at(i, "quantity"));
    if (csv.at(i, "p") == "40") {
      EXPECT_TRUE(is_nonfinite_row(csv, i));
      EXPECT_EQ(csv.at(i, "mean"), "");
      ++marked;
    } else {
      EXPECT_EQ(csv.at(i, "status"), "ok");
      EXPECT_NE(csv.at(i, "mean"), "");
      EXPECT_EQ(csv.at(i, "nonfinite"), "0");
      ++clean;
    }
  }
  EXPECT_EQ(marked, 4u);  // frob, frob2, jac, jac2 of x^40
  EXPECT_EQ(clean, 8u);   // the same four of x and of softmax
  EXPECT_EQ(count_nonfinite_warnings(r.err), marked) << r.err;
}

}  // namespace
