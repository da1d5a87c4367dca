// newton_pinv asked a researcher's question: "how many iterations does each pseudo-inverse need on my own 30 x 30
// kernel matrix?". --matrix (or --tokens-file) without --claims is an exploratory run: every method answers with the
// iterations to --tolerance (capped by --max-iterations, default 1000), κ₂, σ_min/σ₁ and the numerical rank, under the
// input's real size, and no claim is judged; the answers are checked against Eigen and against the run's own traces.
#include "cli_support.hpp"

#include <attnlab/theory/claims.hpp>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace attnlab::test::cli;

namespace {

using Matrix = Eigen::MatrixXd;

const std::vector<std::string> kMethods{"svd",          "newton",        "newton-beta",  "released",
                                        "released-f32", "released-beta", "nystromformer"};

// K_ij = exp(−(i − j)²/(2s²)): a Gaussian kernel of distinct points, so symmetric positive definite.
Matrix kernel_matrix(Eigen::Index m, double s) {
  Matrix K(m, m);
  for (Eigen::Index i = 0; i < m; ++i)
    for (Eigen::Index j = 0; j < m; ++j) K(i, j) = std::exp(-double((i - j) * (i - j)) / (2 * s * s));
  return K;
}

// κ₂ of a symmetric positive definite matrix: λ_max/λ_min.
double spd_kappa(const Matrix& A) {
  const Eigen::VectorXd l = Eigen::SelfAdjointEigenSolver<Matrix>(A, Eigen::EigenvaluesOnly).eigenvalues();
  return l.maxCoeff() / l.minCoeff();
}

// The closing table's line of `method` ("  <method> <answer> ..."), on stdout; empty when there is none.
std::string table_line(const Run& r, const std::string& method) {
  for (const auto& line : lines_of(r.out))
    if (line.rfind("  " + method + " ", 0) == 0) return line;
  return "";
}

// Every run row agrees with its method's trace: the iterations to tolerance are the first traced iteration whose
// residual against A is <= the tolerance (none: "not reached" or "diverged"), and the last traced numbers are the
// run's.
void expect_runs_match_traces(const Csv& runs, const Csv& trace, double tolerance) {
  for (std::size_t row = 0; row < runs.rows.size(); ++row) {
    const std::string method = runs.at(row, "method");
    SCOPED_TRACE(method);
    std::vector<std::size_t> steps;
    for (const auto i : rows_where(trace, "method", method))
      if (trace.at(i, "input") == runs.at(row, "input") && trace.at(i, "m") == runs.at(row, "m")) steps.push_back(i);
    ASSERT_EQ(steps.size(), std::size_t(std::stoi(runs.at(row, "iterations"))) + 1);  // iteration 0 is the start
    int first = -1;
    for (const auto i : steps)
      if (first < 0 && std::stod(trace.at(i, "residual")) <= tolerance) first = std::stoi(trace.at(i, "iteration"));
    if (first >= 0) {
      EXPECT_EQ(runs.at(row, "iterations_to_tolerance"), std::to_string(first));
      EXPECT_EQ(runs.at(row, "outcome"), "reached");
    } else {
      EXPECT_EQ(runs.at(row, "iterations_to_tolerance"), "");
      EXPECT_NE(runs.at(row, "outcome"), "reached");
    }
    EXPECT_EQ(runs.at(row, "residual"), trace.at(steps.back(), "residual"));
    EXPECT_EQ(runs.at(row, "relative_error"), trace.at(steps.back(), "relative_error"));
  }
}

}  // namespace

