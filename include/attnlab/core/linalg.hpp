#pragma once
// Eigen's dense decompositions behind plain functions, instantiated once in src/core/linalg.cpp: each costs 10–25 s of
// compile time in every file that names it. Each is the Eigen call its name says, with nothing added.
#include <attnlab/core/types.hpp>

namespace attnlab::linalg {

// SelfAdjointEigenSolver: the eigenvalues of the symmetric A (its lower triangle is read), ascending.
VectorD symmetric_eigenvalues(const MatrixD& A);
struct SymmetricEigen {
  VectorD values;   // ascending
  MatrixD vectors;  // column i belongs to values(i)
};
SymmetricEigen symmetric_eigen(const MatrixD& A);

// EigenSolver without eigenvectors: the eigenvalues of a general square A.
Eigen::VectorXcd eigenvalues(const MatrixD& A);

// One-sided Jacobi SVD (JacobiSVD): singular values, descending; the thin factors M = U diag(s) Vᵀ.
VectorD jacobi_singular_values(const MatrixD& M);
struct ThinSvd {
  MatrixD U;
  VectorD singular_values;
  MatrixD V;
};
ThinSvd jacobi_svd(const MatrixD& M);

// The orthogonal factor Q of HouseholderQR, as a dense square matrix.
MatrixD householder_q(const MatrixD& M);

// A⁻¹ by LU with partial pivoting (what Eigen's inverse() does for a dynamic size).
MatrixD inverse(const MatrixD& A);

}  // namespace attnlab::linalg
