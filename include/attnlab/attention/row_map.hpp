#pragma once
// One row of the activation's argument S through prenorm (if any) and the activation, with the
// row's Jacobian in structured form. Every activation's row Jacobian is a diagonal plus rank ≤ 3:
//   elementwise       J = diag(ϕ')
//   row-normalised    J = diag(r) − s rᵀ,  s = g/Σg, r = g'/Σg
//   with prenorm      J_z · P,  P = (I − 11ᵀ/n − zzᵀ/((n−1)a²))/σ, the Jacobian of z = (x − x̄)/σ,
//                     σ = sqrt(var x + a²eps)/a (a = 1; demo.py's placement before 1/√d: a = the logit scale)
// so J·t, Jᵀ·t, ‖J‖_F² and ‖J W‖_F² cost O(n) per column instead of O(n²).
#include <attnlab/attention/activation.hpp>
#include <attnlab/core/types.hpp>

#include <array>
#include <span>

namespace attnlab {

struct RowJacobian {
  VectorD diag;  // a: J = diag(a) + Σ_k left_k right_kᵀ
  std::array<VectorD, 3> left, right;
  int rank = 0;

  void jvp(const double* t, double* out) const;  // out = J t
  void vjp(const double* t, double* out) const;  // out = Jᵀ t
  double frob2() const;                          // ‖J‖_F², without cancellation
  VectorD diagonal() const;                      // ∂ϕ_j/∂x_j
  // ‖J W‖_F² for W (n × m) with w2 = the squared norms of W's rows.
  double frob2_times(const MatrixD& W, const VectorD& w2) const;
  MatrixD times(const MatrixD& W) const;  // J W, for W of n rows
  MatrixD dense() const;                  // for tests
};

// ‖J_i W‖_F² for each row Jacobian J_i of a block (all of one activation, so of one rank), by GEMMs
// over the block: Σ_j a_j²‖w_j‖² + 2 Σ_k (Wᵀ(a∘l_k))·(Wᵀr_k) + Σ_kl (l_k·l_l)(Wᵀr_k·Wᵀr_l).
VectorD frob2_times(std::span<const RowJacobian> rows, const MatrixD& W, const VectorD& w2);

// Σ_j s_j² and the squared Frobenius norm of the row Jacobian J_jl = (δ_jl g'_j − s_j g'_l)/Σg of a row s = g(x)/Σg
// (for softmax, diag(s) − s sᵀ).
struct RowNorms {
  double frob2 = 0;
  double jac2 = 0;
};

// The same for one row x (logit scale applied, no prenorm) from vectorised passes over the row (g and g', their largest
// entries, then five sums), J never formed; matches row_forward's RowJacobian::frob2 to rounding, and is exact where
// that form's 1 − s_top cancels (peaked rows, sirenmax next to a pole).
RowNorms normalised_row_norms(const RowActivation& a, const double* x, Index n);

// h and h' of an elementwise activation (out_scale not applied) over n arguments s: its tape for a formula.
void elementwise_terms(const ElementwiseActivation& a, const double* s, Index n, double* h, double* dh);

// g and g' of a row-normalised activation over one row x (softmax's relative to the row maximum); returns Σg.
double row_terms(const RowActivation& a, const double* x, Index n, double* g, double* dg);

// y = ϕ(x) for one row x (the activation's argument: logit_scale already applied) of length n.
// With J, fills ∂ϕ/∂x; with scale_grad (elementwise ϕ only), ∂ϕ_j/∂out_scale = h(z_j), the gradient
// of a learned scale θ in ϕ = θ·h.
void row_forward(const Activation& a, const double* x, Index n, double* y, RowJacobian* J = nullptr,
                 double* scale_grad = nullptr);

// The activation kernels on a batch of rows (rows × n): Y = ϕ(S) and JT = J(S)·T row by row,
// in parallel over rows. Elementwise and row-normalised ϕ without prenorm take fused loops.
void activation_rows(const Activation& a, const MatrixD& S, const MatrixD& T, MatrixD& Y, MatrixD& JT);

}  // namespace attnlab
