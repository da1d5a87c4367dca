// The SOFT layer: Lanczos spectral norms against the SVD; every pseudo-inverse method against the
// Penrose conditions, the direct inverse and the closed form its iterates take on a symmetric matrix;
// the Gaussian kernel, the Nyström reconstruction and SOFT attention against dense computations; the
// bottleneck samplers, the token ensembles and the rejection of bad input.
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
#include <limits>
#include <set>
#include <vector>

using namespace attnlab;

namespace {

constexpr double eps = std::numeric_limits<double>::epsilon();

struct SoftTolerances {
  double lanczos_rel = 1e-8;      // Lanczos stops once σ₁² moves by < 1e-10 relative per step
  double pinv_tolerance = 1e-10;  // the residual the Newton iterations are asked to reach
  double rounding = 10;           // c in c·m·ε·κ: backward-stable dense algebra of size m and condition κ
  double sigmas = 6;              // statistical checks: a 6σ miss has probability ~2e-9
};
constexpr SoftTolerances soft_tol{};

// The rounding floor of a size-m computation with condition number κ.
double floor_of(Index m, double kappa) { return soft_tol.rounding * double(m) * eps * kappa; }

MatrixD gaussian_matrix(Index rows, Index cols, std::uint64_t key, double sigma = 1.0) {
  MatrixD M(rows, cols);
  fill_gaussian(M, GaussianStream(test::seed(), hash_words({hash_string("test_soft"), key}), 0, StreamTag::A), sigma);
  return M;
}

// Eigen's one-sided Jacobi SVD, used directly so that the references do not run through the code under test
// (nor through Eigen 3.4's BDCSVD, which the library gave up: see SvdReferenceHoldsWhenMostSingularValuesVanish).
VectorD singular_values_reference(const MatrixD& M) { return linalg::jacobi_singular_values(M); }
double norm2(const MatrixD& M) { return singular_values_reference(M)(0); }
double condition(const MatrixD& M) {
  const VectorD s = singular_values_reference(M);
  return s(0) / s(s.size() - 1);
}
Index numerical_rank(const MatrixD& M) {
  const VectorD s = singular_values_reference(M);
  const double cut = double(std::max(M.rows(), M.cols())) * eps * s(0);
  return (s.array() > soft_tol.rounding * cut).count();
}
double norm1(const MatrixD& A) { return A.cwiseAbs().colwise().sum().maxCoeff(); }
double norm_inf(const MatrixD& A) { return A.cwiseAbs().rowwise().sum().maxCoeff(); }
MatrixD identity(Index m) { return MatrixD::Identity(m, m); }

TokenSpec token_spec(TokenEnsemble kind, Index n, Index d) {
  TokenSpec spec;
  spec.kind = kind;
  spec.n = n;
  spec.d = d;
  if (kind == TokenEnsemble::grid) {
    spec.grid_h = Index(std::sqrt(double(n)));
    while (n % spec.grid_h) --spec.grid_h;
    spec.grid_w = n / spec.grid_h;
  }
  return spec;
}

// Bottleneck matrices A = exp(T ⊖ T) of the four ensembles, m from 16 to 64, conditioned (κ ≲ 1e3) so
// that a 1e-10 residual lies well above the rounding floor.
struct Bottleneck {
  std::string label;
  MatrixD A;
};
std::vector<Bottleneck> bottlenecks() {
  std::vector<Bottleneck> out;
  for (auto [kind, m] : {std::pair{TokenEnsemble::gaussian, Index{32}}, std::pair{TokenEnsemble::clustered, Index{36}},
                         std::pair{TokenEnsemble::low_rank, Index{16}}, std::pair{TokenEnsemble::grid, Index{64}}}) {
    auto spec = token_spec(kind, m, 16);
    spec.spread = 0.3;  // clusters of near-duplicates would make A singular to working precision
    spec.rank = 8;      // rank 4 in d = 16 puts two of 16 tokens close enough for κ ~ 1e3 at times
    const MatrixD T = draw_tokens(spec, test::seed(), 0);
    out.push_back({spec.describe(), gaussian_kernel(T, T)});
  }
  return out;
}

// Iterated on a symmetric A, Newton–Schulz and Nyströmformer's iteration stay polynomials in A: on an
// eigenvalue λ the deficit e = 1 − λx of the iterate's eigenvalue x follows e ← e² from e₀ = 1 − αλ²
// (X₀ = αA), or e ← e³(3 + e)/4 from e₀ = 1 − λ²/(‖A‖₁‖A‖∞). The 2-norms follow from the eigenvalues:
// ‖AXA − A‖₂/‖A‖₂ = max λ|e|/λ_max and ‖X − A⁻¹‖₂ = max |e|/λ.
struct ScalarTrace {
  std::vector<double> residual, error;
};
ScalarTrace scalar_trace(const MatrixD& A, PinvMethod method, double alpha, int iterations) {
  const VectorD lambda = linalg::symmetric_eigenvalues(0.5 * (A + A.transpose()));
  const bool cubic = method == PinvMethod::nystromformer;
  const double z0 = cubic ? 1 / (norm1(A) * norm_inf(A)) : alpha;
  // Newton: |e_k| = |e₀|^(2^k) through log|e₀| = log1p(−αλ²), which keeps an α of 1e-17 from rounding away.
  const VectorD log_e0 = (z0 * lambda.array().square()).unaryExpr([](double t) {
    return t < 1 ? std::log1p(-t) : std::log(t - 1);
  });
  VectorD e = (1 - z0 * lambda.array().square()).matrix();
  ScalarTrace out;
  for (int k = 0; k <= iterations; ++k) {
    if (!cubic && k > 0) e = (std::ldexp(1.0, k) * log_e0.array()).exp().matrix();
    out.residual.push_back((lambda.array() * e.array()).abs().maxCoeff() / lambda.maxCoeff());
    out.error.push_back((e.array() / lambda.array()).abs().maxCoeff());
    if (cubic) e = (e.array().cube() * (3 + e.array()) / 4).matrix();
  }
  return out;
}

// The first iteration whose residual the scalar recurrence puts below `tolerance`.
int iterations_to_reach(const ScalarTrace& t, double tolerance) {
  const auto it = std::find_if(t.residual.begin(), t.residual.end(), [&](double r) { return r < tolerance; });
  return static_cast<int>(it - t.residual.begin());
}

// The matrix an iteration works on: the released code inverts A + 0.01 I.
MatrixD iterated_matrix(const MatrixD& A, PinvMethod method) {
  return method == PinvMethod::released ? MatrixD(A + 0.01 * identity(A.rows())) : A;
}

// The β rule has no α on a unit-diagonal A ≥ 0 with a column summing past 2 (BetaRuleSaysWhenNoHalvingSatisfiesIt):
// newton-beta is iterated on I + c(A − I), c bringing every column sum to at most 1.9.
MatrixD input_for(const MatrixD& A, PinvMethod method) {
  if (method != PinvMethod::newton_beta) return A;
  const MatrixD off = A - identity(A.rows());
  return identity(A.rows()) + (0.9 / off.cwiseAbs().colwise().sum().maxCoeff()) * off;
}

// ‖M − R‖ ≤ limit, reported with the ratio.
::testing::AssertionResult within(double distance, double limit, const char* what) {
  if (distance <= limit) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << what << ": " << distance << " > limit " << limit << " ("
                                       << 100 * distance / limit << "% of it)";
}

// f() throws std::invalid_argument whose message names `parameter`.
template <class F>
::testing::AssertionResult rejects(F&& f, const std::string& parameter) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    if (std::string(e.what()).find(parameter) != std::string::npos) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "message '" << e.what() << "' does not name '" << parameter << "'";
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "threw something other than invalid_argument: " << e.what();
  }
  return ::testing::AssertionFailure() << "accepted the input (expected a complaint about '" << parameter << "')";
}

