// The row kernels of every activation (with and without prenorm): the structured Jacobian against
// central differences of the row map, its products and norms against the dense matrix, the learned
// scale's gradient, and the batched fused kernels against the one-row path.
#include <attnlab/attention/row_map.hpp>
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/text.hpp>

#include "support.hpp"

using namespace attnlab;

namespace {

std::vector<ActivationSpec> every_activation() {
  std::vector<ActivationSpec> specs;
  for (const auto& info : activation_registry())
    for (const char* transform : {"", "+prenorm"}) {
      auto spec = ActivationSpec::parse(info.name + transform);
      spec.alpha = 0.5;
      specs.push_back(spec);
    }
  return specs;
}

VectorD gaussian(Index n, std::uint64_t key, double scale) {
  MatrixD m(1, n);
  fill_gaussian(m, GaussianStream(test::seed(), key, 0, StreamTag::Logits), scale);
  return m.row(0).transpose();
}

VectorD forward(const Activation& a, const VectorD& x) {
  VectorD y(x.size());
  row_forward(a, x.data(), x.size(), y.data());
  return y;
}

}  // namespace

TEST(RowMap, StructuredJacobianMatchesFiniteDifferences) {
  for (const auto& spec : every_activation())
    for (Index n : {3, 7, 33}) {  // n = 2: prenorm gives z = ±1/√2 and sinmax's Σ sin z = 0
      SCOPED_TRACE(text(spec.label(), " n=", n));
      const auto act = spec.resolve(n, 4);
      const VectorD x = gaussian(n, std::uint64_t(n), 0.7);
      VectorD y(n);
      RowJacobian J;
      row_forward(act, x.data(), n, y.data(), &J);
      const MatrixD dense = J.dense();
      for (Index l = 0; l < n; ++l) {
        VectorD xp = x, xm = x;
        const double h = 1e-6;
        xp[l] += h;
        xm[l] -= h;
        const VectorD fd = (forward(act, xp) - forward(act, xm)) / (2 * h);
        const double scale = 1 + fd.cwiseAbs().maxCoeff();
        for (Index j = 0; j < n; ++j)
          ASSERT_TRUE(test::close(dense(j, l), fd[j], test::tol.finite_diff_rel, test::tol.finite_diff_abs * scale))
              << "entry " << j << "," << l;
      }
    }
}

TEST(RowMap, ProductsAndNormsMatchTheDenseJacobian) {
  for (const auto& spec : every_activation()) {
    SCOPED_TRACE(spec.label());
    const Index n = 19, m = 5;
    const auto act = spec.resolve(n, 4);
    const VectorD x = gaussian(n, 1, 1.3), t = gaussian(n, 2, 1.0);
    MatrixD W(n, m);
    fill_gaussian(W, GaussianStream(test::seed(), 3, 0, StreamTag::Logits), 1.0);
    VectorD y(n), jt(n), jtt(n);
    RowJacobian J;
    row_forward(act, x.data(), n, y.data(), &J);
    const MatrixD dense = J.dense();
    J.jvp(t.data(), jt.data());
    J.vjp(t.data(), jtt.data());
    const double rel = test::tol.exact_rel, abs = test::tol.exact_abs * (1 + dense.cwiseAbs().maxCoeff());
    for (Index j = 0; j < n; ++j) {
      EXPECT_TRUE(test::close(jt[j], (dense * t)[j], rel, abs * (1 + t.cwiseAbs().sum())));
      EXPECT_TRUE(test::close(jtt[j], (dense.transpose() * t)[j], rel, abs * (1 + t.cwiseAbs().sum())));
    }
    EXPECT_TRUE(test::close(J.frob2(), dense.squaredNorm(), rel, abs));
    for (Index j = 0; j < n; ++j) EXPECT_TRUE(test::close(J.diagonal()[j], dense(j, j), rel, abs));
    EXPECT_TRUE(test::close(J.frob2_times(W, W.rowwise().squaredNorm()), (dense * W).squaredNorm(), rel, abs * n));
    EXPECT_TRUE(J.times(W).isApprox(dense * W, 1e-12));
  }
}

