#pragma once
// Simple dense references: the ground truth the streamed estimators are tested against.
// They form N×N matrices and full Jacobians, so they are for small N only.
#include <attnlab/attention/activation.hpp>
#include <attnlab/core/types.hpp>

namespace attnlab::reference {

// ϕ(XQKᵀXᵀ) as a dense N×N matrix.
MatrixD attention_matrix(const MatrixD& X, const MatrixD& Q, const MatrixD& K, const Activation& activation);

// Row-wise softmax of A.
MatrixD softmax_rows(const MatrixD& A);

// The N²×N² Jacobian of the row-wise softmax at A; row i·N+j holds ∂softmax(A)_ij/∂A.
MatrixD softmax_jacobian(const MatrixD& A);

// ∂ϕ_ij/∂Q_kl, shaped (N·N) × (D·d), built entry by entry from the chain rule.
MatrixD q_jacobian(const MatrixD& X, const MatrixD& Q, const MatrixD& K, const Activation& activation);
MatrixD k_jacobian(const MatrixD& X, const MatrixD& Q, const MatrixD& K, const Activation& activation);

// The Jacobian of ϕ w.r.t. its argument S, shaped (N·N) × (N·N).
MatrixD logit_jacobian(const MatrixD& X, const MatrixD& Q, const MatrixD& K, const Activation& activation);

}  // namespace attnlab::reference