// ‖I − αA‖₁ − 1 without the cancellation of 1 − αA_jj (which rounds to 1 once αA_jj < ε/2).
double beta_rule_excess(const MatrixD& A, double alpha) {
  double worst = -HUGE_VAL;
  for (Index j = 0; j < A.cols(); ++j) {
    const double diagonal = alpha * A(j, j), off = alpha * (A.col(j).cwiseAbs().sum() - std::abs(A(j, j)));
    worst = std::max(worst, (diagonal <= 1 ? -diagonal : diagonal - 2) + off);  // |1 − x| − 1 for x ≥ 0
  }
  return worst;
}

}  // namespace

// ---------------------------------------------------------------------------------------------------
// Spectral norms

TEST(SoftSpectral, LanczosMatchesTheSvd) {
  std::uint64_t key = 0;
  for (auto [rows, cols] : {std::pair<Index, Index>{40, 25}, {25, 60}, {50, 50}, {150, 300}}) {
    const MatrixD M = gaussian_matrix(rows, cols, ++key);
    const double reference = norm2(M);
    EXPECT_TRUE(test::close(spectral_norm_svd(M), reference, test::tol.exact_rel, 0));
    for (std::uint64_t start : {1, 2}) {  // the starting vector must not matter
      SCOPED_TRACE(text(rows, "x", cols, " start ", start));
      const auto dense = spectral_norm(M, {.seed = start});
      const auto free = spectral_norm([&](const VectorD& v) -> VectorD { return M * v; },
                                      [&](const VectorD& u) -> VectorD { return M.transpose() * u; }, rows, cols,
                                      {.seed = start});
      for (const auto& s : {dense, free}) {
        EXPECT_TRUE(s.converged);
        EXPECT_LE(s.iterations, std::min<Index>(cols, 200));
        EXPECT_TRUE(test::close(s.value, reference, soft_tol.lanczos_rel, 0));
      }
    }
  }
}

// MᵀM of a rank-r operator has r nonzero eigenvalues: the Krylov space stops growing after r + 1 vectors.
TEST(SoftSpectral, MatrixFreeLanczosStopsAtTheRankOfTheOperator) {
  const Index rank = 30;
  const MatrixD B = gaussian_matrix(120, rank, 11), C = gaussian_matrix(rank, 200, 12);
  const auto s = spectral_norm([&](const VectorD& v) -> VectorD { return B * (C * v); },
                               [&](const VectorD& u) -> VectorD { return C.transpose() * (B.transpose() * u); }, 120,
                               200);
  EXPECT_TRUE(s.converged);
  EXPECT_LE(s.iterations, rank + 1);
  EXPECT_TRUE(test::close(s.value, norm2(B * C), soft_tol.lanczos_rel, 0));
}

// M = u vᵀ: MᵀM = ‖u‖² v vᵀ, so the second Krylov vector already spans v and σ₁ = ‖u‖‖v‖.
TEST(SoftSpectral, RankOneConvergesInTwoIterations) {
  const MatrixD u = gaussian_matrix(30, 1, 21), v = gaussian_matrix(1, 45, 22);
  const auto s = spectral_norm(u * v);
  EXPECT_TRUE(s.converged);
  EXPECT_LE(s.iterations, 2);
  EXPECT_TRUE(test::close(s.value, u.norm() * v.norm(), test::tol.exact_rel, 0));
}

// Three Krylov vectors cannot pin σ₁ of a 100×100 Gaussian matrix to 1e-10: the cap must be reported.
TEST(SoftSpectral, IterationCapIsReportedAsNotConverged) {
  const auto s = spectral_norm(gaussian_matrix(100, 100, 23), {.max_iterations = 3});
  EXPECT_FALSE(s.converged);
  EXPECT_EQ(s.iterations, 3);
}

// The Newton error X₁₂ − (A + 0.01 I)⁻¹ of a grid bottleneck (fixed seed: the input a seed sweep found) has a
// few singular values of order 1 and ~50 at rounding level. Eigen 3.4.0's BDCSVD returns σ₁ 2e-8 too small
// there, and singular vectors that do not rebuild it; the library's dense references must not.
TEST(SoftSpectral, SvdReferenceHoldsWhenMostSingularValuesVanish) {
  auto spec = token_spec(TokenEnsemble::grid, 64, 16);
  spec.spread = 0.3;
  spec.rank = 8;  // part of the stream key
  const MatrixD T = draw_tokens(spec, 248, 0), A = gaussian_kernel(T, T);
  const auto r = pseudo_inverse(A,
                                {.method = PinvMethod::released, .max_iterations = 12, .tolerance = 0, .trace = false});
  const MatrixD E = r.inverse - linalg::inverse(iterated_matrix(A, PinvMethod::released));
  const double reference = norm2(E);
  EXPECT_TRUE(test::close(linalg::symmetric_eigen(0.5 * (E + E.transpose())).values.cwiseAbs().maxCoeff(), reference,
                          test::tol.exact_rel, 0));
  EXPECT_TRUE(test::close(spectral_norm_svd(E), reference, test::tol.exact_rel, 0));
}

// The symmetric path (|eigenvalues|, sorted) and the general one (one-sided Jacobi) against the reference SVD,
// on an indefinite symmetric matrix, a non-symmetric square one and a rectangular one.
TEST(SoftSpectral, SingularValuesOfEitherPathMatchTheSvd) {
  const MatrixD G = gaussian_matrix(24, 24, 34);
  for (const MatrixD& M : {MatrixD(G + G.transpose()), G, gaussian_matrix(9, 30, 35)}) {
    const VectorD got = singular_values(M), want = singular_values_reference(M);
    ASSERT_EQ(got.size(), want.size());
    for (Index i = 0; i < got.size(); ++i)
      EXPECT_TRUE(test::close(got(i), want(i), 0, test::tol.exact_rel * want(0))) << i;
    EXPECT_TRUE(test::close(spectral_norm_svd(M), want(0), test::tol.exact_rel, 0));
  }
}

