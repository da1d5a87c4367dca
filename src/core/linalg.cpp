#include <attnlab/core/linalg.hpp>

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>
#include <Eigen/SVD>

namespace attnlab::linalg {

VectorD symmetric_eigenvalues(const MatrixD& A) {
  return Eigen::SelfAdjointEigenSolver<MatrixD>(A, Eigen::EigenvaluesOnly).eigenvalues();
}

SymmetricEigen symmetric_eigen(const MatrixD& A) {
  const Eigen::SelfAdjointEigenSolver<MatrixD> eig(A);
  return {eig.eigenvalues(), eig.eigenvectors()};
}

Eigen::VectorXcd eigenvalues(const MatrixD& A) { return Eigen::EigenSolver<MatrixD>(A, false).eigenvalues(); }

VectorD jacobi_singular_values(const MatrixD& M) { return Eigen::JacobiSVD<MatrixD>(M).singularValues(); }

ThinSvd jacobi_svd(const MatrixD& M) {
  const Eigen::JacobiSVD<MatrixD> svd(M, Eigen::ComputeThinU | Eigen::ComputeThinV);
  return {svd.matrixU(), svd.singularValues(), svd.matrixV()};
}

MatrixD householder_q(const MatrixD& M) { return Eigen::HouseholderQR<MatrixD>(M).householderQ(); }

MatrixD inverse(const MatrixD& A) { return A.inverse(); }

}  // namespace attnlab::linalg