// ϕ = θ·h(S): ∂ϕ/∂θ against a central difference in θ (the out_scale of the resolved activation).
TEST(RowMap, LearnedScaleGradientMatchesFiniteDifferences) {
  for (const char* name : {"poly-learned", "poly-learned+prenorm"}) {
    auto spec = ActivationSpec::parse(name);
    spec.p = 3;
    spec.k = KScale::parse("sqrtN");
    const Index n = 9;
    auto act = spec.resolve(n, 4);
    const VectorD x = gaussian(n, 4, 1.0);
    VectorD y(n), grad(n);
    row_forward(act, x.data(), n, y.data(), nullptr, grad.data());
    auto& theta = std::get<ElementwiseActivation>(act.fn).out_scale;
    const double h = 1e-6 * theta;
    theta += h;
    const VectorD plus = forward(act, x);
    theta -= 2 * h;
    const VectorD minus = forward(act, x);
    for (Index j = 0; j < n; ++j)
      EXPECT_TRUE(test::close(grad[j], (plus[j] - minus[j]) / (2 * h), test::tol.finite_diff_rel, test::tol.finite_diff_abs))
          << name << " entry " << j;
  }
}

TEST(RowMap, BatchedKernelsEqualTheRowPath) {
  for (const auto& spec : every_activation())
    for (Index n : {3, 64, 300}) {
      SCOPED_TRACE(text(spec.label(), " n=", n));
      const auto act = spec.resolve(n, 4);
      const Index rows = 5;
      MatrixD S(rows, n), T(rows, n), Y, JT;
      fill_gaussian(S, GaussianStream(test::seed(), 5, 0, StreamTag::Logits), 2.0);
      fill_gaussian(T, GaussianStream(test::seed(), 6, 0, StreamTag::Logits), 1.0);
      activation_rows(act, S, T, Y, JT);
      for (Index i = 0; i < rows; ++i) {
        VectorD y(n), jt(n);
        RowJacobian J;
        row_forward(act, S.row(i).data(), n, y.data(), &J);
        J.jvp(T.row(i).data(), jt.data());
        for (Index j = 0; j < n; ++j) {
          ASSERT_TRUE(test::close(Y(i, j), y[j], test::tol.exact_rel, test::tol.exact_abs));
          ASSERT_TRUE(test::close(JT(i, j), jt[j], 1e-9, test::tol.exact_abs * (1 + jt.cwiseAbs().maxCoeff())));
        }
      }
    }
}

TEST(RowMap, PrenormNeedsTwoEntries) {
  const auto act = ActivationSpec::parse("softmax+prenorm").resolve(1, 4);
  const double x = 0.3;
  double y;
  EXPECT_THROW(row_forward(act, &x, 1, &y), std::invalid_argument);
}

// One entry dominating makes diag(a) and the rank-one part cancel: ‖J‖_F² must stay exact there.
TEST(RowMap, FrobeniusNormSurvivesADominantEntry) {
  for (const char* name : {"softmax", "sirenmax"}) {
    const Index n = 6;
    VectorD x = gaussian(n, 7, 1.0);
    x[2] = std::string(name) == "softmax" ? 40.0 : 1.5707963267948966 - 1e-7;  // one-hot; next to a pole
    const auto act = ActivationSpec::parse(name).resolve(n, 1);
    VectorD y(n);
    RowJacobian J;
    row_forward(act, x.data(), n, y.data(), &J);
    const double dense = J.dense().squaredNorm();
    EXPECT_GE(J.frob2(), 0.0) << name;
    EXPECT_TRUE(test::close(J.frob2(), dense, 1e-8, 1e-30)) << name;
  }
}