TEST(SoftSpectral, RadiusIsBoundedByTheNormAndEqualForSymmetricMatrices) {
  for (std::uint64_t key : {31, 32, 33}) {
    const MatrixD M = gaussian_matrix(30, 30, key);
    EXPECT_LE(spectral_radius(M), spectral_norm_svd(M) * (1 + test::tol.exact_rel));  // |λ| ≤ σ₁ always
    const MatrixD S = M + M.transpose();  // normal: |λ| are the singular values
    EXPECT_TRUE(test::close(spectral_radius(S), spectral_norm_svd(S), test::tol.exact_rel, 0));
  }
}

TEST(SoftSpectral, RadiusIsSmallerForNonNormalMatrices) {
  // A nilpotent Jordan block: every eigenvalue is 0, yet it maps e_{k+1} to e_k with norm 1.
  MatrixD J = MatrixD::Zero(6, 6);
  for (Index i = 0; i + 1 < 6; ++i) J(i, i + 1) = 1;
  EXPECT_LE(spectral_radius(J), test::tol.exact_abs);
  EXPECT_TRUE(test::close(spectral_norm_svd(J), 1.0, test::tol.exact_rel, 0));
  EXPECT_TRUE(test::close(spectral_norm(J).value, 1.0, soft_tol.lanczos_rel, 0));
  // [[1, 10], [0, 2]]: eigenvalues 1, 2; MᵀM = [[1, 10], [10, 104]] has trace 105 and determinant 4.
  MatrixD T(2, 2);
  T << 1, 10, 0, 2;
  EXPECT_TRUE(test::close(spectral_radius(T), 2.0, test::tol.exact_rel, 0));
  EXPECT_TRUE(
      test::close(spectral_norm_svd(T), std::sqrt((105 + std::sqrt(105.0 * 105 - 16)) / 2), test::tol.exact_rel, 0));
}

// ---------------------------------------------------------------------------------------------------
// Pseudo-inverses

TEST(SoftPinv, SvdSatisfiesThePenroseConditions) {
  auto cases = bottlenecks();
  const MatrixD T = draw_tokens(token_spec(TokenEnsemble::gaussian, 40, 16), test::seed(), 1);
  cases.push_back({"rectangular P (12x40)", gaussian_kernel(T.topRows(12), T)});
  for (const auto& [label, A] : cases) {
    SCOPED_TRACE(label);
    const auto r = pseudo_inverse(A, {.method = PinvMethod::svd});
    const MatrixD& X = r.inverse;
    EXPECT_TRUE(r.converged);
    const double kappa = condition(A), rounding = floor_of(std::max(A.rows(), A.cols()), kappa);
    EXPECT_TRUE(within(norm2(A * X * A - A), rounding * norm2(A), "A X A = A"));
    EXPECT_TRUE(within(norm2(X * A * X - X), rounding * norm2(X), "X A X = X"));
    EXPECT_TRUE(within(norm2(A * X - (A * X).transpose()), rounding, "(A X)' = A X"));
    EXPECT_TRUE(within(norm2(X * A - (X * A).transpose()), rounding, "(X A)' = X A"));
  }
}

// With ρ the scalar recurrence's residual, Newton–Schulz reaches the tolerance at the predicted iteration
// (±1 for rounding), and ‖X − A⁻¹‖ ≤ κ·residual·‖A⁻¹‖ (each eigenvalue: |e|/λ ≤ (λ_max/λ²)·residual).
TEST(SoftPinv, NewtonIterationsReachThePseudoInverse) {
  for (const auto& [label, bottleneck] : bottlenecks())
    for (auto method : {PinvMethod::newton, PinvMethod::newton_beta}) {
      SCOPED_TRACE(text(label, " ", to_string(method)));
      const MatrixD A = input_for(bottleneck, method);
      const double kappa = condition(A);
      ASSERT_LT(floor_of(A.rows(), kappa), soft_tol.pinv_tolerance) << "ensemble too ill-conditioned for the test";
      const double alpha = pseudo_inverse(A, {.method = method, .max_iterations = 1, .trace = false}).alpha;
      const int predicted = iterations_to_reach(scalar_trace(A, method, alpha, 400), soft_tol.pinv_tolerance);
      const auto r = pseudo_inverse(A, {.method = method, .max_iterations = predicted + 2});
      EXPECT_TRUE(r.converged);
      EXPECT_FALSE(r.diverged);
      EXPECT_NE(r.status.find("converged"), std::string::npos) << r.status;
      EXPECT_GE(r.iterations, predicted - 1);
      EXPECT_LE(r.iterations, predicted + 1);
      EXPECT_LT(r.trace.back().residual, soft_tol.pinv_tolerance);
      const MatrixD direct = linalg::inverse(A);
      const double norm_inverse = norm2(direct);
      EXPECT_TRUE(within(norm2(r.inverse - direct) / norm_inverse,
                         kappa * soft_tol.pinv_tolerance + kappa * floor_of(A.rows(), kappa), "||X - A^-1||/||A^-1||"));
    }
}

// Every recorded residual and error equals the closed form of the iteration (scalar_trace above).
TEST(SoftPinv, TracesFollowTheScalarRecurrence) {
  for (const auto& [label, bottleneck] : bottlenecks())
    for (auto method : {PinvMethod::newton, PinvMethod::newton_beta, PinvMethod::released, PinvMethod::nystromformer}) {
      SCOPED_TRACE(text(label, " ", to_string(method)));
      const MatrixD A0 = input_for(bottleneck, method);
      const auto r = pseudo_inverse(A0, {.method = method, .max_iterations = 40, .tolerance = 0});
      ASSERT_EQ(r.trace.size(), std::size_t(r.iterations) + 1);  // iteration 0 is the start
      for (std::size_t k = 0; k < r.trace.size(); ++k) EXPECT_EQ(r.trace[k].iteration, int(k));
      const MatrixD A = iterated_matrix(A0, method);
      const double kappa = condition(A), norm_inverse = norm2(linalg::inverse(A));
      const auto expected = scalar_trace(A, method, r.alpha, r.iterations);
      const bool shifted = method == PinvMethod::released;  // traced against A + 0.01 I in the *_shifted fields
      for (std::size_t k = 0; k < r.trace.size(); ++k) {
        const auto& step = r.trace[k];
        ASSERT_TRUE(test::close(shifted ? step.residual_shifted : step.residual, expected.residual[k],
                                test::tol.exact_rel, floor_of(A.rows(), kappa)))
            << "residual at iteration " << k;
        ASSERT_TRUE(test::close(shifted ? step.error_shifted : step.error, expected.error[k], test::tol.exact_rel,
                                kappa * floor_of(A.rows(), kappa) * norm_inverse))
            << "error at iteration " << k;
      }
    }
}

