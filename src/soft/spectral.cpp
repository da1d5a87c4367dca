#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/linalg.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/soft/spectral.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <stdexcept>
#include <vector>

namespace attnlab {

SpectralNorm spectral_norm(const LinearMap& apply, const LinearMap& apply_transpose, Index rows, Index cols,
                           const SpectralOptions& options) {
  if (rows < 1 || cols < 1) throw std::invalid_argument("spectral_norm: empty operator");
  if (!(options.tolerance >= 0))
    throw std::invalid_argument(text("tolerance must be >= 0 (got ", options.tolerance, ")"));
  // Lanczos on MᵀM from a Gaussian start, every new vector reorthogonalised against all earlier ones.
  MatrixD start(1, cols);
  fill_gaussian(start, GaussianStream(options.seed, hash_string("lanczos"), 0, StreamTag::Search), 1.0);
  std::vector<VectorD> basis{start.row(0).transpose().normalized()};
  std::vector<double> alpha, beta;
  SpectralNorm out;
  double previous = 0;
  const int cap = static_cast<int>(std::min<Index>(options.max_iterations, cols));
  for (int k = 0; k < cap; ++k) {
    VectorD w = apply_transpose(apply(basis.back()));
    alpha.push_back(basis.back().dot(w));
    for (int pass = 0; pass < 2; ++pass)
      for (const auto& q : basis) w -= q.dot(w) * q;
    const double b = w.norm();
    const Index size = static_cast<Index>(alpha.size());
    MatrixD T = MatrixD::Zero(size, size);
    for (Index i = 0; i < size; ++i) {
      T(i, i) = alpha[static_cast<std::size_t>(i)];
      if (i + 1 < size) T(i, i + 1) = T(i + 1, i) = beta[static_cast<std::size_t>(i)];
    }
    const double ritz = linalg::symmetric_eigenvalues(T).maxCoeff();
    out.value = std::sqrt(std::max(0.0, ritz));
    out.iterations = k + 1;
    const bool exhausted = b <= 1e-14 * std::max(1.0, std::abs(ritz));  // an invariant subspace: exact
    if (exhausted || (k > 0 && std::abs(ritz - previous) <= options.tolerance * std::abs(ritz))) {
      out.converged = true;
      return out;
    }
    previous = ritz;
    beta.push_back(b);
    basis.push_back(w / b);
  }
  out.converged = cap == cols;  // a full Krylov space is exact
  return out;
}

SpectralNorm spectral_norm(const MatrixD& M, const SpectralOptions& options) {
  return spectral_norm([&](const VectorD& v) -> VectorD { return M * v; },
                       [&](const VectorD& u) -> VectorD { return M.transpose() * u; }, M.rows(), M.cols(), options);
}

namespace {
bool symmetric(const MatrixD& M) { return M.rows() == M.cols() && M == M.transpose(); }
}  // namespace

double spectral_norm_svd(const MatrixD& M) {
  if (M.size() == 0) return 0;
  if (symmetric(M)) return linalg::symmetric_eigenvalues(M).cwiseAbs().maxCoeff();
  const MatrixD gram = M.rows() < M.cols() ? MatrixD(M * M.transpose()) : MatrixD(M.transpose() * M);
  return std::sqrt(std::max(0.0, linalg::symmetric_eigenvalues(gram).maxCoeff()));
}

VectorD singular_values(const MatrixD& M) {
  if (!symmetric(M)) return linalg::jacobi_singular_values(M);
  VectorD s = linalg::symmetric_eigenvalues(M).cwiseAbs();
  std::sort(s.begin(), s.end(), std::greater<>());
  return s;
}

RankRevealingPinv rank_revealing_pinv(const MatrixD& M, double relative_cutoff) {
  if (!(relative_cutoff >= 0) || !std::isfinite(relative_cutoff))
    throw std::invalid_argument(text("rank tolerance must be a finite number >= 0 (got ", relative_cutoff, ")"));
  const double relative = relative_cutoff > 0
                              ? relative_cutoff
                              : double(std::max(M.rows(), M.cols())) * std::numeric_limits<double>::epsilon();
  RankRevealingPinv out;
  if (symmetric(M)) {
    const linalg::SymmetricEigen eig = linalg::symmetric_eigen(M);
    const VectorD& l = eig.values;
    out.cutoff = relative * l.cwiseAbs().maxCoeff();
    const VectorD inv = l.unaryExpr([&](double v) { return std::abs(v) > out.cutoff ? 1 / v : 0.0; });
    out.rank = (l.cwiseAbs().array() > out.cutoff).count();
    const MatrixD X = eig.vectors * inv.asDiagonal() * eig.vectors.transpose();
    out.pinv = 0.5 * (X + X.transpose());  // A⁺ of a symmetric A is symmetric; the product is so only to rounding
    return out;
  }
  const linalg::ThinSvd svd = linalg::jacobi_svd(M);
  const VectorD& s = svd.singular_values;
  out.cutoff = relative * (s.size() > 0 ? s(0) : 0.0);
  const VectorD inv = s.unaryExpr([&](double v) { return v > out.cutoff ? 1 / v : 0.0; });
  out.rank = (s.array() > out.cutoff).count();
  out.pinv = svd.V * inv.asDiagonal() * svd.U.transpose();
  return out;
}

MatrixD dense_pinv(const MatrixD& M) { return rank_revealing_pinv(M).pinv; }

double spectral_radius(const MatrixD& M) {
  if (M.rows() != M.cols()) throw std::invalid_argument("spectral_radius: the matrix is not square");
  return linalg::eigenvalues(M).cwiseAbs().maxCoeff();
}

}  // namespace attnlab
