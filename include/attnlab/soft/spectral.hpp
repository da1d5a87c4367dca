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

double spectral_norm_svd(const MatrixD& M);  // dense reference
double spectral_radius(const MatrixD& M);    // max |λ| (dense eigen-decomposition)

}  // namespace attnlab