// For symmetric positive definite A and X₀ = αA with 0 < α ≤ 2/λ_max²: |e₀| = |1 − αλ²| ≤ 1 and e ← e², so
// every eigenvalue's |e|/λ and λ|e| shrink: the error and the residual are non-increasing in the 2-norm.
// α = 2/‖A‖₁² qualifies because ‖A‖₁ ≥ ‖A‖₂.
TEST(SoftPinv, NewtonErrorAndResidualNeverGrowOnPositiveDefiniteMatrices) {
  for (const auto& [label, A] : bottlenecks()) {
    SCOPED_TRACE(label);
    const auto r = pseudo_inverse(A, {.method = PinvMethod::newton, .max_iterations = 60, .tolerance = 0});
    EXPECT_TRUE(test::close(r.alpha, 2 / (norm1(A) * norm1(A)), test::tol.exact_rel, 0));
    const double kappa = condition(A), floor = floor_of(A.rows(), kappa),
                 error_floor = kappa * floor * norm2(linalg::inverse(A));
    for (std::size_t k = 1; k < r.trace.size(); ++k) {
      EXPECT_LE(r.trace[k].error, r.trace[k - 1].error + error_floor) << "iteration " << k;
      EXPECT_LE(r.trace[k].residual, r.trace[k - 1].residual + floor) << "iteration " << k;
    }
  }
}

// The released variant iterates on A + 0.01 I with α = 1.8/r², r the largest row sum of A itself: it must come within
// the scalar recurrence's error of (A + 0.01 I)⁻¹ after its 20 iterations, on inputs where that error is far below
// ‖(A + 0.01 I)⁻¹ − A⁻¹‖.
TEST(SoftPinv, ReleasedInvertsTheRegularisedMatrix) {
  for (const auto& [label, A] : bottlenecks()) {
    SCOPED_TRACE(label);
    const auto r = pseudo_inverse(A, {.method = PinvMethod::released});
    const MatrixD R = iterated_matrix(A, PinvMethod::released), regularised_inverse = linalg::inverse(R);
    EXPECT_TRUE(test::close(r.alpha, 1.8 / (norm_inf(A) * norm_inf(A)), test::tol.exact_rel, 0));  // A ≥ 0: r = ‖A‖∞
    EXPECT_EQ(r.iterations, 20);
    const double bound = scalar_trace(R, PinvMethod::released, r.alpha, r.iterations).error.back();
    ASSERT_LT(bound, norm2(regularised_inverse - linalg::inverse(A)) / 4)
        << "these inputs cannot tell the two inverses apart";
    const double kappa = condition(R), floor = kappa * floor_of(R.rows(), kappa) * norm2(regularised_inverse);
    const double distance = norm2(r.inverse - regularised_inverse);
    EXPECT_TRUE(within(distance, bound + floor, "||X - (A + 0.01 I)^-1||"));
    EXPECT_TRUE(test::close(r.trace.back().error_shifted, distance, test::tol.exact_rel, floor));
  }
}

// Nyströmformer's e ← e³(3 + e)/4 with e₀ = 1 − λ²/(‖A‖₁‖A‖∞) ∈ [0, 1) shrinks every λ|e|: each of its six
// iterations lowers the residual (until rounding), though six are not enough to converge in general.
TEST(SoftPinv, NystromformerLowersTheResidualEveryIteration) {
  for (const auto& [label, A] : bottlenecks()) {
    SCOPED_TRACE(label);
    const auto r = pseudo_inverse(A, {.method = PinvMethod::nystromformer});
    EXPECT_LE(r.iterations, 6);
    const double floor = floor_of(A.rows(), condition(A));
    for (std::size_t k = 1; k < r.trace.size(); ++k)
      if (r.trace[k - 1].residual > 10 * floor) {
        EXPECT_LT(r.trace[k].residual, r.trace[k - 1].residual) << "iteration " << k;
      }
    EXPECT_LT(r.trace.back().residual, r.trace.front().residual);
    EXPECT_EQ(r.converged, r.trace.back().residual < soft_tol.pinv_tolerance);
  }
}

// Past α = 2/σ₁² the top eigenvalue's |e₀| = |1 − ασ₁²| exceeds 1 and e ← e² blows up; just below it converges.
TEST(SoftPinv, AlphaAboveTheLimitDivergesAndJustBelowConverges) {
  for (const auto& [label, A] : bottlenecks()) {
    SCOPED_TRACE(label);
    const double limit = newton_alpha_limit(A);
    EXPECT_TRUE(test::close(limit, 2 / (norm2(A) * norm2(A)), test::tol.exact_rel, 0));
    const auto above = pseudo_inverse(A, {.method = PinvMethod::newton, .alpha = 1.01 * limit});
    EXPECT_TRUE(above.diverged);
    EXPECT_FALSE(above.converged);
    EXPECT_NE(above.status.find("alpha"), std::string::npos) << above.status;
    const auto below = pseudo_inverse(A, {.method = PinvMethod::newton, .alpha = 0.99 * limit});
    EXPECT_FALSE(below.diverged) << below.status;
    EXPECT_TRUE(below.converged) << below.status;
  }
}

// SOFT §3.3: α = 2βⁿ/‖A‖₁², n the smallest with ‖I − αA‖₁ ≤ 1. On 0.1·A for a diagonally dominant kernel
// A, the Newton α = 2/‖0.1A‖₁² ≈ 200 overshoots (‖I − αA‖₁ ≈ 19) until halved a few times.
TEST(SoftPinv, BetaRuleHalvesAlphaUntilItStopsOvershooting) {
  const MatrixD T = draw_tokens(token_spec(TokenEnsemble::gaussian, 16, 64), test::seed(), 2);
  const MatrixD A = 0.1 * gaussian_kernel(T, T);
  const auto r = pseudo_inverse(A, {.method = PinvMethod::newton_beta});
  const double halvings = std::log2(2 / (norm1(A) * norm1(A)) / r.alpha);
  EXPECT_TRUE(test::close(halvings, std::round(halvings), 0, 1e-9)) << "alpha is not 2 beta^n/||A||_1^2";
  EXPECT_GE(std::round(halvings), 1);
  EXPECT_LE(beta_rule_excess(A, r.alpha), 0.0);
  EXPECT_GT(beta_rule_excess(A, 2 * r.alpha), 0.0) << "n is not the smallest";
  EXPECT_TRUE(r.converged) << r.status;
}

// A unit-diagonal A ≥ 0 has ‖I − αA‖₁ = 1 + α(max column sum − 2) for α ≤ 1: once a column sums past 2 (every
// Gaussian-kernel bottleneck here) no n satisfies the β rule. The rule must say so, instead of halving until
// 1 − α rounds to 1 (α ≈ 1e-17) and reporting that α as met.
TEST(SoftPinv, BetaRuleSaysWhenNoHalvingSatisfiesIt) {
  const MatrixD T = draw_tokens(token_spec(TokenEnsemble::gaussian, 32, 16), test::seed(), 0);
  const MatrixD A = gaussian_kernel(T, T);
  ASSERT_GT(norm1(A), 2.0);
  for (double alpha = 2 / (norm1(A) * norm1(A)); alpha > 1e-300; alpha *= 0.5)
    ASSERT_GT(beta_rule_excess(A, alpha), 0.0);
  const auto r = pseudo_inverse(A, {.method = PinvMethod::newton_beta});
  EXPECT_FALSE(r.beta_rule_met);
  EXPECT_GT(r.beta_rule_excess, 0.0);
  EXPECT_NE(r.status.find("beta rule unmet"), std::string::npos) << r.status;
}

