// activation_rows on rows a user wrote: the values and norms equal those computed here from the definitions, and bad
// rows or activations are refused in one line before any output.
#include "cli/cli_support.hpp"

#include <cmath>

using namespace attnlab::test::cli;

namespace {

std::vector<double> numbers(const std::string& line) {
  std::vector<double> v;
  for (const auto& field : csv_fields(line)) v.push_back(std::stod(field));
  return v;
}

// The CSV value of `quantity` for input row `row` (1-based) of activation `label`.
double value_of(const Csv& csv, const std::string& label, const std::string& quantity, int row) {
  for (std::size_t i = 0; i < csv.rows.size(); ++i)
    if (csv.at(i, "activation") == label && csv.at(i, "quantity") == quantity &&
        csv.at(i, "row") == std::to_string(row))
      return std::stod(csv.at(i, "mean"));
  throw std::runtime_error("no " + quantity + " of " + label + " row " + std::to_string(row));
}

}  // namespace

// Softmax p = e^x / Σe^x has J = diag(p) − ppᵀ, so ‖J‖_F² = Σp_j² − 2Σp_j³ + (Σp_j²)²; x³/√N is elementwise with
// J = diag(3x²/√N). Rows of different lengths each take their own N.
TEST(ActivationRows, ValuesAndJacobianNormsFollowTheDefinitions) {
  const ScratchDir dir("activation_rows");
  const std::vector<std::vector<double>> rows{{0.5, -1.25, 2.0}, {1.0, 0.0, -3.0, 0.25, 4.0}};
  {
    std::ofstream csv(dir / "rows.csv");
    for (const auto& row : rows) {
      for (std::size_t j = 0; j < row.size(); ++j) csv << (j ? "," : "") << row[j];
      csv << "\n";
    }
  }
  const auto r = run("activation_rows", {"--rows", (dir / "rows.csv").string(), "--activation", "softmax,poly", "--p",
                                         "3", "--k", "sqrtN", "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto csv = read_csv(dir / "out" / "activation_rows.csv");
  const auto softmax_values = lines_of(slurp(dir / "out" / "values_softmax.csv"));
  const auto poly_values = lines_of(slurp(dir / "out" / "values_poly.csv"));
  ASSERT_EQ(softmax_values.size(), rows.size());
  ASSERT_EQ(poly_values.size(), rows.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    SCOPED_TRACE("row " + std::to_string(i + 1));
    const auto& x = rows[i];
    const double n = double(x.size());
    double z = 0;
    for (double v : x) z += std::exp(v);
    double s2 = 0, s3 = 0, cube2 = 0, dcube2 = 0;
    const auto p = numbers(softmax_values[i]);
    const auto c = numbers(poly_values[i]);
    ASSERT_EQ(p.size(), x.size());
    ASSERT_EQ(c.size(), x.size());
    for (std::size_t j = 0; j < x.size(); ++j) {
      const double pj = std::exp(x[j]) / z, cj = x[j] * x[j] * x[j] / std::sqrt(n);
      EXPECT_TRUE(attnlab::test::close(p[j], pj, 1e-14, 0)) << j;
      EXPECT_TRUE(attnlab::test::close(c[j], cj, 1e-14, 0)) << j;
      s2 += pj * pj, s3 += pj * pj * pj, cube2 += cj * cj;
      dcube2 += std::pow(3 * x[j] * x[j] / std::sqrt(n), 2);
    }
    const int row = int(i) + 1;
    // The long-format CSV carries ten significant digits (the output contract), the values files seventeen.
    EXPECT_TRUE(attnlab::test::close(value_of(csv, "softmax", "sum", row), 1, 1e-9, 0));
    EXPECT_TRUE(attnlab::test::close(value_of(csv, "softmax", "norm", row), std::sqrt(s2), 1e-9, 0));
    EXPECT_TRUE(
        attnlab::test::close(value_of(csv, "softmax", "jac_frob", row), std::sqrt(s2 - 2 * s3 + s2 * s2), 1e-9, 0));
    EXPECT_TRUE(attnlab::test::close(value_of(csv, "x^3/sqrtN (inside)", "norm", row), std::sqrt(cube2), 1e-9, 0));
    EXPECT_TRUE(attnlab::test::close(value_of(csv, "x^3/sqrtN (inside)", "jac_frob", row), std::sqrt(dcube2), 1e-9, 0));
  }
  for (std::size_t i = 0; i < csv.rows.size(); ++i)
    EXPECT_EQ(csv.at(i, "N"), std::to_string(rows[std::stoi(csv.at(i, "row")) - 1].size()));
}

TEST(ActivationRows, BadRowsAndActivationsAreRefusedInOneLineBeforeAnyOutput) {
  const ScratchDir dir("activation_rows_bad");
  std::ofstream(dir / "ok.csv") << "1,2,3\n";
  std::ofstream(dir / "text.csv") << "1,two,3\n";
  std::ofstream(dir / "short.csv") << "1,2\n5\n";
  const std::string ok = (dir / "ok.csv").string();
  const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases{
      {{}, {"--rows"}},
      {{"--rows", (dir / "missing.csv").string()}, {"rows", "missing.csv"}},
      {{"--rows", (dir / "text.csv").string()}, {"rows", "two", "line 1"}},
      {{"--rows", (dir / "short.csv").string()}, {"rows", "line 2"}},
      {{"--rows", ok, "--activation", "softmax+qkln"}, {"activation", "qkln"}},
      {{"--rows", ok, "--activation", "softmax,softmax"}, {"activation", "twice"}},
      {{"--rows", ok, "--activation", "sofmax"}, {"sofmax"}},
      {{"--rows", ok, "--alpha", "-1"}, {"alpha"}},
      {{"--rows", ok, "--N", "8"}, {"--N"}},
      {{"--rows", ok, "--trials", "8"}, {"--trials"}},
  };
  for (const auto& [args, words] : cases) {
    auto full = args;
    full.insert(full.end(), {"--out", (dir / "out").string()});
    const auto r = run("activation_rows", full);
    SCOPED_TRACE(r.err);
    EXPECT_EQ(r.code, 2);
    ASSERT_EQ(r.err_lines().size(), 1u);
    for (const auto& w : words) EXPECT_NE(r.err.find(w), std::string::npos) << w;
    EXPECT_FALSE(fs::exists(dir / "out"));
  }
}
