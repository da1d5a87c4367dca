// SOFT's pseudo-inverse rules as the paper writes them and as the released code runs them:
//   - parity of `released` and `released-beta` with a NumPy port of the released functions
//     (tests/reference/soft_numpy.py, fixture tests/reference/fixtures/released_pinv.txt);
//   - the released α from signed row sums of A (before the shift), the float32-built shift, the released β rule's
//     halvings against a brute-force search, its cap, and the iterations it runs when unmet;
//   - the paper's §3.3 β rule against its closed form (met exactly on column-diagonally-dominant A), reported
//     rather than thrown when unmet;
//   - divergence of the released start αR exactly where an eigenvalue μ of R has |1 − αμ²| > 1;
//   - singular and rank-deficient inputs against an independent rank-revealing SVD reference, every method's
//     traced numbers against an independent recomputation.
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/linalg.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/soft/kernel.hpp>
#include <attnlab/soft/pinv.hpp>
#include <attnlab/soft/spectral.hpp>
#include <attnlab/soft/tokens.hpp>

#include "support.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace attnlab;

namespace {

constexpr double eps = std::numeric_limits<double>::epsilon();
const std::string kFixture = ATTNLAB_SOURCE_DIR "/tests/reference/fixtures/released_pinv.txt";
const std::vector<PinvMethod> kAllMethods{PinvMethod::svd,      PinvMethod::newton,        PinvMethod::newton_beta,
                                          PinvMethod::released, PinvMethod::released_beta, PinvMethod::nystromformer};

MatrixD identity(Index m) { return MatrixD::Identity(m, m); }
double norm1(const MatrixD& A) { return A.cwiseAbs().colwise().sum().maxCoeff(); }
double norm2(const MatrixD& M) { return linalg::jacobi_singular_values(M)(0); }
double sum_rounding(Index m) { return double(m) * eps / (1 - double(m) * eps); }  // Higham's γ_m for a length-m sum

MatrixD gaussian_matrix(Index rows, Index cols, std::uint64_t key, double sigma = 1.0) {
  MatrixD M(rows, cols);
  fill_gaussian(M, GaussianStream(test::seed(), hash_words({hash_string("test_pinv_rules"), key}), 0, StreamTag::A),
                sigma);
  return M;
}

// The Gaussian kernel of m tokens N(0, d^-1/2) (unit bandwidth), drawn from key.
MatrixD kernel_bottleneck(Index m, Index d, std::uint64_t key, double token_scale = 1.0) {
  const MatrixD T = gaussian_matrix(m, d, key, token_scale * std::pow(double(d), -0.25));
  return gaussian_kernel(T, T);
}

// The rank-revealing reference of the tests: one-sided Jacobi SVD (not the library's eigen-decomposition path),
// singular values ≤ relative·σ₁ dropped.
struct Reference {
  MatrixD pinv;
  Index rank = 0;
};
Reference svd_pinv(const MatrixD& M, double relative) {
  const linalg::ThinSvd svd = linalg::jacobi_svd(M);
  const VectorD& s = svd.singular_values;
  const double cut = relative * s(0);
  const VectorD inv = s.unaryExpr([&](double v) { return v > cut ? 1 / v : 0.0; });
  return {svd.V * inv.asDiagonal() * svd.U.transpose(), (s.array() > cut).count()};
}
double default_cutoff(const MatrixD& M) { return double(std::max(M.rows(), M.cols())) * eps; }

// ---- The fixture -----------------------------------------------------------------------------------

struct ReleasedRun {
  double alpha = 0, shift = 0, pnorm = 0;
  int halvings = -1;
  MatrixD X;
};
struct FixtureCase {
  std::string name;
  Index m = 0;
  int iterations = 0;
  MatrixD A;
  std::map<std::string, ReleasedRun> runs;  // released, released-float32, released-beta
};

std::vector<FixtureCase> read_fixture() {
  std::ifstream in(kFixture);
  if (!in)
    throw std::runtime_error("released_pinv fixture " + kFixture +
                             ": cannot open (regenerate it with /usr/bin/python3 tests/reference/soft_numpy.py "
                             "--released-fixture " +
                             kFixture + ")");
  std::vector<FixtureCase> cases;
  int line_number = 0;
  std::string line;
  const auto next = [&]() -> std::istringstream {
    if (!std::getline(in, line))
      throw std::runtime_error(text("released_pinv fixture: ends early after line ", line_number));
    ++line_number;
    return std::istringstream(line);
  };
  const auto number = [&](std::istringstream& s) {
    std::string token;
    if (!(s >> token))
      throw std::runtime_error(text("released_pinv fixture line ", line_number, ": a number is missing"));
    return std::stod(token);  // also reads nan and inf
  };
  const auto matrix = [&](Index m) {
    MatrixD M(m, m);
    for (Index i = 0; i < m; ++i) {
      auto row = next();
      for (Index j = 0; j < m; ++j) M(i, j) = number(row);
    }
    return M;
  };
  while (std::getline(in, line)) {
    ++line_number;
    if (line.empty() || line[0] == '#') continue;
    std::istringstream head(line);
    std::string word;
    FixtureCase c;
    head >> word >> c.name >> c.m >> c.iterations;
    if (word != "case" || c.m < 1 || c.iterations < 1)
      throw std::runtime_error(
          text("released_pinv fixture line ", line_number, ": expected 'case <name> <m> <iterations>'"));
    c.A = matrix(c.m);
    for (auto s = next(); s >> word && word != "end"; s = next()) {
      ReleasedRun run;
      run.alpha = number(s);
      if (word == "released-beta") {
        run.halvings = int(number(s));
        run.pnorm = number(s);
      } else {
        run.shift = number(s);
      }
      run.X = matrix(c.m);
      c.runs[word] = run;
    }
    cases.push_back(std::move(c));
  }
  return cases;
}

// A first-order bound on ‖X_T(ours) − X_T(theirs)‖_F for T steps X ← 2X − (XR)X from X_0 = αR on both sides, each
// rounding its own way: a perturbation δ of X_k becomes 2δ − δRX − XRδ = (I − XR)δ + δ(I − RX), so it grows by at
// most g_k = ‖I − X_kR‖₂ + ‖I − RX_k‖₂ per step, and each side adds at most ρ_k = γ_m(‖X‖‖R‖ + ‖XR‖‖X‖) +
// 2ε(2‖X‖ + ‖XRX‖) (Frobenius norms: |fl(AB) − AB| ≤ γ_m|A||B| entrywise) in its two products and the update.
// The starting points differ by |Δα|·‖R‖.
double propagated_rounding(const MatrixD& R, double alpha, double alpha_difference, int iterations) {
  const Index m = R.rows();
  const double g = sum_rounding(m);
  MatrixD X = alpha * R;
  double bound = alpha_difference * R.norm();
  for (int k = 0; k < iterations; ++k) {
    const MatrixD XR = X * R, XRX = XR * X;
    const double growth = norm2(identity(m) - XR) + norm2(identity(m) - R * X);
    const double rounding = g * (X.norm() * R.norm() + XR.norm() * X.norm()) + 2 * eps * (2 * X.norm() + XRX.norm());
    bound = growth * bound + 2 * rounding;  // both sides round
    X = 2 * X - XRX;
  }
  return bound;
}

// |Δα| for α = c/r² with r = max_i Σ_j a_ij summed in two orders: each sum is within γ_m Σ_j |a_ij| of exact.
double alpha_difference(const MatrixD& A, double alpha) {
  const double r = A.rowwise().sum().maxCoeff();
  const double sum_error = 2 * sum_rounding(A.cols()) * A.cwiseAbs().rowwise().sum().maxCoeff();
  return alpha * (2 * sum_error / std::abs(r) + 4 * eps);
}

// The worst of |ours − theirs| / limit, printed as a percentage.
void report_worst(const std::string& what, double distance, double limit) {
  std::cout << "[ parity   ] " << what << ": " << distance << " (" << 100 * distance / limit << "% of the limit "
            << limit << ")\n";
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Parity with the NumPy port of the released functions

TEST(PinvRules, ReleasedMatchesTheNumPyPortOfTheReleasedCode) {
  const auto cases = read_fixture();
  ASSERT_EQ(cases.size(), 7u) << "the fixture holds 7 cases (soft_numpy.py released_fixture_cases)";
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    for (const auto& [label, want] : c.runs) {
      SCOPED_TRACE(label);
      const bool beta = label == "released-beta";
      const PinvOptions options{.method = beta ? PinvMethod::released_beta : PinvMethod::released,
                                .max_iterations = c.iterations,
                                .tolerance = 0,
                                .trace = false,
                                .float32_shift = label == "released-float32"};
      const auto got = pseudo_inverse(c.A, options);
      ASSERT_FALSE(got.diverged) << got.status;  // every fixture run stays finite
      EXPECT_EQ(got.iterations, c.iterations);
      EXPECT_EQ(got.shift, want.shift);  // exact: 0.01 or 0.01f, both read back exactly
      const double d_alpha = alpha_difference(c.A, want.alpha);
      EXPECT_TRUE(test::close(got.alpha, want.alpha, 0, d_alpha));
      if (beta) {
        EXPECT_EQ(got.beta_halvings, want.halvings);
        // ‖I − A·αA‖₁: each entry within γ_m(|A||αA|)_ij of exact, each column sum of m of them within γ_m of its
        // value, on both sides; plus the α difference times ‖A²‖₁.
        const MatrixD absolute_square = c.A.cwiseAbs() * (want.alpha * c.A.cwiseAbs());
        const double limit = 2 * sum_rounding(c.m) * (norm1(absolute_square) + want.pnorm + 1) +
                             d_alpha * norm1(c.A * c.A);
        EXPECT_TRUE(test::close(got.beta_rule_excess + 1.01, want.pnorm, 0, limit));
        EXPECT_EQ(got.beta_rule_met, want.pnorm <= 1.01);
      }
      const MatrixD R = c.A + want.shift * identity(c.m);
      const double limit = propagated_rounding(R, want.alpha, d_alpha, c.iterations);
      const double distance = (got.inverse - want.X).norm();
      report_worst(c.name + " " + label + " ||X - X_numpy||_F", distance, limit);
      EXPECT_LE(distance, limit);
      // The limit must be able to fail: it lies below what a genuine rule slip (α taken from A + 0.01 I, a start
      // αRᵀ) would change where 20 iterations leave part of the spectrum unconverged; checked on `clustered`.
      if (c.name == "clustered" && label == "released") {
        const double r_shifted = R.rowwise().sum().maxCoeff();
        const auto slip = pseudo_inverse(c.A, {.method = PinvMethod::released,
                                               .max_iterations = c.iterations,
                                               .tolerance = 0,
                                               .alpha = 1.8 / (r_shifted * r_shifted),
                                               .trace = false});
        EXPECT_GT((slip.inverse - want.X).norm(), 10 * limit) << "alpha from A + 0.01 I is indistinguishable here";
      }
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// The released rule: α, the shift, the start

// The released α is 1.8/r² with r the largest signed row sum of A (not of A + sI, not of |A|), and X_0 = α(A + sI).
TEST(PinvRules, ReleasedTakesAlphaFromTheSignedRowSumsOfA) {
  MatrixD A = kernel_bottleneck(12, 8, 1) - MatrixD::Constant(12, 12, 0.5);  // negative entries: signed ≠ absolute
  double r = -HUGE_VAL;
  for (Index i = 0; i < A.rows(); ++i) {
    double row = 0;
    for (Index j = 0; j < A.cols(); ++j) row += A(i, j);
    r = std::max(r, row);
  }
  ASSERT_LT(r, A.cwiseAbs().rowwise().sum().maxCoeff() * 0.99) << "the input does not tell signed from absolute sums";
  const auto start = pseudo_inverse(A, {.method = PinvMethod::released, .max_iterations = 1, .trace = false});
  EXPECT_TRUE(test::close(start.alpha, 1.8 / (r * r), 0, alpha_difference(A, 1.8 / (r * r))));
  // One step from X_0 = αR is 2αR − α²R³.
  const MatrixD R = A + 0.01 * identity(12);
  const MatrixD one_step = 2 * start.alpha * R - start.alpha * start.alpha * R * R * R;
  EXPECT_LE(
      (start.inverse - one_step).norm(),
      8 * sum_rounding(12) *
          (start.alpha * start.alpha * (R.cwiseAbs() * R.cwiseAbs() * R.cwiseAbs()).norm() + start.alpha * R.norm()));
}

// torch.eye makes I in float32, so the released shift is 0.01f; after enough iterations to converge each variant
// reaches its own (A + sI)⁻¹, and the two differ by ≈ −Δs·R⁻² (first order in Δs = 0.01f − 0.01 ≈ −2.2e-10).
TEST(PinvRules, Float32ShiftIsWhatTheReleasedFloat32IdentityAdds) {
  EXPECT_EQ(kReleasedShiftFloat32, double(0.01f));
  EXPECT_NE(kReleasedShiftFloat32, 0.01);
  const MatrixD A = kernel_bottleneck(10, 16, 2);
  const auto exact = pseudo_inverse(
      A, {.method = PinvMethod::released, .max_iterations = 60, .tolerance = 0, .trace = false});
  const auto f32 = pseudo_inverse(
      A, {.method = PinvMethod::released, .max_iterations = 60, .tolerance = 0, .trace = false, .float32_shift = true});
  EXPECT_EQ(exact.shift, 0.01);
  EXPECT_EQ(f32.shift, double(0.01f));
  const MatrixD R = A + 0.01 * identity(10), R_inverse = linalg::inverse(R);
  const double kappa = norm2(R) * norm2(R_inverse), floor = 10 * 10 * eps * kappa * norm2(R_inverse);
  EXPECT_LE(norm2(exact.inverse - R_inverse), floor);
  const double ds = double(0.01f) - 0.01;
  const MatrixD predicted = -ds * R_inverse * R_inverse;
  // Second order: Δs²‖R⁻¹‖³ (negligible); the rest is each iterate's rounding floor.
  EXPECT_LE(norm2((f32.inverse - exact.inverse) - predicted), 2 * floor + ds * ds * std::pow(norm2(R_inverse), 3));
  EXPECT_GT(norm2(predicted), 10 * 2 * floor) << "the shift's effect is below the rounding floor here";
}

// Both released functions start from αR, not αRᵀ: X_k stays a polynomial in R, so on an eigenvalue μ of a
// diagonalisable R the deficit e = 1 − μx follows e ← e² from e₀ = 1 − αμ²: the run diverges exactly when some
// |1 − αμ²| > 1. That happens on a non-symmetric kernel (complex μ), and on a small-scale A where α = 1.8/r² is
// taken before the shift: α(σ₁ + s)² > 2 once s is comparable to σ₁. Newton from αAᵀ converges on both.
TEST(PinvRules, ReleasedDivergesExactlyWhereItsStartOvershoots) {
  const MatrixD Q = gaussian_matrix(14, 16, 3, 0.5), K = gaussian_matrix(14, 16, 4, 0.5);
  const MatrixD well = kernel_bottleneck(14, 16, 5);
  struct Case {
    std::string label;
    MatrixD A;
  };
  int diverged = 0, converged = 0;
  // 0.005 x kernel: α(σ₁(R))² = 1.8(σ₁ + 2)²/r² with σ₁ ≤ r ≤ 14, far above 2 for these kernels (r ≈ σ₁ ≈ 6).
  for (const auto& [label, A] : {Case{"non-symmetric exp(Q - K)", gaussian_kernel(Q, K)},
                                 Case{"0.005 x kernel", 0.005 * well}, Case{"kernel", well}}) {
    SCOPED_TRACE(label);
    const auto r = pseudo_inverse(A, {.method = PinvMethod::released, .max_iterations = 200, .tolerance = 0});
    const MatrixD R = A + r.shift * identity(A.rows());
    const Eigen::VectorXcd mu = linalg::eigenvalues(R);
    double worst = 0;
    for (Index i = 0; i < mu.size(); ++i) worst = std::max(worst, std::abs(1.0 - r.alpha * mu(i) * mu(i)));
    ASSERT_GT(std::abs(worst - 1), 1e-6) << "too close to the edge to predict";
    EXPECT_EQ(r.diverged, worst > 1) << r.status << " (max |1 - alpha mu^2| = " << worst << ")";
    const auto newton = pseudo_inverse(A, {.method = PinvMethod::newton, .max_iterations = 400});
    EXPECT_FALSE(newton.diverged) << newton.status;
    (r.diverged ? diverged : converged) += 1;
  }
  EXPECT_GE(diverged, 1);
  EXPECT_GE(converged, 1);
}

// ---------------------------------------------------------------------------------------------------
// The β rules

// The released SOFT++ rule: n is the first of 0..10 with ‖I − α_n A²‖₁ ≤ 1.01 (α_n = 2^-n·2/r²), or 10 when none is;
// then the iterations run anyway. Checked by a brute-force search on kernels, a signed matrix and one whose tiny
// signed row sums make α enormous (no n ≤ 10 can meet it).
TEST(PinvRules, ReleasedBetaRuleTakesTheFirstHalvingBelowTheThresholdAndIteratesAnyway) {
  MatrixD cancelling(2, 2);
  cancelling << 2, -1.9, -1.9, 2;  // row sums 0.1: α = 200, ‖I − αA²‖₁ ≈ 3000
  for (const MatrixD& A : {kernel_bottleneck(16, 16, 6), kernel_bottleneck(24, 16, 7, 0.3),
                           MatrixD(kernel_bottleneck(16, 16, 8) - MatrixD::Constant(16, 16, 0.4)), cancelling}) {
    SCOPED_TRACE(text("m = ", A.rows(), ", A(0,1) = ", A(0, 1)));
    const double r = A.rowwise().sum().maxCoeff();
    const auto norm_at = [&](int n) {
      const double alpha = std::ldexp(2 / (r * r), -n);
      return norm1(identity(A.rows()) - alpha * A * A);
    };
    int expected = 0;
    while (expected < 10 && norm_at(expected) > 1.01) ++expected;
    const auto got = pseudo_inverse(A, {.method = PinvMethod::released_beta, .tolerance = 0});
    EXPECT_EQ(got.beta_halvings, expected);
    EXPECT_EQ(got.beta_rule_met, norm_at(expected) <= 1.01);
    EXPECT_TRUE(test::close(got.alpha, std::ldexp(2 / (r * r), -expected), 4 * sum_rounding(A.rows()), 0));
    EXPECT_TRUE(
        test::close(got.beta_rule_excess, norm_at(expected) - 1.01, 0, 4 * sum_rounding(A.rows()) * norm_at(expected)));
    if (!got.diverged) {
      EXPECT_EQ(got.iterations, 20);  // the released count, met or not
    }
    EXPECT_NE(got.status.find(got.beta_rule_met ? "met at n" : "unmet after 10"), std::string::npos) << got.status;
  }
  // Unmet, it still iterates from α_10: three steps (from α_10 = 0.195 the eigenvalue 3.9 has e₀ = 1 − αλ² ≈ −2, so
  // twenty would overflow) equal the explicit recurrence.
  const auto unmet = pseudo_inverse(cancelling,
                                    {.method = PinvMethod::released_beta, .max_iterations = 3, .tolerance = 0});
  EXPECT_FALSE(unmet.beta_rule_met);
  EXPECT_EQ(unmet.beta_halvings, 10);
  EXPECT_EQ(unmet.iterations, 3);
  MatrixD X = unmet.alpha * cancelling;
  for (int k = 0; k < 3; ++k) X = 2 * X - X * cancelling * X;
  EXPECT_LE((unmet.inverse - X).norm(), propagated_rounding(cancelling, unmet.alpha, 0, 3));
}

// The paper's rule in closed form. For column j, |1 − αa_jj| + αΣ_{i≠j}|a_ij| ≤ 1 needs a_jj > 0 and
// Σ_{i≠j}|a_ij| ≤ a_jj (if αa_jj ≤ 1 it reads α(off_j − a_jj) ≤ 0; if αa_jj > 1 it reads α(a_jj + off_j) ≤ 2, which
// forces off_j < a_jj), and then holds iff α‖A‖₁ ≤ 2. So with α_n = 2βⁿ/‖A‖₁²: met iff A is column-diagonally
// dominant with a positive diagonal, at n = max(0, ⌈log₂(1/‖A‖₁)⌉); otherwise no n meets it.
TEST(PinvRules, PaperBetaRuleIsMetExactlyOnDiagonallyDominantMatrices) {
  int met = 0, unmet = 0;
  for (std::uint64_t key = 10; key < 40; ++key) {
    MatrixD A = gaussian_matrix(6, 6, key);
    A = A + A.transpose().eval();
    const VectorD off = A.cwiseAbs().colwise().sum().transpose() - A.diagonal().cwiseAbs();
    if (key % 3 == 0) A.diagonal() = 1.2 * off;  // dominant
    if (key % 3 == 1) A.diagonal() = 0.8 * off;  // positive diagonal, not dominant
    A *= std::exp2(double(key % 7) - 3);         // ‖A‖₁ on both sides of 1
    bool dominant = true;
    for (Index j = 0; j < 6; ++j) dominant &= A(j, j) > 0 && A.col(j).cwiseAbs().sum() - A(j, j) <= A(j, j);
    const auto r = pseudo_inverse(A, {.method = PinvMethod::newton_beta, .max_iterations = 1});
    SCOPED_TRACE(text("key ", key, ", ||A||_1 = ", norm1(A), dominant ? ", dominant" : ""));
    EXPECT_EQ(r.beta_rule_met, dominant) << r.status;
    if (dominant) {
      EXPECT_EQ(r.beta_halvings, std::max(0, int(std::ceil(std::log2(1 / norm1(A))))));
      ++met;
    } else {
      EXPECT_EQ(r.beta_halvings, 64);  // the search cap: the paper sets none
      EXPECT_GT(r.beta_rule_excess, 0);
      ++unmet;
    }
  }
  EXPECT_GT(met, 3);
  EXPECT_GT(unmet, 3);
}

// Unmet, the paper's rule reports n, the excess and the α it stopped at, and iterates from it instead of throwing.
TEST(PinvRules, PaperBetaRuleReportsUnmetInsteadOfThrowing) {
  const MatrixD A = kernel_bottleneck(32, 16, 9);
  ASSERT_GT(norm1(A), 2.0) << "a unit-diagonal kernel with a column sum past 2 is not diagonally dominant";
  const auto r = pseudo_inverse(A, {.method = PinvMethod::newton_beta, .max_iterations = 30, .tolerance = 0});
  EXPECT_FALSE(r.beta_rule_met);
  EXPECT_EQ(r.beta_halvings, 64);
  EXPECT_TRUE(test::close(r.alpha, std::ldexp(2 / (norm1(A) * norm1(A)), -64), 1e-15, 0));
  EXPECT_GT(r.beta_rule_excess, 0);
  EXPECT_EQ(r.iterations, 30);
  EXPECT_NE(r.status.find("unmet after 64"), std::string::npos) << r.status;
  const auto capped = pseudo_inverse(A,
                                     {.method = PinvMethod::newton_beta, .max_iterations = 1, .beta_max_halvings = 3});
  EXPECT_EQ(capped.beta_halvings, 3);
  EXPECT_FALSE(capped.beta_rule_met);
}

// ---------------------------------------------------------------------------------------------------
// Singular and rank-deficient inputs

// Every method accepts exactly singular (repeated tokens), rank-deficient (B Bᵀ) and numerically singular (tokens
// evenly spaced on a segment, κ ~ 1e18) matrices; the reference's rank equals an independent SVD's, and each
// traced number equals its independent recomputation from the returned iterate.
TEST(PinvRules, SingularInputsAreAcceptedAndTheirNumbersAreRight) {
  const MatrixD distinct = gaussian_matrix(6, 16, 11, std::pow(16.0, -0.25));
  MatrixD repeated(12, 16);
  for (Index i = 0; i < 12; ++i) repeated.row(i) = distinct.row(i / 2);
  const MatrixD B = gaussian_matrix(10, 3, 12);
  MatrixD segment(12, 16);
  for (Index i = 0; i < 12; ++i) segment.row(i).setConstant(0.25 * double(i) / 11);
  struct Case {
    std::string label;
    MatrixD A;
    Index rank;  // -1: decided by the reference's cutoff
  };
  for (const auto& [label, A, rank] :
       {Case{"repeated tokens", gaussian_kernel(repeated, repeated), 6}, Case{"B B^T, rank 3", B * B.transpose(), 3},
        Case{"segment", gaussian_kernel(segment, segment), -1}}) {
    for (auto method : kAllMethods) {
      SCOPED_TRACE(text(label, " ", to_string(method)));
      const auto r = pseudo_inverse(A, {.method = method, .max_iterations = 60, .tolerance = 0});
      const Reference ref = svd_pinv(A, default_cutoff(A));
      if (rank >= 0) {
        EXPECT_EQ(ref.rank, rank);
      }
      EXPECT_EQ(r.reference_rank, ref.rank);
      ASSERT_FALSE(r.trace.empty());
      EXPECT_FALSE(r.status.empty());
      if (r.diverged) continue;
      const auto& last = r.trace.back();
      const MatrixD& X = r.inverse;
      const double normA = norm2(A), pinv_norm = norm2(ref.pinv);
      // The library's spectral norms (dense or Lanczos to 1e-8) against Jacobi SVD, and its A† (eigen-decomposition)
      // against this one: within rounding of ‖A†‖ (the pseudo-inverse is ill-conditioned past the cutoff).
      const double floor = 100 * double(A.rows()) * eps * norm2(A) * pinv_norm * pinv_norm;
      EXPECT_TRUE(test::close(last.residual, norm2(A * X * A - A) / normA, 1e-7,
                              10 * double(A.rows()) * eps * norm2(X) * normA));
      EXPECT_TRUE(test::close(last.error, norm2(X - ref.pinv), 1e-7, floor));
      if (method == PinvMethod::released) {
        const MatrixD R = A + r.shift * identity(A.rows());
        const Reference shifted = svd_pinv(R, default_cutoff(R));
        EXPECT_TRUE(test::close(last.residual_shifted, norm2(R * X * R - R) / norm2(R), 1e-7,
                                10 * double(A.rows()) * eps * norm2(X) * norm2(R)));
        EXPECT_TRUE(test::close(last.error_shifted, norm2(X - shifted.pinv), 1e-7,
                                100 * double(A.rows()) * eps * norm2(R) * std::pow(norm2(shifted.pinv), 2)));
      } else {
        EXPECT_TRUE(std::isnan(last.residual_shifted));
        EXPECT_TRUE(std::isnan(last.error_shifted));
      }
      if (method == PinvMethod::svd) {
        EXPECT_LE(norm2(X - ref.pinv), floor);  // the library's reference is the same A†
        EXPECT_LE(norm2(A * X * A - A), 10 * double(A.rows()) * eps * normA * normA * pinv_norm);
      }
    }
  }
}

// A rank-11 PSD matrix U diag(1 .. 1e-3, 0) Uᵀ: computed, its zero eigenvalue becomes rounding (|λ| ~ ε‖A‖, of
// either sign), far below the reference's cutoff, so A† treats it as zero while Newton–Schulz sees x ← 2x − λx²,
// which doubles the iterate's component along that eigenvector every step from x₀ = αλ. The iteration first
// reaches A† (error at the rounding floor of the rank-11 part), then leaves it: what Prop 1 meets in double
// precision on a singular bottleneck. (Exactly repeated tokens behave the same unless the kernel happens to give
// them bit-identical columns, which leaves no component to grow.)
TEST(PinvRules, NewtonOnASingularMatrixReachesThePseudoInverseThenLeavesIt) {
  const Index m = 12;
  const MatrixD U = linalg::householder_q(gaussian_matrix(m, m, 13));
  VectorD lambda(m);
  for (Index i = 0; i < m - 1; ++i) lambda(i) = std::pow(1e-3, double(i) / double(m - 2));
  lambda(m - 1) = 0;
  MatrixD A = U * lambda.asDiagonal() * U.transpose();
  A = 0.5 * (A + A.transpose()).eval();
  const linalg::SymmetricEigen eig = linalg::symmetric_eigen(A);
  const VectorD v = eig.vectors.col(0);  // the smallest |λ|: the zero one, computed
  const double noise = std::abs(eig.values(0));
  ASSERT_GT(noise, 0.0) << "the computed zero eigenvalue is exactly zero: nothing to grow";
  ASSERT_LE(noise, 10 * double(m) * eps * norm2(A));
  const auto r = pseudo_inverse(A, {.method = PinvMethod::newton, .max_iterations = 200, .tolerance = 0});
  const Reference ref = svd_pinv(A, default_cutoff(A));
  ASSERT_EQ(ref.rank, m - 1);
  const double kappa = 1e3, pinv_norm = norm2(ref.pinv);  // the condition of the rank-11 part
  double best = HUGE_VAL;
  for (const auto& step : r.trace) best = std::min(best, step.error);
  EXPECT_LE(best, 100 * double(m) * eps * kappa * kappa * pinv_norm);
  EXPECT_GT(r.trace.back().error, 1e6 * best) << r.status;
  // The component along v doubles per step once it stands above fresh rounding (≥ 1e3 ε ‖X‖) and until the −λx²
  // term could reach 1%: λ here is what the products' rounding makes of the zero eigenvalue, at most about m ε ‖A‖
  // (more than the stored A's eigenvalue `noise`), so the window ends at m ε ‖A‖ x = 1e-2.
  int doublings = 0;
  double previous = 0;
  for (int k = 40; k <= 160; k += 4) {
    const MatrixD X =
        pseudo_inverse(A, {.method = PinvMethod::newton, .max_iterations = k, .tolerance = 0, .trace = false}).inverse;
    const double along = (X * v).norm();
    if (previous > 1e3 * eps * norm2(X) && double(m) * eps * norm2(A) * along <= 1e-2) {
      EXPECT_TRUE(test::close(along / previous, 16.0, 0.05, 0)) << "iterations " << k - 4 << " to " << k;
      ++doublings;
    }
    previous = along;
  }
  EXPECT_GE(doublings, 5);
}

// The reference's cutoff is the documented option: on diag(1, 1e-3, 1e-9) the default keeps all three (1e-9 >
// 3ε), a relative tolerance of 1e-6 drops the last, and A† follows.
TEST(PinvRules, RankToleranceSetsTheReferenceCutoff) {
  const MatrixD A = VectorD((VectorD(3) << 1, 1e-3, 1e-9).finished()).asDiagonal();
  const auto full = pseudo_inverse(A, {.method = PinvMethod::svd});
  EXPECT_EQ(full.reference_rank, 3);
  EXPECT_TRUE(test::close(full.inverse(2, 2), 1e9, 1e-12, 0));
  const auto cut = pseudo_inverse(A, {.method = PinvMethod::svd, .rank_tolerance = 1e-6});
  EXPECT_EQ(cut.reference_rank, 2);
  EXPECT_EQ(cut.inverse(2, 2), 0.0);
  EXPECT_TRUE(test::close(cut.inverse(1, 1), 1e3, 1e-12, 0));
  EXPECT_NE(cut.status.find("rank 2"), std::string::npos) << cut.status;
}