TEST(SoftPinv, TracingDoesNotChangeTheIterate) {
  const auto A = bottlenecks().front().A;
  for (auto method : {PinvMethod::newton, PinvMethod::released, PinvMethod::nystromformer}) {
    SCOPED_TRACE(to_string(method));
    const auto traced = pseudo_inverse(A, {.method = method});
    const auto quiet = pseudo_inverse(A, {.method = method, .trace = false});
    EXPECT_TRUE(quiet.trace.empty());
    EXPECT_EQ(quiet.iterations, traced.iterations);
    EXPECT_TRUE((quiet.inverse.array() == traced.inverse.array()).all());
    // Nothing monitored: the cap is run in full and reported as such.
    const auto blind = pseudo_inverse(A, {.method = method, .max_iterations = 9, .tolerance = 0, .trace = false});
    EXPECT_EQ(blind.iterations, 9);
    EXPECT_FALSE(blind.converged);
    const std::string ran = method == PinvMethod::released ? "ran its 9 iterations"
                                                           : "stopped at 9";  // no stopping test
    EXPECT_NE(blind.status.find(ran), std::string::npos) << blind.status;
  }
}

// ---------------------------------------------------------------------------------------------------
// Kernels and the Nyström reconstruction

// ‖q‖² + ‖k‖² − 2q·k loses ~d·ε·(‖q‖² + ‖k‖²) to cancellation, scaled by 1/(2√d) in the exponent.
TEST(SoftKernel, GaussianKernelMatchesTheDefinition) {
  const Index d = 16;
  const MatrixD Q = gaussian_matrix(12, d, 41), K = gaussian_matrix(9, d, 42, 0.7);
  const MatrixD S = gaussian_kernel(Q, K), SQ = gaussian_kernel(Q, Q);
  ASSERT_EQ(S.rows(), 12);
  ASSERT_EQ(S.cols(), 9);
  const double c = 1 / (2 * std::sqrt(double(d)));
  const auto limit = [&](const MatrixD& A, Index i, const MatrixD& B, Index j) {
    return test::tol.exact_rel + 4 * double(d) * eps * c * (A.row(i).squaredNorm() + B.row(j).squaredNorm());
  };
  for (Index i = 0; i < Q.rows(); ++i) {
    for (Index j = 0; j < K.rows(); ++j)
      EXPECT_TRUE(test::close(S(i, j), std::exp(-c * (Q.row(i) - K.row(j)).squaredNorm()), limit(Q, i, K, j), 0));
    EXPECT_TRUE(test::close(SQ(i, i), 1.0, 0, limit(Q, i, Q, i)));
    for (Index j = 0; j < Q.rows(); ++j) EXPECT_TRUE(test::close(SQ(i, j), SQ(j, i), limit(Q, i, Q, j), 0));
  }
}

// Equal tokens are at distance 0 whatever the expansion's rounding: exactly 1, also between copies of one token in Q
// and in K (the identical-token bottleneck 11ᵀ sits on Newton's convergence limit, where an ulp decides).
TEST(SoftKernel, EqualTokensGiveExactlyOne) {
  const Index d = 16;
  MatrixD Q = gaussian_matrix(10, d, 45, 3.0), K = gaussian_matrix(7, d, 46, 3.0);
  Q.row(4) = Q.row(1);
  K.row(2) = K.row(6) = Q.row(1);
  K.row(0) = Q.row(7);
  const MatrixD S = gaussian_kernel(Q, K), SQ = gaussian_kernel(Q, Q);
  for (Index i = 0; i < Q.rows(); ++i) {
    for (Index j = 0; j < K.rows(); ++j) {
      if (Q.row(i) == K.row(j)) {
        EXPECT_EQ(S(i, j), 1.0) << i << ", " << j;
      } else {
        EXPECT_LT(S(i, j), 1.0) << i << ", " << j;
      }
    }
    EXPECT_EQ(SQ(i, i), 1.0);
  }
  EXPECT_EQ(SQ(1, 4), 1.0);
  EXPECT_EQ(gaussian_kernel(MatrixD::Constant(16, d, 0.3), MatrixD::Constant(16, d, 0.3)), MatrixD::Ones(16, 16));
}

TEST(SoftKernel, SoftmaxAttentionRowsAreTheNormalisedExponentials) {
  const Index d = 8;
  const MatrixD Q = gaussian_matrix(10, d, 43, 2.0), K = gaussian_matrix(14, d, 44, 2.0);
  const MatrixD P = softmax_attention(Q, K);
  for (Index i = 0; i < Q.rows(); ++i) {
    EXPECT_TRUE(test::close(P.row(i).sum(), 1.0, 0, 4 * double(K.rows()) * eps));
    const VectorD logits = K * Q.row(i).transpose() / std::sqrt(double(d));
    const VectorD weights = (logits.array() - logits.maxCoeff()).exp();
    for (Index j = 0; j < K.rows(); ++j)
      EXPECT_TRUE(test::close(P(i, j), weights[j] / weights.sum(), test::tol.exact_rel, 0));
  }
}

TEST(SoftNystrom, ApplyEqualsTheDenseProduct) {
  const MatrixD P = gaussian_matrix(7, 30, 51), X = gaussian_matrix(7, 7, 52), W = gaussian_matrix(30, 4, 53);
  const MatrixD dense = P.transpose() * X * P * W;
  const double scale = norm2(P) * norm2(P) * norm2(X) * norm2(W);
  EXPECT_TRUE(within(norm2(nystrom_apply(P, X, W) - dense), floor_of(30, 1) * scale, "P' (X (P W))"));
}

// With the `first` sampler and m = n the bottleneck is every token: P = A = S and Ŝ = S S† S = S.
TEST(SoftNystrom, AllTokensAsLandmarksReproduceTheKernel) {
  const MatrixD Q = draw_tokens(token_spec(TokenEnsemble::gaussian, 40, 16), test::seed(), 3);
  const auto f = nystrom_factors(bottleneck_tokens(Q, {.sampler = Sampler::first, .m = 40}, 0), Q);
  const MatrixD S = gaussian_kernel(Q, Q);
  EXPECT_TRUE((f.P.array() == S.array()).all());
  const MatrixD S_hat = nystrom_apply(f.P, pseudo_inverse(f.A, {.method = PinvMethod::svd}).inverse, identity(40));
  EXPECT_TRUE(within(norm2(S_hat - S), floor_of(40, condition(S)) * norm2(S), "||S S+ S - S||"));
}

