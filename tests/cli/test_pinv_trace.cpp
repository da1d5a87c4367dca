// newton_pinv's traces, run as a user would: one row per iteration of each --method in newton_pinv_trace.csv, one
// row per run in newton_pinv_runs.csv, and with --save-iterate each final iterate at full precision; the numbers are
// checked against an independent recomputation from the saved iterate, and a singular --matrix is accepted.
#include "cli_support.hpp"

#include <Eigen/Dense>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

using namespace attnlab::test::cli;

namespace {

using Matrix = Eigen::MatrixXd;

double norm2(const Matrix& M) { return Eigen::JacobiSVD<Matrix>(M).singularValues()(0); }

}  // namespace

TEST(PinvTrace, TraceRunsAndFinalIterateAreWrittenAndCorrect) {
  const ScratchDir dir("pinv_trace");
  std::ofstream(dir / "A.csv") << "2,1,0\n1,2,1\n0,1,2\n";  // eigenvalues 2 - sqrt 2, 2, 2 + sqrt 2
  const auto r = run("newton_pinv",
                     {"--quick", "--claims", "soft.eq12", "--matrix", (dir / "A.csv").string(), "--method",
                      "newton,released,released-beta", "--save-iterate", "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  Matrix A(3, 3);
  A << 2, 1, 0, 1, 2, 1, 0, 1, 2;
  const Matrix I = Matrix::Identity(3, 3);
  const auto trace = read_csv(dir / "out" / "newton_pinv_trace.csv");
  const auto runs = read_csv(dir / "out" / "newton_pinv_runs.csv");
  ASSERT_EQ(runs.rows.size(), 3u);
  expect_strict_csvs(dir / "out");  // the traces, the runs, the saved iterates (headerless matrices)
  for (const std::string method : {"newton", "released", "released-beta"}) {
    SCOPED_TRACE(method);
    const auto steps = rows_where(trace, "method", method);
    const auto run_rows = rows_where(runs, "method", method);
    ASSERT_EQ(run_rows.size(), 1u);
    const std::size_t run_row = run_rows[0];
    const int iterations = std::stoi(runs.at(run_row, "iterations"));
    ASSERT_EQ(steps.size(), std::size_t(iterations) + 1);  // iteration 0 is the start
    for (std::size_t k = 0; k < steps.size(); ++k) EXPECT_EQ(trace.at(steps[k], "iteration"), std::to_string(k));
    EXPECT_EQ(runs.at(run_row, "input"), "matrix");
    EXPECT_EQ(trace.at(steps.back(), "residual"), runs.at(run_row, "residual"));

    const fs::path iterate = dir / "out" / ("newton_pinv_iterate_" + method + "_matrix_m3.csv");
    ASSERT_TRUE(fs::exists(iterate)) << iterate;
    const Matrix X = read_matrix(iterate);
    ASSERT_EQ(X.rows(), 3);
    // The last traced numbers, recomputed from the saved iterate (printed with 17 digits: exact to rounding). A
    // converged residual is itself rounding, which another order of the same products changes by up to n·ε·κ(A)² (n =
    // 3, κ < 6): that is the absolute floor.
    const double rounding = 3 * std::numeric_limits<double>::epsilon() * 36;
    const double residual = norm2(A * X * A - A) / norm2(A), error = norm2(X - A.inverse());
    EXPECT_NEAR(std::stod(trace.at(steps.back(), "residual")), residual, 1e-12 * residual + rounding);
    EXPECT_NEAR(std::stod(trace.at(steps.back(), "error")), error, 1e-12 * error + rounding);
    const double shift = std::stod(runs.at(run_row, "shift"));
    if (method == "released") {
      EXPECT_EQ(shift, 0.01);
      const Matrix R = A + shift * I;
      EXPECT_NEAR(std::stod(trace.at(steps.back(), "residual_shifted")), norm2(R * X * R - R) / norm2(R), 1e-14);
      EXPECT_NEAR(std::stod(trace.at(steps.back(), "error_shifted")), norm2(X - R.inverse()), 1e-13);
      // κ(R) < 6: twenty steps of e ← e² from e₀ = 1 − αλ² ≤ 0.9 leave nothing but rounding.
      EXPECT_LE(norm2(X - R.inverse()), 1e-13);
      EXPECT_GT(error, 1e-3);  // the regularised inverse, not A⁻¹: ‖(A + 0.01 I)⁻¹ − A⁻¹‖ ≈ 0.01/λ_min² ≈ 0.03
    } else {
      EXPECT_EQ(shift, 0.0);
      EXPECT_EQ(trace.at(steps.back(), "residual_shifted"), "");  // no such number
      EXPECT_EQ(trace.at(steps.back(), "error_shifted"), "");
    }
    if (method == "newton") {
      // Converged to the study's default tolerance 1e-8: ‖X − A⁻¹‖ ≤ κ·residual·‖A⁻¹‖, κ < 6, ‖A⁻¹‖ < 1.8.
      EXPECT_EQ(runs.at(run_row, "converged"), "true");
      EXPECT_LT(residual, 1e-8);
      EXPECT_LE(error, 6 * 1e-8 * 1.8);
      EXPECT_EQ(runs.at(run_row, "beta_halvings"), "");
    }
    if (method == "released-beta") {
      EXPECT_NE(runs.at(run_row, "beta_halvings"), "");
      EXPECT_EQ(runs.at(run_row, "iterations"), "20");
    }
  }
}

// The matrix the bad-input tests once refused: singular (row 2 = 2 x row 1) and not symmetric. Every method runs on
// it; the reference's rank is 2; the paper's beta rule is reported unmet (column 1: diagonal 1, off-diagonal 3);
// the saved svd iterate is the pseudo-inverse; no iterate files without --save-iterate.
TEST(PinvTrace, SingularMatrixIsAcceptedAndReported) {
  const ScratchDir dir("pinv_singular");
  std::ofstream(dir / "S.csv") << "1,2,3\n2,4,6\n1,0,1\n";
  const auto r = run("newton_pinv", {"--quick", "--claims", "soft.eq12", "--matrix", (dir / "S.csv").string(),
                                     "--method", "svd,newton,newton-beta,released,released-beta,nystromformer",
                                     "--save-iterate", "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = read_csv(dir / "out" / "newton_pinv_runs.csv");
  ASSERT_EQ(runs.rows.size(), 6u);
  for (std::size_t i = 0; i < runs.rows.size(); ++i) {
    EXPECT_EQ(runs.at(i, "reference_rank"), "2") << runs.at(i, "method");
    EXPECT_FALSE(runs.at(i, "status").empty());
  }
  const auto beta = rows_where(runs, "method", "newton-beta");
  ASSERT_EQ(beta.size(), 1u);
  EXPECT_EQ(runs.at(beta[0], "beta_rule_met"), "false");
  EXPECT_EQ(runs.at(beta[0], "beta_halvings"), "64");
  Matrix S(3, 3);
  S << 1, 2, 3, 2, 4, 6, 1, 0, 1;
  const Matrix pinv = S.completeOrthogonalDecomposition().pseudoInverse();
  const Matrix X = read_matrix(dir / "out" / "newton_pinv_iterate_svd_matrix_m3.csv");
  EXPECT_LE(norm2(X - pinv), 1e-12 * norm2(pinv));

  const auto quiet = run("newton_pinv", {"--quick", "--claims", "soft.eq12", "--matrix", (dir / "S.csv").string(),
                                         "--method", "newton", "--out", (dir / "quiet").string()});
  ASSERT_EQ(quiet.code, 0) << quiet.err;
  EXPECT_TRUE(fs::exists(dir / "quiet" / "newton_pinv_trace.csv"));
  for (const auto& f : files_under(dir / "quiet")) EXPECT_EQ(f.find("_iterate_"), std::string::npos) << f;
}
