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
  if (s == "released-beta") return PinvMethod::released_beta;
  if (s == "nystromformer") return PinvMethod::nystromformer;
  throw std::invalid_argument(
      text("pinv method must be svd, newton, newton-beta, released, released-beta or nystromformer (got '", s, "')"));
}

std::string to_string(PinvMethod m) {
  switch (m) {
    case PinvMethod::svd: return "svd";
    case PinvMethod::newton: return "newton";
    case PinvMethod::newton_beta: return "newton-beta";
    case PinvMethod::released: return "released";
    case PinvMethod::released_beta: return "released-beta";
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
  if (beta_max_halvings < 0)
    throw std::invalid_argument(text("beta max halvings must be >= 0 (got ", beta_max_halvings, ")"));
  if (!(rank_tolerance >= 0) || !std::isfinite(rank_tolerance))
    throw std::invalid_argument(text("rank tolerance must be a finite number >= 0 (got ", rank_tolerance, ")"));
}

namespace {

double norm1(const MatrixD& A) { return A.cwiseAbs().colwise().sum().maxCoeff(); }
double norm_inf(const MatrixD& A) { return A.cwiseAbs().rowwise().sum().maxCoeff(); }

double norm2(const MatrixD& M) {
  return M.rows() <= 64 ? spectral_norm_svd(M) : spectral_norm(M, {.tolerance = 1e-8}).value;
}

// ‖·‖/‖M‖ with 0/0 = 0: a zero R = A + sI is inverted exactly by anything.
double relative(double distance, double scale) { return distance == 0 ? 0.0 : distance / scale; }

// The released code's scale r = max_i Σ_j a_ij: torch.sum without abs, so signed entries cancel.
double largest_row_sum(const MatrixD& A) { return A.rowwise().sum().maxCoeff(); }

struct BetaRule {
  double alpha = 0;
  int halvings = 0;
  double excess = 0;  // the rule's norm minus its threshold at `alpha`
};

// ‖I − αA‖₁ − 1 without forming I − αA: |1 − αa_jj| − 1 + α Σ_{i≠j} |a_ij| per column, so that a rule
// met only because 1 − αa_jj rounds to 1 does not count as met.
double paper_beta_excess(const MatrixD& A, double alpha) {
  double worst = -HUGE_VAL;
  for (Index j = 0; j < A.cols(); ++j) {
    const double x = alpha * A(j, j), off = alpha * (A.col(j).cwiseAbs().sum() - std::abs(A(j, j)));
    worst = std::max(worst, (x <= 1 ? -x : x - 2) + off);  // |1 − x| − 1, exactly
  }
  return worst;
}

// SOFT §3.3: α = 2βⁿ/‖A‖₁² with the smallest n ≤ cap such that ‖I − αA‖₁ ≤ 1; unmet at the cap, the last α.
BetaRule paper_beta_rule(const MatrixD& A, int cap) {
  BetaRule rule{.alpha = 2 / (norm1(A) * norm1(A))};
  for (rule.excess = paper_beta_excess(A, rule.alpha); rule.excess > 0 && rule.halvings < cap;)
    rule.alpha *= 0.5, ++rule.halvings, rule.excess = paper_beta_excess(A, rule.alpha);
  return rule;
}

// The released SOFT++ rule: α = 2/r², halved while ‖I − A·αA‖₁ > 1.01 and fewer than `cap` halvings were made.
BetaRule released_beta_rule(const MatrixD& A, int cap) {
  const double r = largest_row_sum(A);
  const MatrixD I = MatrixD::Identity(A.rows(), A.cols());
  const auto excess = [&](double alpha) { return norm1(I - A * (alpha * A)) - 1.01; };
  BetaRule rule{.alpha = 2 / (r * r)};
  for (rule.excess = excess(rule.alpha); rule.excess > 0 && rule.halvings < cap;)
    rule.alpha *= 0.5, ++rule.halvings, rule.excess = excess(rule.alpha);
  return rule;
}

int default_iterations(PinvMethod m) {
  switch (m) {
    case PinvMethod::released:
    case PinvMethod::released_beta: return 20;
    case PinvMethod::nystromformer: return 6;
    default: return 100;
  }
}

}  // namespace

double newton_alpha_limit(const MatrixD& A) {
  const double s = spectral_norm_svd(A);
  return 2 / (s * s);
}

PinvResult pseudo_inverse(const MatrixD& A, const PinvOptions& opt) {
  opt.validate();
  if (A.size() == 0) throw std::invalid_argument("pinv: the matrix is empty");
  if (!A.allFinite()) throw std::invalid_argument("pinv: the matrix has non-finite entries");
  if (A.cwiseAbs().maxCoeff() == 0) throw std::invalid_argument("pinv: the matrix is zero (no alpha: ||A|| = 0)");
  const PinvMethod method = opt.method;
  const bool released = method == PinvMethod::released || method == PinvMethod::released_beta;
  const bool fixed = released && !opt.released_stop_at_tolerance;  // no stopping test
  if ((released || method == PinvMethod::newton_beta) && A.rows() != A.cols())
    throw std::invalid_argument(
        text("pinv: ", to_string(method), " needs a square matrix (got ", A.rows(), "x", A.cols(), ")"));
  PinvResult out;
  out.shift = method != PinvMethod::released ? 0.0 : opt.float32_shift ? kReleasedShiftFloat32 : kReleasedShift;
  const bool shifted = out.shift != 0;
  const MatrixD R = shifted ? MatrixD(A + out.shift * MatrixD::Identity(A.rows(), A.cols()))
                            : A;  // the iterated matrix

  RankRevealingPinv reference;
  MatrixD reference_shifted;
  if (opt.trace || method == PinvMethod::svd) {
    reference = rank_revealing_pinv(A, opt.rank_tolerance);
    out.reference_rank = reference.rank;
    if (shifted && opt.trace) reference_shifted = rank_revealing_pinv(R, opt.rank_tolerance).pinv;
  }
  const double normA = norm2(A), normR = shifted ? norm2(R) : normA;  // normA > 0: A is not zero
  // The residual of the iterated matrix R (the one the stopping and divergence tests read); traced, all four numbers.
  const auto record = [&](int k, const MatrixD& X) {
    const double residual = relative(norm2(R * X * R - R), normR);
    if (opt.trace) {
      PinvStep step{.iteration = k, .residual = residual, .error = norm2(X - reference.pinv)};
      if (shifted) {
        step.residual_shifted = residual;
        step.residual = relative(norm2(A * X * A - A), normA);
        step.error_shifted = norm2(X - reference_shifted);
      }
      out.trace.push_back(step);
    }
    return residual;
  };
  if (method == PinvMethod::svd) {
    out.inverse = reference.pinv;
    out.converged = true;
    if (opt.trace) record(0, reference.pinv);
    out.status = text("dense reference (rank ", reference.rank, ": singular values above ", sig(reference.cutoff, 3),
                      ")");
    return out;
  }

  const int cap = opt.max_iterations > 0 ? opt.max_iterations : default_iterations(method);
  std::string rule_status;
  MatrixD X;
  if (method == PinvMethod::nystromformer) {
    X = A.transpose() / (norm1(A) * norm_inf(A));
  } else if (opt.alpha > 0) {
    out.alpha = opt.alpha;
  } else if (method == PinvMethod::newton) {
    out.alpha = 2 / (norm1(A) * norm1(A));
  } else if (method == PinvMethod::released) {
    const double r = largest_row_sum(A);  // of A, before the shift
    out.alpha = 1.8 / (r * r);
  } else {
    const bool paper = method == PinvMethod::newton_beta;
    const int halvings = opt.beta_max_halvings > 0 ? opt.beta_max_halvings : paper ? 64 : 10;
    const BetaRule rule = paper ? paper_beta_rule(A, halvings) : released_beta_rule(A, halvings);
    out.alpha = rule.alpha;
    out.beta_halvings = rule.halvings;
    out.beta_rule_excess = rule.excess;
    out.beta_rule_met = rule.excess <= 0;
    const std::string norm = paper ? "||I - alpha A||_1" : "||I - alpha A^2||_1";
    const std::string bound = paper ? "1" : "1.01";
    rule_status = out.beta_rule_met ? text("beta rule met at n = ", rule.halvings, " (", norm, " <= ", bound, "); ")
                                    : text("beta rule unmet after ", rule.halvings, " halvings (", norm, " = ", bound,
                                           " + ", sig(rule.excess, 3), "), iterating from that alpha; ");
  }
  if (method != PinvMethod::nystromformer) X = released ? MatrixD(out.alpha * R) : MatrixD(out.alpha * A.transpose());

  const MatrixD I = MatrixD::Identity(A.rows(), A.rows());
  const bool monitor = opt.trace ||
                       (opt.tolerance > 0 && !fixed);  // else only a non-finite iterate counts as divergence
  const auto diverge = [&](int k, const MatrixD& iterate) {
    out.diverged = true;
    out.iterations = k;
    out.inverse = iterate;
    const double limit = newton_alpha_limit(R);
    out.status = rule_status + text("diverged at iteration ", k,
                                    out.alpha > limit
                                        ? text(": alpha = ", sig(out.alpha), " exceeds the convergence limit ",
                                               "2/sigma_1^2 = ", sig(limit), shifted ? " of A + sI" : "")
                                        : std::string());
    return out;
  };
  double residual = !X.allFinite() ? HUGE_VAL : monitor ? record(0, X) : 0.0;
  if (!std::isfinite(residual)) return diverge(0, X);
  for (int k = 1; k <= cap && !(out.converged && !fixed); ++k) {
    if (method == PinvMethod::nystromformer) {
      const MatrixD AZ = A * X;
      X = 0.25 * X * (13 * I - AZ * (15 * I - AZ * (7 * I - AZ)));
    } else {
      X = 2 * X - row_blocked_product(row_blocked_product(X, R), X);
    }
    out.iterations = k;
    residual = !X.allFinite() ? HUGE_VAL : monitor ? record(k, X) : 0.0;
    if (!std::isfinite(residual) || residual > 1e6) return diverge(k, X);
    out.converged = opt.tolerance > 0 && residual < opt.tolerance;
  }
  if (fixed && !monitor && opt.tolerance > 0) {
    residual = relative(norm2(R * X * R - R), normR);
    out.converged = residual < opt.tolerance;
  }
  out.inverse = X;
  const std::string measured = monitor || (fixed && opt.tolerance > 0) ? text(" (residual ", residual, ")")
                                                                       : std::string();
  out.status = rule_status + (fixed           ? text("ran its ", out.iterations, " iterations", measured,
                                           out.converged ? ", below the tolerance" : "")
                              : out.converged ? text("converged in ", out.iterations, " iterations", measured)
                                              : text("stopped at ", out.iterations, " iterations", measured));
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