// Landmarks Q[:m]: P = [A B], so Ŝ[:m, :] = A A⁻¹ P = S[:m, :]; S − Ŝ is the Schur complement of A in the
// positive definite S (zero on the landmarks): positive semi-definite and nonzero.
TEST(SoftNystrom, ExactOnTheLandmarksAndBelowTheKernelElsewhere) {
  const Index n = 40, m = 12;
  const MatrixD Q = draw_tokens(token_spec(TokenEnsemble::gaussian, n, 16), test::seed(), 4);
  const auto f = nystrom_factors(bottleneck_tokens(Q, {.sampler = Sampler::first, .m = m}, 0), Q);
  const MatrixD S = gaussian_kernel(Q, Q);
  const MatrixD S_hat = nystrom_apply(f.P, pseudo_inverse(f.A, {.method = PinvMethod::svd}).inverse, identity(n));
  const double floor = floor_of(n, condition(S)) * norm2(S);
  EXPECT_TRUE(within(norm2(S_hat.topRows(m) - S.topRows(m)), floor, "landmark rows"));
  const MatrixD gap = S - S_hat;
  const VectorD eigenvalues = linalg::symmetric_eigen(0.5 * (gap + gap.transpose())).values;
  EXPECT_GE(eigenvalues.minCoeff(), -floor);
  EXPECT_GT(gap.trace(), n * floor);
}

TEST(SoftNystrom, SymmetricNormalisedScalesByTheRowSums) {
  const auto A = bottlenecks().back().A;
  const MatrixD X = pseudo_inverse(A, {.method = PinvMethod::svd}).inverse;
  MatrixD D_half = MatrixD::Zero(A.rows(), A.rows());
  for (Index i = 0; i < A.rows(); ++i) D_half(i, i) = 1 / std::sqrt(A.row(i).sum());
  const MatrixD expected = D_half * X * D_half, actual = symmetric_normalised(A, X);
  const double abs = test::tol.exact_abs * norm2(expected);
  for (Index i = 0; i < A.rows(); ++i)
    for (Index j = 0; j < A.cols(); ++j)
      EXPECT_TRUE(test::close(actual(i, j), expected(i, j), test::tol.exact_rel, abs));
}

// Ŝ V = Pᵀ A⁻¹ P V formed densely (n×n), with A⁻¹ by LU, for each sampler, pseudo-inverse and normalisation.
TEST(SoftNystrom, SoftAttentionEqualsTheDenseComputation) {
  auto spec = token_spec(TokenEnsemble::grid, 48, 16);  // 6×8 grid
  const MatrixD Q = draw_tokens(spec, test::seed(), 5), V = gaussian_matrix(48, 5, 54);
  const std::vector<BottleneckSpec> samplers = {{Sampler::pool, 9, 6, 8}, {Sampler::random, 12}, {Sampler::first, 10}};
  for (const auto& bottleneck : samplers)
    for (auto method : {PinvMethod::svd, PinvMethod::newton})
      for (bool normalised : {false, true}) {
        SCOPED_TRACE(text(to_string(bottleneck.sampler), " ", to_string(method), normalised ? " normalised" : ""));
        const std::uint64_t seed = test::seed() + 17;
        const MatrixD landmarks = bottleneck_tokens(Q, bottleneck, seed);
        const MatrixD A = gaussian_kernel(landmarks, landmarks), P = gaussian_kernel(landmarks, Q);
        MatrixD inverse = linalg::inverse(A);
        if (normalised) {
          const VectorD d = A.rowwise().sum().cwiseSqrt().cwiseInverse();
          inverse = d.asDiagonal() * inverse * d.asDiagonal();
        }
        const MatrixD S_hat = P.transpose() * inverse * P;
        const double kappa = condition(A);
        // Newton stops at residual 1e-10: ‖X − A⁻¹‖ ≤ κ·1e-10·‖A⁻¹‖ (see NewtonIterationsReachThePseudoInverse).
        const double inverse_rel = (method == PinvMethod::newton ? kappa * soft_tol.pinv_tolerance : 0) +
                                   kappa * floor_of(A.rows(), kappa);
        const double limit = inverse_rel * norm2(P) * norm2(P) * norm2(inverse) * norm2(V);
        const MatrixD actual = soft_attention(Q, V, bottleneck, {.method = method}, seed, normalised);
        EXPECT_TRUE(within(norm2(actual - S_hat * V), limit, "||soft_attention - P' A^-1 P V||"));
      }
}

// ---------------------------------------------------------------------------------------------------
// Bottleneck samplers

TEST(SoftSampler, FirstTakesTheLeadingTokens) {
  const MatrixD Q = gaussian_matrix(20, 5, 61);
  for (Index m : {1, 7, 20})
    EXPECT_TRUE((bottleneck_tokens(Q, {.sampler = Sampler::first, .m = m}, 0).array() == Q.topRows(m).array()).all())
        << "m = " << m;
}

// Rows of a Gaussian matrix are distinct with probability 1, so each sampled row names its token.
std::vector<Index> sampled_indices(const MatrixD& Q, const MatrixD& rows) {
  std::vector<Index> out;
  for (Index r = 0; r < rows.rows(); ++r)
    for (Index i = 0; i < Q.rows(); ++i)
      if ((Q.row(i).array() == rows.row(r).array()).all()) out.push_back(i);
  return out;
}

TEST(SoftSampler, RandomTakesDistinctTokensInOrderReproducibly) {
  const Index n = 64, m = 16;
  const MatrixD Q = gaussian_matrix(n, 8, 62);
  const BottleneckSpec spec{.sampler = Sampler::random, .m = m};
  const auto indices = sampled_indices(Q, bottleneck_tokens(Q, spec, test::seed()));
  ASSERT_EQ(indices.size(), std::size_t(m)) << "a sampled row is not a token of Q";
  EXPECT_TRUE(std::is_sorted(indices.begin(), indices.end()));
  EXPECT_EQ(std::set<Index>(indices.begin(), indices.end()).size(), std::size_t(m)) << "a token was taken twice";
  EXPECT_TRUE(
      (bottleneck_tokens(Q, spec, test::seed()).array() == bottleneck_tokens(Q, spec, test::seed()).array()).all());
  // Two uniform 16-subsets of 64 coincide with probability 1/C(64, 16) ≈ 2e-15.
  EXPECT_NE(sampled_indices(Q, bottleneck_tokens(Q, spec, test::seed() + 1)), indices);
}

