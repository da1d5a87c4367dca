#include <attnlab/core/parallel.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/soft/kernel.hpp>
#include <attnlab/soft/pinv.hpp>
#include <attnlab/soft/spectral.hpp>

#include <cmath>
#include <stdexcept>

namespace attnlab {

PinvMethod parse_pinv_method(const std::string& s) {
  if (s == "svd") return PinvMethod::svd;
  if (s == "newton") return PinvMethod::newton;
  if (s == "newton-beta") return PinvMethod::newton_beta;
  if (s == "released") return PinvMethod::released;
  if (s == "nystromformer") return PinvMethod::nystromformer;
  throw std::invalid_argument(
      text("pinv method must be svd, newton, newton-beta, released or nystromformer (got '", s, "')"));
}

std::string to_string(PinvMethod m) {
  switch (m) {
    case PinvMethod::svd: return "svd";
    case PinvMethod::newton: return "newton";
    case PinvMethod::newton_beta: return "newton-beta";
    case PinvMethod::released: return "released";
    case PinvMethod::nystromformer: return "nystromformer";
  }
  return "?";
}

void PinvOptions::validate() const {
  if (max_iterations < 0) throw std::invalid_argument(text("max iterations must be >= 0 (got ", max_iterations, ")"));
  if (!(tolerance >= 0) || !std::isfinite(tolerance))
    throw std::invalid_argument(text("tolerance must be a finite number >= 0 (got ", tolerance, ")"));
  if (!(alpha >= 0) || !std::isfinite(alpha))
    throw std::invalid_argument(text("alpha must be a finite number >= 0 (got ", alpha, ")"));
}

namespace {

double norm1(const MatrixD& A) { return A.cwiseAbs().colwise().sum().maxCoeff(); }
double norm_inf(const MatrixD& A) { return A.cwiseAbs().rowwise().sum().maxCoeff(); }

double norm2(const MatrixD& M) {
  return M.rows() <= 64 ? spectral_norm_svd(M) : spectral_norm(M, {.tolerance = 1e-8}).value;
}

// ‖I − αA‖₁ − 1 without forming I − αA: |1 − αa_jj| − 1 + α Σ_{i≠j} |a_ij| per column, so that a rule
// met only because 1 − αa_jj rounds to 1 does not count as met.
double beta_rule_excess(const MatrixD& A, double alpha) {
  double worst = -HUGE_VAL;
  for (Index j = 0; j < A.cols(); ++j) {
    const double x = alpha * A(j, j), off = alpha * (A.col(j).cwiseAbs().sum() - std::abs(A(j, j)));
    worst = std::max(worst, (x <= 1 ? -x : x - 2) + off);  // |1 − x| − 1, exactly
  }
  return worst;
}

// α = 2βⁿ/‖A‖₁² with the smallest n ≥ 0 such that ‖I − αA‖₁ ≤ 1.
double beta_rule_alpha(const MatrixD& A) {
  if (A.rows() != A.cols()) throw std::invalid_argument("newton-beta: ||I - alpha A||_1 needs a square matrix");
  double alpha = 2 / (norm1(A) * norm1(A));
  for (int n = 0; n < 64; ++n, alpha *= 0.5)
    if (beta_rule_excess(A, alpha) <= 0) return alpha;
  throw std::invalid_argument(text("newton-beta: no n < 64 gives ||I - alpha A||_1 <= 1 (for small alpha it is 1 + ",
                                   "alpha (largest off-diagonal column sum - diagonal), > 1 here)"));
}

}  // namespace

double newton_alpha_limit(const MatrixD& A) {
  const double s = spectral_norm_svd(A);
  return 2 / (s * s);
}

PinvResult pseudo_inverse(const MatrixD& A_in, const PinvOptions& opt) {
  opt.validate();
  if (A_in.size() == 0) throw std::invalid_argument("pinv: the matrix is empty");
  if (!A_in.allFinite()) throw std::invalid_argument("pinv: the matrix has non-finite entries");
  if (A_in.cwiseAbs().maxCoeff() == 0) throw std::invalid_argument("pinv: the matrix is zero");
  const bool regularised = opt.method == PinvMethod::released;
  if (regularised && A_in.rows() != A_in.cols()) throw std::invalid_argument("pinv: released needs a square matrix");
  const MatrixD A = regularised ? MatrixD(A_in + 0.01 * MatrixD::Identity(A_in.rows(), A_in.cols())) : A_in;
  PinvResult out;
  const MatrixD reference = opt.trace || opt.method == PinvMethod::svd ? dense_pinv(A) : MatrixD();
  const bool monitor = opt.trace || opt.tolerance > 0;  // else only a non-finite iterate counts as divergence
  const double normA = monitor ? norm2(A) : 1.0;        // > 0: A is not zero
  const auto record = [&](int k, const MatrixD& X) {
    if (!monitor) return 0.0;
    const double residual = norm2(A * X * A - A) / normA;
    if (opt.trace) out.trace.push_back({k, residual, norm2(X - reference)});
    return residual;
  };
  if (opt.method == PinvMethod::svd) {
    out.inverse = reference;
    out.converged = true;
    record(0, reference);
    out.status = "dense SVD";
    return out;
  }
  const int defaults = opt.method == PinvMethod::released ? 20 : opt.method == PinvMethod::nystromformer ? 6 : 100;
  const int cap = opt.max_iterations > 0 ? opt.max_iterations : defaults;
  MatrixD X;
  if (opt.method == PinvMethod::nystromformer) {
    X = A.transpose() / (norm1(A) * norm_inf(A));
  } else {
    out.alpha = opt.alpha > 0 ? opt.alpha
                : opt.method == PinvMethod::newton ? 2 / (norm1(A) * norm1(A))
                : opt.method == PinvMethod::newton_beta ? beta_rule_alpha(A)
                                                         : 1.8 / (norm_inf(A) * norm_inf(A));
    X = out.alpha * A.transpose();
  }
  const MatrixD I = MatrixD::Identity(A.rows(), A.rows());
  double residual = record(0, X);
  for (int k = 1; k <= cap && !out.converged; ++k) {
    if (opt.method == PinvMethod::nystromformer) {
      const MatrixD AZ = A * X;
      X = 0.25 * X * (13 * I - AZ * (15 * I - AZ * (7 * I - AZ)));
    } else {
      X = 2 * X - row_blocked_product(row_blocked_product(X, A), X);
    }
    out.iterations = k;
    residual = X.allFinite() ? record(k, X) : HUGE_VAL;
    if (!std::isfinite(residual) || residual > 1e6) {
      out.diverged = true;
      const double limit = newton_alpha_limit(A);
      out.status = text("diverged at iteration ", k, out.alpha > limit ? text(": alpha = ", out.alpha,
                                                                               " exceeds the convergence limit 2/sigma_1^2 = ", limit)
                                                                         : std::string());
      out.inverse = X;
      return out;
    }
    out.converged = opt.tolerance > 0 && residual < opt.tolerance;
  }
  out.inverse = X;
  out.status = out.converged ? text("converged in ", out.iterations, " iterations (residual ", residual, ")")
                             : text("stopped at ", out.iterations, " iterations (residual ", residual, ")");
  return out;
}

MatrixD soft_attention(const MatrixD& Q, const MatrixD& V, const BottleneckSpec& bottleneck, const PinvOptions& pinv,
                       std::uint64_t seed, bool normalised) {
  if (V.rows() != Q.rows())
    throw std::invalid_argument(text("soft_attention: ", Q.rows(), " tokens but ", V.rows(), " values"));
  const auto f = nystrom_factors(bottleneck_tokens(Q, bottleneck, seed), Q);
  auto options = pinv;
  options.trace = false;
  const MatrixD inverse = pseudo_inverse(f.A, options).inverse;
  return nystrom_apply(f.P, normalised ? symmetric_normalised(f.A, inverse) : inverse, V);
}

}  // namespace attnlab
