#include <attnlab/norms/reference.hpp>

#include <cmath>

namespace attnlab::reference {
namespace {

// ∂ϕ_ij/∂M_il for row i of logits m (unscaled); elementwise ϕ only has l = j.
MatrixD row_derivatives(const RowVector<double>& m, const Activation& activation) {
  const Index n = m.size();
  if (const auto* a = std::get_if<ElementwiseActivation>(&activation)) {
    MatrixD J = MatrixD::Zero(n, n);
    for (Index j = 0; j < n; ++j) {
      double h, dh;
      evaluate(a->fn, a->p, a->logit_scale * m[j], h, dh);
      J(j, j) = a->out_scale * dh * a->logit_scale;
    }
    return J;
  }
  const auto& row = std::get<RowActivation>(activation);
  const double c = row.logit_scale;
  VectorD g(n), dg(n);
  for (Index j = 0; j < n; ++j) evaluate_row(row.fn, c * m[j], 0.0, g[j], dg[j]);
  const double G = g.sum();
  MatrixD J = -c * (g / G) * (dg / G).transpose();  // −s_j g'_l/G
  J.diagonal() += c * dg / G;
  return J;
}

double logit_scale(const Activation& activation) {
  return std::visit([](const auto& a) { return a.logit_scale; }, activation);
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
  const MatrixD M = X * Q * K.transpose() * X.transpose();
  if (const auto* a = std::get_if<ElementwiseActivation>(&activation))
    return M.unaryExpr([&](double m) {
      double h, dh;
      evaluate(a->fn, a->p, a->logit_scale * m, h, dh);
      return a->out_scale * h;
    });
  const auto& row = std::get<RowActivation>(activation);
  MatrixD S = row.logit_scale * M;
  for (Index i = 0; i < S.rows(); ++i) {
    for (Index j = 0; j < S.cols(); ++j) {
      double dg;
      evaluate_row(row.fn, S(i, j), 0.0, S(i, j), dg);
    }
    S.row(i) /= S.row(i).sum();
  }
  return S;
}

MatrixD logit_jacobian(const MatrixD& X, const MatrixD& Q, const MatrixD& K, const Activation& activation) {
  const MatrixD M = X * Q * K.transpose() * X.transpose();
  const Index N = M.rows();
  const double c = logit_scale(activation);
  MatrixD J = MatrixD::Zero(N * N, N * N);
  for (Index i = 0; i < N; ++i) J.block(i * N, i * N, N, N) = row_derivatives(M.row(i), activation) / c;
  return J;
}

MatrixD q_jacobian(const MatrixD& X, const MatrixD& Q, const MatrixD& K, const Activation& activation) {
  const MatrixD V = X * K, M = X * Q * V.transpose();
  const Index N = X.rows(), D = Q.rows(), d = Q.cols();
  MatrixD J = MatrixD::Zero(N * N, D * d);
  for (Index i = 0; i < N; ++i) {
    const MatrixD dM = row_derivatives(M.row(i), activation);  // ∂ϕ_ij/∂M_il
    // ∂M_il/∂Q_kr = X_ik V_lr
    for (Index j = 0; j < N; ++j)
      for (Index l = 0; l < N; ++l)
        for (Index k = 0; k < D; ++k)
          for (Index r = 0; r < d; ++r) J(i * N + j, k * d + r) += dM(j, l) * X(i, k) * V(l, r);
  }
  return J;
}

MatrixD k_jacobian(const MatrixD& X, const MatrixD& Q, const MatrixD& K, const Activation& activation) {
  const MatrixD U = X * Q, M = U * (X * K).transpose();
  const Index N = X.rows(), D = K.rows(), d = K.cols();
  MatrixD J = MatrixD::Zero(N * N, D * d);
  for (Index i = 0; i < N; ++i) {
    const MatrixD dM = row_derivatives(M.row(i), activation);
    // ∂M_il/∂K_kr = U_ir X_lk
    for (Index j = 0; j < N; ++j)
      for (Index l = 0; l < N; ++l)
        for (Index k = 0; k < D; ++k)
          for (Index r = 0; r < d; ++r) J(i * N + j, k * d + r) += dM(j, l) * U(i, r) * X(l, k);
  }
  return J;
}

}  // namespace attnlab::reference