// A uniform m-subset contains each token with probability m/n: over many seeds each count is
// Binomial(seeds, m/n), and a 6σ departure for any of the n tokens has probability ~1e-7.
TEST(SoftSampler, RandomIsUniformOverTokens) {
  const Index n = 64, m = 16;
  const int seeds = 3000;
  MatrixD Q(n, 1);
  for (Index i = 0; i < n; ++i) Q(i, 0) = double(i);
  std::vector<int> count(n, 0);
  for (int s = 0; s < seeds; ++s) {
    const MatrixD rows = bottleneck_tokens(Q, {.sampler = Sampler::random, .m = m}, test::seed() * 7919 + s);
    for (Index r = 0; r < m; ++r) ++count[static_cast<std::size_t>(rows(r, 0))];
  }
  const double p = double(m) / n, mean = seeds * p, sd = std::sqrt(seeds * p * (1 - p));
  for (Index i = 0; i < n; ++i)
    EXPECT_LE(std::abs(count[std::size_t(i)] - mean), soft_tol.sigmas * sd) << "token " << i;
}

// Token (h, w) of an H×W grid carries (h, w, h·w, 1): over a cell [h0, h1) × [w0, w1) these average to
// (h̄, w̄, h̄·w̄, 1) with h̄ = (h0 + h1 − 1)/2. Cells follow AdaptiveAvgPool2d: [⌊iH/s⌋, ⌈(i+1)H/s⌉).
TEST(SoftSampler, PoolAveragesAdaptiveCells) {
  struct Case {
    Index H, W, m;
    std::vector<std::pair<Index, Index>> rows, cols;  // cell bounds worked out by hand from the formula
  };
  const std::vector<Case> cases = {
      {4, 6, 4, {{0, 2}, {2, 4}}, {{0, 3}, {3, 6}}},                  // divisible: 2×3 tokens a cell
      {5, 5, 4, {{0, 3}, {2, 5}}, {{0, 3}, {2, 5}}},                  // 5/2: cells overlap on the middle token
      {3, 8, 9, {{0, 1}, {1, 2}, {2, 3}}, {{0, 3}, {2, 6}, {5, 8}}},  // 8/3: ⌈8/3⌉ = 3, ⌊16/3⌋ = 5
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(text(c.H, "x", c.W, " m=", c.m));
    MatrixD Q(c.H * c.W, 4);
    for (Index h = 0; h < c.H; ++h)
      for (Index w = 0; w < c.W; ++w) Q.row(h * c.W + w) << double(h), double(w), double(h * w), 1.0;
    const MatrixD pooled = bottleneck_tokens(Q, {.sampler = Sampler::pool, .m = c.m, .grid_h = c.H, .grid_w = c.W}, 0);
    const auto side = c.rows.size();
    ASSERT_EQ(pooled.rows(), Index(side * side));
    for (std::size_t a = 0; a < side; ++a)
      for (std::size_t b = 0; b < side; ++b) {
        const double h = (c.rows[a].first + c.rows[a].second - 1) / 2.0,
                     w = (c.cols[b].first + c.cols[b].second - 1) / 2.0;
        RowVector<double> expected(4);
        expected << h, w, h * w, 1.0;
        EXPECT_TRUE(pooled.row(Index(a * side + b)).isApprox(expected, test::tol.exact_rel))
            << "cell " << a << "," << b;
      }
  }
}

// ---------------------------------------------------------------------------------------------------
// Token ensembles

TEST(SoftTokens, ShapeAndReproducibility) {
  for (auto kind : {TokenEnsemble::gaussian, TokenEnsemble::clustered, TokenEnsemble::low_rank, TokenEnsemble::grid}) {
    const auto spec = token_spec(kind, 30, 7);
    SCOPED_TRACE(spec.describe());
    const MatrixD T = draw_tokens(spec, test::seed(), 0);
    EXPECT_EQ(T.rows(), 30);
    EXPECT_EQ(T.cols(), 7);
    EXPECT_TRUE(T.allFinite());
    EXPECT_TRUE((draw_tokens(spec, test::seed(), 0).array() == T.array()).all());
    // Continuous draws: another trial or seed shares no entry with probability 1.
    EXPECT_TRUE((draw_tokens(spec, test::seed(), 1).array() != T.array()).all());
    EXPECT_TRUE((draw_tokens(spec, test::seed() + 1, 0).array() != T.array()).all());
  }
}

// The sample variance of N normal entries has relative standard error √(2/(N − 1)).
TEST(SoftTokens, GaussianEntriesHaveTheRequestedScale) {
  auto spec = token_spec(TokenEnsemble::gaussian, 256, 32);
  spec.scale = 2.5;
  const MatrixD T = draw_tokens(spec, test::seed(), 0);
  const double N = double(T.size()), mean = T.mean();
  const double variance = (T.array() - mean).square().sum() / (N - 1);
  EXPECT_LE(std::abs(mean), soft_tol.sigmas * spec.scale / std::sqrt(N));
  EXPECT_TRUE(test::close(variance, spec.scale * spec.scale, soft_tol.sigmas * std::sqrt(2 / (N - 1)), 0));
}

// Token i = c_{i mod k} + ε_i, ε ~ N(0, (spread·scale)²): with spread 0.05 in d = 16 every ‖ε‖ ≲ 0.3 while
// ‖c_a − c_b‖² ~ 2χ²₁₆ falls below 1.4 with probability ~1e-8, so each within-cluster distance is below
// each between-cluster one, and each token is nearest its own cluster's mean.
TEST(SoftTokens, ClustersAreSeparatedWhenTheSpreadIsSmall) {
  auto spec = token_spec(TokenEnsemble::clustered, 256, 16);
  spec.clusters = 4;
  spec.spread = 0.05;
  const MatrixD T = draw_tokens(spec, test::seed(), 0);
  const Index k = spec.clusters;
  double within_max = 0, between_min = HUGE_VAL;
  for (Index i = 0; i < spec.n; ++i)
    for (Index j = i + 1; j < spec.n; ++j) {
      const double dist = (T.row(i) - T.row(j)).norm();
      if (i % k == j % k) within_max = std::max(within_max, dist);
      else between_min = std::min(between_min, dist);
    }
  EXPECT_LT(within_max, between_min);
  MatrixD centre = MatrixD::Zero(k, spec.d);
  for (Index i = 0; i < spec.n; ++i) centre.row(i % k) += T.row(i) / double(spec.n / k);
  double scatter = 0;
  for (Index i = 0; i < spec.n; ++i) {
    Index nearest;
    (centre.rowwise() - T.row(i)).rowwise().squaredNorm().minCoeff(&nearest);
    EXPECT_EQ(nearest, i % k) << "token " << i;
    scatter += (T.row(i) - centre.row(i % k)).squaredNorm();
  }
  // The pooled within-cluster variance estimates (spread·scale)² on (n − k)·d degrees of freedom.
  const double dof = double((spec.n - k) * spec.d), spread2 = spec.spread * spec.spread * spec.scale * spec.scale;
  EXPECT_TRUE(test::close(scatter / dof, spread2, soft_tol.sigmas * std::sqrt(2 / dof), 0));
}

