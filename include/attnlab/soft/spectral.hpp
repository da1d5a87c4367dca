#pragma once
// Spectral norms: Lanczos on MᵀM with full reorthogonalisation, matrix-free (only products with M
// and Mᵀ), with a convergence criterion on the Ritz value; the dense SVD for small matrices; the
// spectral radius (largest |eigenvalue|), which differs from the norm for non-symmetric matrices.
#include <attnlab/core/types.hpp>

#include <cstdint>
#include <functional>

namespace attnlab {

using LinearMap = std::function<VectorD(const VectorD&)>;

struct SpectralOptions {
  double tolerance = 1e-10;  // relative change of the largest Ritz value between steps
  int max_iterations = 200;  // Krylov dimension cap
  std::uint64_t seed = 1;    // the starting vector
};

struct SpectralNorm {
  double value = 0;
  int iterations = 0;
  bool converged = false;
};

// σ₁ of an operator M: R^cols → R^rows given by v ↦ Mv and u ↦ Mᵀu.
SpectralNorm spectral_norm(const LinearMap& apply, const LinearMap& apply_transpose, Index rows, Index cols,
                           const SpectralOptions& options = {});
SpectralNorm spectral_norm(const MatrixD& M, const SpectralOptions& options = {});

// Dense reference: max |λ| for symmetric M, else √λ_max of the smaller Gram matrix (MᵀM or MMᵀ), both by the
// symmetric eigensolver, which holds σ₁ to rounding (unlike Eigen 3.4.0's BDCSVD) at a fraction of one-sided
// Jacobi's cost for large M.
double spectral_norm_svd(const MatrixD& M);
double spectral_radius(const MatrixD& M);  // max |λ| (dense eigen-decomposition)

// All singular values, largest first: |λ| by the symmetric eigensolver when M = Mᵀ (every SOFT bottleneck),
// one-sided Jacobi otherwise (Eigen 3.4.0's BDCSVD is wrong when most singular values vanish).
VectorD singular_values(const MatrixD& M);

// The Moore–Penrose pseudo-inverse with singular values ≤ cutoff = relative_cutoff·σ₁ taken as zero
// (relative_cutoff 0: max(rows, cols)·ε, where rounding puts the singular values of a rank-deficient M), by the
// same two decompositions; `rank` counts the singular values kept.
struct RankRevealingPinv {
  MatrixD pinv;
  Index rank = 0;
  double cutoff = 0;
};
RankRevealingPinv rank_revealing_pinv(const MatrixD& M, double relative_cutoff = 0);
MatrixD dense_pinv(const MatrixD& M);  // rank_revealing_pinv(M).pinv

}  // namespace attnlab
