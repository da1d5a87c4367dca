#pragma once
// Frobenius norms of ϕ(M), of its Jacobian w.r.t. its logits, and of its Q- and K-gradients
// (the full N×N×D×d tensors), streamed over tiles of M = (XQ)(XK)ᵀ so that memory stays
// O(N·(D + d + block)) and the N×N matrix is never formed.
//
// With U = XQ, V = XK and M_ij = u_i·v_j:
//   elementwise ϕ:  ‖∂ϕ/∂Q‖² = Σ_ij ϕ'(M_ij)² ‖x_i‖² ‖v_j‖²,   ‖∂ϕ/∂K‖² = Σ_ij ϕ'(M_ij)² ‖u_i‖² ‖x_j‖²
//   row-normalised s = g(c·m_i)/G:  ‖∂ϕ/∂Q‖² = c² Σ_i ‖x_i‖² Σ_j ‖Σ_l J_jl v_l‖², J_jl = δ_jl g'_j/G − s_j g'_l/G
//   (softmax: Σ_j s_j² ‖v_j − v̄_i‖²), and K the same with (u_i, x_j) for (x_i, v_j).
#include <attnlab/attention/activation.hpp>
#include <attnlab/attention/row_map.hpp>
#include <attnlab/core/types.hpp>
#include <attnlab/norms/norms_squared.hpp>

namespace attnlab {

struct TileShape {  // both at least 1
  Index rows = 64;
  Index cols = 256;
};

// Parallel over row blocks (OpenMP) unless called inside a parallel region; the partition
// and the reduction order do not depend on the thread count. Without `gradients`, qgrad2 and kgrad2 are left 0 and
// not paid for: softmax (without prenorm) then runs on the fused tile path, its rows' sums streamed across tiles.
template <class T>
AttentionNormsSquared attention_norms_streamed(const Matrix<T>& X, const Matrix<T>& Q, const Matrix<T>& K,
                                               const Activation& activation, TileShape tile = {},
                                               bool gradients = true);

// Per-row closed forms for a row x of logits, s = g(x)/Σg, from the row's structured Jacobian.
RowNorms row_norms(RowNormalised f, const double* logits, Index n);
RowNorms softmax_row_norms(const double* logits, Index n);

// ‖softmax(A)‖_F² and ‖∇softmax(A)‖_F² (the N²×N² Jacobian) of an arbitrary square matrix.
RowNorms softmax_matrix_norms(const MatrixD& A);

}  // namespace attnlab