TEST(SoftTokens, LowRankTokensHaveTheRequestedRank) {
  for (Index rank : {1, 3, 5}) {
    auto spec = token_spec(TokenEnsemble::low_rank, 128, 32);
    spec.rank = rank;
    EXPECT_EQ(numerical_rank(draw_tokens(spec, test::seed(), 0)), rank);
  }
}

// Without noise a grid token is Σ_f cos(angle_f(h, w))·a_f over 9 frequencies (u, v) ∈ {0, 1, 2}²: these
// 9 functions are independent on an 8×8 grid and the a_f are Gaussian in R^32, so the rank is exactly 9.
TEST(SoftTokens, GridTokensAreNineSmoothModesPlusNoise) {
  auto spec = token_spec(TokenEnsemble::grid, 64, 32);
  ASSERT_EQ(spec.grid_h * spec.grid_w, 64);
  spec.spread = 0;
  EXPECT_EQ(numerical_rank(draw_tokens(spec, test::seed(), 0)), 9);
  spec.spread = 0.1;
  EXPECT_EQ(numerical_rank(draw_tokens(spec, test::seed(), 0)), 32);
}

// ---------------------------------------------------------------------------------------------------
// Names and bad input

TEST(SoftNames, ParseInvertsToString) {
  for (auto s : {Sampler::random, Sampler::first, Sampler::pool}) EXPECT_EQ(parse_sampler(to_string(s)), s);
  for (auto m : {PinvMethod::svd, PinvMethod::newton, PinvMethod::newton_beta, PinvMethod::released,
                 PinvMethod::released_beta, PinvMethod::nystromformer})
    EXPECT_EQ(parse_pinv_method(to_string(m)), m);
  for (auto e : {TokenEnsemble::gaussian, TokenEnsemble::clustered, TokenEnsemble::low_rank, TokenEnsemble::grid})
    EXPECT_EQ(parse_token_ensemble(to_string(e)), e);
  EXPECT_TRUE(rejects([] { parse_sampler("uniform"); }, "sampler"));
  EXPECT_TRUE(rejects([] { parse_pinv_method("cholesky"); }, "pinv method"));
  EXPECT_TRUE(rejects([] { parse_token_ensemble("uniform"); }, "tokens"));
}

TEST(SoftBadInput, BottleneckSpec) {
  const MatrixD Q = gaussian_matrix(16, 4, 71);
  const auto take = [&](BottleneckSpec spec) { return [&Q, spec] { bottleneck_tokens(Q, spec, 0); }; };
  EXPECT_TRUE(rejects(take({.sampler = Sampler::first, .m = 17}), "m must"));
  EXPECT_TRUE(rejects(take({.sampler = Sampler::random, .m = 0}), "m must"));
  EXPECT_TRUE(rejects(take({.sampler = Sampler::pool, .m = 8, .grid_h = 4, .grid_w = 4}), "m must be a square"));
  EXPECT_TRUE(rejects(take({.sampler = Sampler::pool, .m = 4, .grid_h = 3, .grid_w = 5}), "grid"));  // 15 ≠ 16
  EXPECT_TRUE(rejects(take({.sampler = Sampler::pool, .m = 9, .grid_h = 2, .grid_w = 8}), "grid"));  // 2 < √9
  EXPECT_TRUE(rejects(take({.sampler = Sampler::pool, .m = 4}), "grid"));                            // no grid given
}

TEST(SoftBadInput, PseudoInverse) {
  const MatrixD good = bottlenecks().front().A;
  const auto invert = [](MatrixD A, PinvOptions options = {}) { return [A, options] { pseudo_inverse(A, options); }; };
  MatrixD nan = good, inf = good;
  nan(3, 4) = std::numeric_limits<double>::quiet_NaN();
  inf(0, 0) = HUGE_VAL;
  EXPECT_TRUE(rejects(invert(nan), "non-finite"));
  EXPECT_TRUE(rejects(invert(inf), "non-finite"));
  EXPECT_TRUE(rejects(invert(MatrixD::Zero(5, 5)), "zero"));
  EXPECT_TRUE(rejects(invert(MatrixD(0, 0)), "empty"));
  EXPECT_TRUE(rejects(invert(good, {.tolerance = -1e-3}), "tolerance"));
  EXPECT_TRUE(rejects(invert(good, {.tolerance = std::numeric_limits<double>::quiet_NaN()}), "tolerance"));
  EXPECT_TRUE(rejects(invert(good, {.alpha = -0.5}), "alpha"));
  EXPECT_TRUE(rejects(invert(good, {.max_iterations = -1}), "iterations"));
  EXPECT_TRUE(rejects(invert(gaussian_matrix(4, 6, 72), {.method = PinvMethod::released}), "square"));
}

TEST(SoftBadInput, TokenSpec) {
  const auto draw = [](TokenSpec spec) { return [spec] { draw_tokens(spec, 1, 0); }; };
  auto spec = token_spec(TokenEnsemble::gaussian, 16, 4);
  EXPECT_TRUE(rejects(draw(TokenSpec{spec.kind, 0, 4}), "n must"));
  EXPECT_TRUE(rejects(draw(TokenSpec{spec.kind, 16, 0}), "d must"));
  EXPECT_TRUE(rejects(draw(TokenSpec{spec.kind, 16, 4, 0.0}), "scale"));
  EXPECT_TRUE(rejects(draw(TokenSpec{spec.kind, 16, 4, -1.0}), "scale"));
  auto grid = token_spec(TokenEnsemble::grid, 16, 4);
  grid.grid_w = 5;  // 4 × 5 ≠ 16
  EXPECT_TRUE(rejects(draw(grid), "grid"));
  auto clustered = token_spec(TokenEnsemble::clustered, 16, 4);
  clustered.clusters = 0;
  EXPECT_TRUE(rejects(draw(clustered), "clusters"));
  clustered.clusters = 2;
  clustered.spread = -0.1;
  EXPECT_TRUE(rejects(draw(clustered), "spread"));
  auto low_rank = token_spec(TokenEnsemble::low_rank, 16, 4);
  low_rank.rank = 0;
  EXPECT_TRUE(rejects(draw(low_rank), "rank"));
}

TEST(SoftBadInput, KernelsAndSpectra) {
  const MatrixD Q = gaussian_matrix(6, 4, 73);
  EXPECT_TRUE(rejects([&] { gaussian_kernel(Q, gaussian_matrix(6, 5, 74)); }, "dimension"));
  EXPECT_TRUE(rejects([&] { soft_attention(Q, gaussian_matrix(5, 2, 75), {Sampler::first, 2}, {}, 0); }, "values"));
  EXPECT_TRUE(rejects([] { symmetric_normalised(-identity(3), identity(3)); }, "row sum"));
  EXPECT_TRUE(rejects([] { spectral_radius(MatrixD::Ones(2, 3)); }, "square"));
  EXPECT_TRUE(rejects([] { spectral_norm(MatrixD(0, 3)); }, "empty"));
}