TEST(PinvQuestion, EveryMethodAnswersOnAUsersKernelMatrix) {
  const ScratchDir dir("pinv_question");
  const Matrix K = kernel_matrix(30, 1.5);
  std::ofstream(dir / "K.csv") << matrix_csv(K);
  const auto r = run("newton_pinv", {"--matrix", (dir / "K.csv").string(), "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const double kappa = spd_kappa(K), tolerance = 1e-8;  // the study's default --tolerance
  // Algorithm 2 from X_0 = αAᵀ, α ≤ 2/σ₁², leaves I − X_k A with the eigenvalue (1 − ασ_min²)^(2^k) ≥ 1 − 2^(k+1)/κ²,
  // so its residual ‖AX_kA − A‖₂/‖A‖₂ ≥ (1 − 2^(k+1)/κ²)/κ: at k = 20 that bound is above the tolerance here, and a
  // cap of 20 could not answer.
  const double bound_at_20 = (1 - std::ldexp(1.0, 21) / (kappa * kappa)) / kappa;
  ASSERT_GT(bound_at_20, tolerance) << "kappa " << kappa;

  const auto runs = read_csv(dir / "out" / "newton_pinv_runs.csv");
  const auto trace = read_csv(dir / "out" / "newton_pinv_trace.csv");
  ASSERT_EQ(runs.rows.size(), kMethods.size());
  for (const auto& method : kMethods) {
    SCOPED_TRACE(method);
    const auto rows = rows_where(runs, "method", method);
    ASSERT_EQ(rows.size(), 1u);
    const std::size_t row = rows[0];
    EXPECT_EQ(runs.at(row, "input"), "matrix");
    EXPECT_EQ(runs.at(row, "m"), "30");
    EXPECT_EQ(runs.at(row, "n"), "");  // a matrix has no tokens
    EXPECT_TRUE(attnlab::test::close(std::stod(runs.at(row, "kappa_2")), kappa, 1e-8, 0));
    EXPECT_TRUE(attnlab::test::close(std::stod(runs.at(row, "sigma_min_over_sigma_1")), 1 / kappa, 1e-8, 0));
    EXPECT_EQ(runs.at(row, "reference_rank"), "30");  // κ far below 1/(30 ε), the default rank tolerance
    EXPECT_DOUBLE_EQ(std::stod(runs.at(row, "rank_tolerance")), 30 * std::numeric_limits<double>::epsilon());
    EXPECT_EQ(runs.at(row, "max_iterations"), method == "svd" ? "" : "1000");
    EXPECT_FALSE(table_line(r, method).empty()) << r.err;
    if (runs.at(row, "outcome") == "reached") {
      EXPECT_TRUE(contains(table_line(r, method), " " + runs.at(row, "iterations_to_tolerance") + " "))
          << table_line(r, method);
    }
  }
  expect_runs_match_traces(runs, trace, tolerance);
  for (std::size_t i = 0; i < trace.rows.size(); ++i) ASSERT_EQ(trace.at(i, "m"), "30");

  // The released methods stop at the first iteration whose residual against A + sI, the matrix they iterate, is within
  // the tolerance (not at the released code's 20, nor at the cap).
  for (const std::string method : {"released", "released-f32"}) {
    SCOPED_TRACE(method);
    const auto row = rows_where(runs, "method", method).at(0);
    int first = -1;
    for (const auto i : rows_where(trace, "method", method))
      if (first < 0 && std::stod(trace.at(i, "residual_shifted")) <= tolerance)
        first = std::stoi(trace.at(i, "iteration"));
    ASSERT_GE(first, 0);
    EXPECT_EQ(runs.at(row, "iterations"), std::to_string(first));
    EXPECT_EQ(runs.at(row, "iterations_to_tolerance_shifted"), std::to_string(first));
  }

  const auto newton = rows_where(runs, "method", "newton");
  ASSERT_EQ(runs.at(newton[0], "outcome"), "reached");
  EXPECT_GT(std::stoi(runs.at(newton[0], "iterations_to_tolerance")), 20);
  // ‖X − A⁻¹‖₂ ≤ κ‖A⁻¹‖₂ · residual for X a polynomial in A (X − A⁻¹ = A⁻¹(AXA − A)A⁻¹).
  EXPECT_LE(std::stod(runs.at(newton[0], "relative_error")),
            kappa * std::stod(runs.at(newton[0], "residual")) * (1 + 1e-6));

  // Exploratory: no verdicts anywhere, the real size and no default n or m in what it prints.
  EXPECT_FALSE(fs::exists(dir / "out" / "claims.csv"));
  EXPECT_FALSE(fs::exists(dir / "out" / "report.md"));
  EXPECT_TRUE(read_csv(dir / "out" / "newton_pinv.csv").rows.empty());
  EXPECT_TRUE(contains(slurp(dir / "out" / "newton_pinv.json"), "\"exploratory\": true"));
  EXPECT_TRUE(contains(r.err, "exploratory")) << r.err;
  EXPECT_TRUE(contains(r.out, "30 x 30")) << r.out;
  for (const char* absent : {"holds", "violated", "1024", "m = 49", "grid"})
    EXPECT_FALSE(contains(r.err + r.out, absent)) << absent << r.err << r.out;
  if (!contains(r.err, "gnuplot not found")) {
    EXPECT_GT(fs::file_size(dir / "out" / "newton_pinv.png"), 0u);
    EXPECT_FALSE(contains(r.err, "gnuplot failed")) << r.err;
  }
}

// --max-iterations 3 caps every method: where the trace's residual is still above the tolerance at iteration 3 the
// answer is "not reached in 3", never 3.
TEST(PinvQuestion, MaxIterationsCapsEveryMethod) {
  const ScratchDir dir("pinv_question_cap");
  std::ofstream(dir / "K.csv") << matrix_csv(kernel_matrix(30, 1.5));
  const auto r = run("newton_pinv",
                     {"--matrix", (dir / "K.csv").string(), "--max-iterations", "3", "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto runs = read_csv(dir / "out" / "newton_pinv_runs.csv");
  const auto trace = read_csv(dir / "out" / "newton_pinv_trace.csv");
  expect_runs_match_traces(runs, trace, 1e-8);
  int above = 0;
  for (const auto& method : kMethods) {
    if (method == "svd") continue;
    SCOPED_TRACE(method);
    const auto rows = rows_where(runs, "method", method);
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(runs.at(rows[0], "max_iterations"), "3");
    EXPECT_LE(std::stoi(runs.at(rows[0], "iterations")), 3);
    const auto steps = rows_where(trace, "method", method);
    if (steps.size() == 4 && std::stod(trace.at(steps.back(), "residual")) > 1e-8) {
      ++above;
      EXPECT_EQ(runs.at(rows[0], "outcome"), "not_reached");
      EXPECT_TRUE(contains(table_line(r, method), "not reached in 3")) << table_line(r, method);
    }
  }
  EXPECT_GE(above, 1);  // newton needs more than 20 (the test above), so at least it is still above at 3
}

// --tokens-file: the bottleneck of the user's n = 20 tokens with m = min(49, n) = 20 landmarks, that is every token in
// some order, so κ₂ is that of the Gaussian kernel exp(−‖t_i − t_j‖²/(2√d)) of all of them (a permutation keeps it).
TEST(PinvQuestion, TokensFileAnswersUnderItsOwnSize) {
  const ScratchDir dir("pinv_question_tokens");
  const Eigen::Index n = 20, d = 3;
  std::mt19937_64 rng(attnlab::test::seed());
  std::normal_distribution<double> normal(0.0, 1.5);  // spread out: κ₂ stays far from 1/ε
  Matrix T(n, d);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < d; ++j) T(i, j) = normal(rng);
  std::ofstream(dir / "T.csv") << matrix_csv(T);
  const auto r = run("newton_pinv", {"--tokens-file", (dir / "T.csv").string(), "--method", "newton,released", "--out",
                                     (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  Matrix S(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j)
      S(i, j) = std::exp(-(T.row(i) - T.row(j)).squaredNorm() / (2 * std::sqrt(double(d))));
  const auto runs = read_csv(dir / "out" / "newton_pinv_runs.csv");
  ASSERT_EQ(runs.rows.size(), 2u);
  for (std::size_t i = 0; i < runs.rows.size(); ++i) {
    EXPECT_EQ(runs.at(i, "input"), "tokens_file");
    EXPECT_EQ(runs.at(i, "n"), "20");
    EXPECT_EQ(runs.at(i, "m"), "20");
    EXPECT_TRUE(attnlab::test::close(std::stod(runs.at(i, "kappa_2")), spd_kappa(S), 1e-8, 0));
  }
  expect_runs_match_traces(runs, read_csv(dir / "out" / "newton_pinv_trace.csv"), 1e-8);
  EXPECT_FALSE(fs::exists(dir / "out" / "claims.csv"));
  EXPECT_TRUE(contains(r.out, "m = 20 landmarks of your n = 20 tokens")) << r.out;
  EXPECT_FALSE(contains(r.err + r.out, "1024")) << r.err << r.out;
}

// Verdicts stay where they were asked for: the default run judges every claim of the study, and --claims judges the
// named claim on the user's matrix (no longer exploratory); neither prints the exploratory table.
TEST(PinvQuestion, DefaultRunAndNamedClaimsStillJudge) {
  const ScratchDir dir("pinv_question_claims");
  const auto r = run("newton_pinv", {"--quick", "--out", (dir / "default").string()});
  ASSERT_EQ(r.code, 0) << r.err;
  const auto claims = read_csv(dir / "default" / "claims.csv");
  std::vector<std::string> judged, expected;
  for (std::size_t i = 0; i < claims.rows.size(); ++i) {
    judged.push_back(claims.at(i, "claim_id"));
    EXPECT_NE(claims.at(i, "verdict"), "") << claims.at(i, "claim_id");
  }
  // The study's patterns (studies/newton_pinv.cpp), read from the registry.
  for (const auto& claim : attnlab::claim_registry().all())
    for (const std::string prefix : {"soft.prop1.", "soft.prop2_monotone", "soft.fig5.", "soft.eq12", "soft.beta_rule.",
                                     "soft.nonsingular_in_practice"})
      if (claim.id.rfind(prefix, 0) == 0) expected.push_back(claim.id);
  std::sort(judged.begin(), judged.end());
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(judged, expected);
  EXPECT_FALSE(contains(slurp(dir / "default" / "newton_pinv.json"), "exploratory"));
  EXPECT_TRUE(contains(r.out, "claims judged")) << r.out;
  // The traces keep the released code's fixed count outside exploratory runs.
  const auto runs = read_csv(dir / "default" / "newton_pinv_runs.csv");
  for (const auto i : rows_where(runs, "method", "released-beta")) EXPECT_EQ(runs.at(i, "iterations"), "20");

  std::ofstream(dir / "K.csv") << matrix_csv(kernel_matrix(30, 1.5));
  const auto asked = run("newton_pinv", {"--claims", "soft.fig5.alg2", "--matrix", (dir / "K.csv").string(), "--out",
                                         (dir / "asked").string()});
  ASSERT_EQ(asked.code, 0) << asked.err;
  const auto verdicts = read_csv(dir / "asked" / "claims.csv");
  ASSERT_EQ(verdicts.rows.size(), 1u);
  EXPECT_EQ(verdicts.at(0, "claim_id"), "soft.fig5.alg2");
  EXPECT_FALSE(contains(asked.err, "exploratory")) << asked.err;
}
