// The row kernels of every activation (with and without either prenorm): the structured Jacobian against
// central differences of the row map, its products and norms against the dense matrix, the learned
// scale's gradient, the batched fused kernels against the one-row path, and PERIODIC demo.py's
// definitions against its formulas.
#include <attnlab/attention/row_map.hpp>
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/text.hpp>

#include "support.hpp"

#include <cmath>
#include <functional>

using namespace attnlab;

namespace {

std::vector<ActivationSpec> every_activation() {
  std::vector<ActivationSpec> specs;
  for (const auto& info : activation_registry())
    for (const char* transform : {"", "+prenorm", "+prenorm-released"}) {
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
      EXPECT_TRUE(
          test::close(grad[j], (plus[j] - minus[j]) / (2 * h), test::tol.finite_diff_rel, test::tol.finite_diff_abs))
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

// The trainer's controls ignore the logits: uniform is 1/n in every entry, off is 0, and both Jacobians are exactly 0
// (no gradient reaches Q or K), plain and with prenorm, on the row path and the batched kernels alike.
TEST(RowMap, ControlsIgnoreTheLogits) {
  for (const char* name : {"uniform", "uniform+prenorm", "off", "off+prenorm"}) {
    const auto spec = ActivationSpec::parse(name);
    const double value = spec.name == "uniform" ? 1.0 / 7 : 0.0;
    EXPECT_EQ(spec.label(), name);
    for (double scale : {0.1, 3.0, 40.0}) {
      SCOPED_TRACE(text(name, " logits of scale ", scale));
      const auto act = spec.resolve(7, 4);
      const VectorD x = gaussian(7, 9, scale);
      VectorD y(7);
      RowJacobian J;
      row_forward(act, x.data(), 7, y.data(), &J);
      for (Index j = 0; j < 7; ++j) EXPECT_DOUBLE_EQ(y[j], value);
      EXPECT_EQ(J.dense().cwiseAbs().maxCoeff(), 0.0);
      EXPECT_EQ(J.frob2(), 0.0);
      MatrixD S(3, 7), T(3, 7), Y, JT;
      fill_gaussian(S, GaussianStream(test::seed(), 10, 0, StreamTag::Logits), scale);
      fill_gaussian(T, GaussianStream(test::seed(), 11, 0, StreamTag::Logits), 1.0);
      activation_rows(act, S, T, Y, JT);
      EXPECT_TRUE((Y.array() == value).all());
      EXPECT_EQ(JT.cwiseAbs().maxCoeff(), 0.0);
    }
  }
  // Without prenorm the two-pass norms agree: ||phi||_F^2 = n (1/n)^2 for uniform, and no Jacobian.
  const VectorD x = gaussian(7, 12, 1.0);
  const auto norms = normalised_row_norms(std::get<RowActivation>(ActivationSpec::parse("uniform").resolve(7, 4).fn),
                                          x.data(), 7);
  EXPECT_DOUBLE_EQ(norms.frob2, 1.0 / 7);
  EXPECT_EQ(norms.jac2, 0.0);
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

// The two-pass row norms (no Jacobian formed) against the structured Jacobian's prefix/suffix sums, for every
// row-normalised g on Gaussian rows at several scales and next to a sirenmax pole. The structured form takes
// 1 − s_top by subtraction, which rounds to ε/(1 − s_top) relative: the tolerance grows with that (peaked rows).
TEST(RowMap, TwoPassRowNormsMatchTheStructuredJacobian) {
  for (const auto& info : activation_registry()) {
    if (!info.row_normalised) continue;
    for (Index n : {1, 2, 7, 300})
      for (double scale : {0.3, 2.0, 30.0})
        for (bool near_pole : {false, true}) {
          if (near_pole && info.row != RowNormalised::sirenmax) continue;
          SCOPED_TRACE(text(info.name, " n=", n, " scale=", scale, near_pole ? " near a pole" : ""));
          const auto act = ActivationSpec::parse(info.name).resolve(n, 1);
          VectorD x = gaussian(n, std::uint64_t(n), near_pole ? 0.3 : scale);
          if (near_pole) x[n / 2] = 1.5707963267948966 - 1e-3;
          VectorD y(n);
          RowJacobian J;
          row_forward(act, x.data(), n, y.data(), &J);
          const auto fast = normalised_row_norms(std::get<RowActivation>(act.fn), x.data(), n);
          EXPECT_TRUE(test::close(fast.frob2, y.squaredNorm(), 1e-12, 0));
          if (n == 1) {  // s = 1 and J = 0 exactly
            EXPECT_EQ(fast.jac2, 0.0);
            continue;
          }
          const double peaked = 1 / std::abs(1 - y.maxCoeff());
          EXPECT_TRUE(test::close(fast.jac2, J.frob2(), 1e-11 * std::max(1.0, peaked), 0))
              << "1/(1 − s_top) " << peaked;
        }
  }
}

// A softmax row (0, …, 0, L) has s_top = 1/Z and the others e/Z, e = exp(−L), Z = 1 + (n−1)e, so with R = (n−1)e,
// A_k = (n−1)e^k: ‖J‖_F² = (R² + Z²A₂ − 2Z·A₃ + 2A₂ + A₂²)/Z⁴. At L = 30, 1 − s_top ≈ 1e-13·n: subtracting s_top from
// 1 would keep about 3 digits of the largest diagonal entry.
TEST(RowMap, TwoPassRowNormsAreExactOnAOneHotRow) {
  const auto act = std::get<RowActivation>(ActivationSpec::parse("softmax").resolve(7, 1).fn);
  for (Index n : {2, 7, 300})
    for (double L : {5.0, 30.0}) {
      VectorD x = VectorD::Zero(n);
      x[n - 1] = L;
      const double e = std::exp(-L), Z = 1 + double(n - 1) * e, R = double(n - 1) * e;
      const double A2 = R * e, A3 = A2 * e;
      const double jac2 = (R * R + Z * Z * A2 - 2 * Z * A3 + 2 * A2 + A2 * A2) / (Z * Z * Z * Z);
      const auto fast = normalised_row_norms(act, x.data(), n);
      EXPECT_TRUE(test::close(fast.frob2, (1 + A2) / (Z * Z), 1e-13, 0)) << "n=" << n << " L=" << L;
      EXPECT_TRUE(test::close(fast.jac2, jac2, 1e-12, 0)) << "n=" << n << " L=" << L;
    }
}

// PERIODIC demo.py on the unscaled logits m, written as it writes them (map_norm: unbiased variance, eps 1e-5),
// against the registered `-released` definitions on x = m/√d; at d = 1 they are the paper's.
TEST(RowMap, ReleasedDefinitionsFollowDemoPy) {
  const Index n = 17;
  const VectorD m = gaussian(n, 8, 3.0);
  const auto map_norm = [&](const VectorD& v) {
    const double mean = v.mean(), var = (v.array() - mean).square().sum() / double(n - 1);
    return VectorD((v.array() - mean) / std::sqrt(var + 1e-5));
  };
  const auto rows = [](const VectorD& g) { return VectorD(g / g.sum()); };
  const double quarter_pi = std::atan(1.0);
  for (Index d : {1, 4, 64}) {
    const double c = 1 / std::sqrt(double(d));
    const std::vector<std::pair<const char*, std::function<VectorD(const VectorD&)>>> demo{
        {"sin2max-released",
         [&](const VectorD& v) { return rows(((v.array() - quarter_pi) * c + quarter_pi).sin().square()); }},
        {"sinsoftmax-released", [&](const VectorD& v) { return rows((v.array().sin() * c).exp()); }},
        {"softmax+prenorm-released", [&](const VectorD& v) { return rows((map_norm(v).array() * c).exp()); }},
        {"sin2max-released+prenorm-released",
         [&](const VectorD& v) { return rows(((map_norm(v).array() - quarter_pi) * c + quarter_pi).sin().square()); }},
        {"sinsoftmax-released+prenorm-released",
         [&](const VectorD& v) { return rows((map_norm(v).array().sin() * c).exp()); }},
        {"cosmax+prenorm", [&](const VectorD& v) { return rows(map_norm(c * v).array().cos()); }},  // the paper's
    };
    for (const auto& [name, formula] : demo) {
      SCOPED_TRACE(text(name, " d=", d));
      const VectorD got = forward(ActivationSpec::parse(name).resolve(n, d), c * m), want = formula(m);
      for (Index j = 0; j < n; ++j) EXPECT_TRUE(test::close(got[j], want[j], 1e-12, 1e-14)) << "entry " << j;
    }
  }
  for (auto [released, paper] :
       {std::pair{"sin2max-released", "sin2max"}, std::pair{"sinsoftmax-released", "sinsoftmax"},
        std::pair{"softmax+prenorm-released", "softmax+prenorm"}}) {
    const VectorD a = forward(ActivationSpec::parse(released).resolve(n, 1), m);
    const VectorD b = forward(ActivationSpec::parse(paper).resolve(n, 1), m);
    for (Index j = 0; j < n; ++j) EXPECT_TRUE(test::close(a[j], b[j], 1e-12, 1e-14)) << released << " entry " << j;
  }
}

TEST(RowMap, PrenormTransformsParseAndLabel) {
  const auto released = ActivationSpec::parse("sinsoftmax-released+prenorm-released+qkln");
  EXPECT_TRUE(released.transforms.prenorm && released.transforms.prenorm_before_scaling &&
              released.transforms.qk_layernorm);
  EXPECT_EQ(released.label(), "sinsoftmax-released+prenorm-released+qkln");
  EXPECT_NE(released.key(), ActivationSpec::parse("sinsoftmax-released+prenorm+qkln").key());
  EXPECT_FALSE(ActivationSpec::parse("softmax+prenorm").transforms.prenorm_before_scaling);
  EXPECT_THROW(ActivationSpec::parse("softmax+prenorm-released+prenorm"), std::invalid_argument);
  EXPECT_THROW(ActivationSpec::parse("softmax+prenorm-release"), std::invalid_argument);
}
