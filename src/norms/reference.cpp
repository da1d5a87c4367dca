#include <attnlab/norms/reference.hpp>

#include <cmath>

namespace attnlab::reference {
namespace {

// LayerNorm without affine of one token (biased variance) and its Jacobian, entry by entry.
VectorD layernorm(const VectorD& u, double eps) {
  const double mu = u.mean(), var = (u.array() - mu).square().mean();
  return (u.array() - mu) / std::sqrt(var + eps);
}

MatrixD layernorm_jacobian(const VectorD& u, double eps) {
  const Index d = u.size();
  const double mu = u.mean(), var = (u.array() - mu).square().mean(), sigma = std::sqrt(var + eps);
  MatrixD J(d, d);
  for (Index a = 0; a < d; ++a)
    for (Index b = 0; b < d; ++b)
      J(a, b) = ((a == b) - 1.0 / d) / sigma - (u[a] - mu) * (u[b] - mu) / (d * sigma * sigma * sigma);
  return J;
}

// PERIODIC's prenorm (unbiased variance) of one row and its Jacobian, entry by entry.
VectorD prenormed(const VectorD& x, double eps) {
  const Index n = x.size();
  const double m = x.mean(), var = (x.array() - m).square().sum() / double(n - 1);
  return (x.array() - m) / std::sqrt(var + eps);
}

MatrixD prenorm_jacobian(const VectorD& x, double eps) {
  const Index n = x.size();
  const double m = x.mean(), var = (x.array() - m).square().sum() / double(n - 1), sigma = std::sqrt(var + eps);
  MatrixD J(n, n);
  for (Index a = 0; a < n; ++a)
    for (Index b = 0; b < n; ++b)
      J(a, b) = ((a == b) - 1.0 / n) / sigma - (x[a] - m) * (x[b] - m) / ((n - 1) * sigma * sigma * sigma);
  return J;
}

// ϕ(z) of one row and ∂ϕ_j/∂z_l.
VectorD activation_row(const ActivationFunction& f, const VectorD& z, MatrixD* jacobian) {
  const Index n = z.size();
  VectorD y(n), dy(n);
  if (const auto* a = std::get_if<ElementwiseActivation>(&f)) {
    for (Index j = 0; j < n; ++j) {
      if (a->fn != Elementwise::formula) evaluate(a->fn, a->p, z[j], y[j], dy[j]);
      else a->formula->evaluate(&z[j], 1, &y[j], &dy[j]);
      y[j] *= a->out_scale;
      dy[j] *= a->out_scale;
    }
    if (jacobian) *jacobian = dy.asDiagonal();
    return y;
  }
  const auto& row = std::get<RowActivation>(f);
  for (Index j = 0; j < n; ++j)
    if (row.fn != RowNormalised::formula)
      evaluate_row(row.fn, z[j], {.shift = 0.0, .logit_scale = row.logit_scale}, y[j], dy[j]);
    else row.formula->evaluate(&z[j], 1, &y[j], &dy[j]);
  const double G = y.sum();
  if (jacobian) {
    *jacobian = -(y / G) * (dy / G).transpose();  // −g_j g'_l/G²
    jacobian->diagonal() += dy / G;
  }
  return y / G;
}

// The logits' factors: rows of XQ and XK (layer-normed with qk-layernorm) and each token's
// LayerNorm Jacobian (identity without).
struct Factors {
  MatrixD U, V;
  std::vector<MatrixD> dU, dV;
};

Factors factors(const MatrixD& X, const MatrixD& Q, const MatrixD& K, const Transforms& t) {
  Factors f{X * Q, X * K, {}, {}};
  for (auto [W, dW] : {std::pair{&f.U, &f.dU}, std::pair{&f.V, &f.dV}})
    for (Index i = 0; i < W->rows(); ++i) {
      const VectorD raw = W->row(i).transpose();
      if (!t.qk_layernorm) {
        dW->push_back(MatrixD::Identity(raw.size(), raw.size()));
        continue;
      }
      dW->push_back(layernorm_jacobian(raw, t.qk_eps));
      W->row(i) = layernorm(raw, t.qk_eps).transpose();
    }
  return f;
}

// Row i of ϕ and, if asked, ∂ϕ_ij/∂M_il with M = UVᵀ the unscaled logits.
VectorD row_of_phi(const VectorD& m, const Activation& a, MatrixD* dM) {
  const double c = logit_scale(a);
  const VectorD x = c * m;
  MatrixD J;
  if (!a.transforms.prenorm) {
    const VectorD y = activation_row(a.fn, x, dM ? &J : nullptr);
    if (dM) *dM = c * J;
    return y;
  }
  const double eps = a.transforms.prenorm_eps;
  if (a.transforms.prenorm_before_scaling) {  // demo.py: ϕ(c·prenorm(m))
    const VectorD y = activation_row(a.fn, c * prenormed(m, eps), dM ? &J : nullptr);
    if (dM) *dM = c * J * prenorm_jacobian(m, eps);
    return y;
  }
  const VectorD y = activation_row(a.fn, prenormed(x, eps), dM ? &J : nullptr);
  if (dM) *dM = c * J * prenorm_jacobian(x, eps);
  return y;
}

}  // namespace

MatrixD softmax_rows(const MatrixD& A) {
  MatrixD S(A.rows(), A.cols());
  for (Index i = 0; i < A.rows(); ++i) {
    const Eigen::ArrayXd e = (A.row(i).array() - A.row(i).maxCoeff()).exp().transpose();
    S.row(i) = (e / e.sum()).transpose();
  }
  return S;
}

MatrixD softmax_jacobian(const MatrixD& A) {
  const Index N = A.rows(), n = A.cols();
  const MatrixD S = softmax_rows(A);
  MatrixD J = MatrixD::Zero(N * n, N * n);
  for (Index i = 0; i < N; ++i)
    for (Index j = 0; j < n; ++j)
      for (Index l = 0; l < n; ++l) J(i * n + j, i * n + l) = (j == l ? S(i, j) : 0.0) - S(i, j) * S(i, l);
  return J;
}

MatrixD attention_matrix(const MatrixD& X, const MatrixD& Q, const MatrixD& K, const Activation& activation) {
  const auto f = factors(X, Q, K, activation.transforms);
  const MatrixD M = f.U * f.V.transpose();
  MatrixD A(M.rows(), M.cols());
  for (Index i = 0; i < M.rows(); ++i) A.row(i) = row_of_phi(M.row(i).transpose(), activation, nullptr).transpose();
  return A;
}

MatrixD logit_jacobian(const MatrixD& X, const MatrixD& Q, const MatrixD& K, const Activation& activation) {
  const auto f = factors(X, Q, K, activation.transforms);
  const MatrixD M = f.U * f.V.transpose();
  const Index N = M.rows();
  MatrixD J = MatrixD::Zero(N * N, N * N), dM;
  for (Index i = 0; i < N; ++i) {
    row_of_phi(M.row(i).transpose(), activation, &dM);
    J.block(i * N, i * N, N, N) = dM / logit_scale(activation);
  }
  return J;
}

MatrixD q_jacobian(const MatrixD& X, const MatrixD& Q, const MatrixD& K, const Activation& activation) {
  const auto f = factors(X, Q, K, activation.transforms);
  const MatrixD M = f.U * f.V.transpose();
  const Index N = X.rows(), D = Q.rows(), d = Q.cols();
  MatrixD J = MatrixD::Zero(N * N, D * d), dM;
  for (Index i = 0; i < N; ++i) {
    row_of_phi(M.row(i).transpose(), activation, &dM);  // ∂ϕ_ij/∂M_il
    // ∂M_il/∂Q_kr = X_ik (dU_iᵀ v_l)_r
    const MatrixD dV = f.V * f.dU[i];
    for (Index j = 0; j < N; ++j)
      for (Index l = 0; l < N; ++l)
        for (Index k = 0; k < D; ++k)
          for (Index r = 0; r < d; ++r) J(i * N + j, k * d + r) += dM(j, l) * X(i, k) * dV(l, r);
  }
  return J;
}

MatrixD k_jacobian(const MatrixD& X, const MatrixD& Q, const MatrixD& K, const Activation& activation) {
  const auto f = factors(X, Q, K, activation.transforms);
  const MatrixD M = f.U * f.V.transpose();
  const Index N = X.rows(), D = K.rows(), d = K.cols();
  MatrixD J = MatrixD::Zero(N * N, D * d), dM;
  for (Index i = 0; i < N; ++i) {
    row_of_phi(M.row(i).transpose(), activation, &dM);
    // ∂M_il/∂K_kr = X_lk (dV_lᵀ u_i)_r
    for (Index l = 0; l < N; ++l) {
      const VectorD du = f.dV[l].transpose() * f.U.row(i).transpose();
      for (Index j = 0; j < N; ++j)
        for (Index k = 0; k < D; ++k)
          for (Index r = 0; r < d; ++r) J(i * N + j, k * d + r) += dM(j, l) * X(l, k) * du[r];
    }
  }
  return J;
}

}  // namespace attnlab::reference
