#pragma once
// Moore–Penrose pseudo-inverses of the bottleneck matrix A: the dense rank-revealing reference, SOFT's
// iterations as the paper writes them and as its released code runs them, and Nyströmformer's, each with
// its per-iteration trace.
#include <attnlab/core/types.hpp>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace attnlab {

// svd: the dense reference A† (rank_revealing_pinv below);
// newton: SOFT Algorithm 2, Newton–Schulz A_{k+1} = 2A_k − A_k A A_k from A_0 = αAᵀ, α = 2/‖A‖₁² (the paper
//   writes αA: the same for SOFT's symmetric A, and αAᵀ also converges for the others);
// newton_beta: SOFT §3.3 as written: α = 2βⁿ/‖A‖₁², β = 1/2, n the smallest ≥ 0 with ‖I − αA‖₁ ≤ 1;
// released: SOFT/kernel/inverse.py of github:fudan-zvg/SOFT (the SOFT attention kernel): α = 1.8/r², r the
//   largest signed row sum max_i Σ_j a_ij of A, then A_0 = α(A + sI), iterated on A + sI with s = 0.01
//   (s = 0.01f with float32_shift), a fixed number of iterations (20);
// released_beta: newton_inv of models/softmax_free_transformer.py (SOFT++, normalised attention): α = 2/r²,
//   halved while ‖I − A·αA‖₁ > 1.01, at most 10 times, then A_0 = αA iterated on A a fixed number of times
//   (20) whether or not the test was met;
// nystromformer: Z_0 = Aᵀ/(‖A‖₁‖A‖∞), Z ← ¼ Z(13I − AZ(15I − AZ(7I − AZ))), 6 iterations.
// Both released functions start from αA, not αAᵀ. On a batch, kernel/inverse.py takes one α per matrix (its max is over
// the last axis, as here), while models/softmax_free_transformer.py shares one α over the batch and its heads
// (torch.max over every entry), where released_beta takes each matrix alone.
enum class PinvMethod { svd, newton, newton_beta, released, released_beta, nystromformer };
PinvMethod parse_pinv_method(const std::string& s);
std::string to_string(PinvMethod m);

// torch.eye builds I in float32, so the released 0.01·I holds 0.01f whatever A's precision.
inline constexpr double kReleasedShift = 0.01;
inline constexpr double kReleasedShiftFloat32 = static_cast<double>(0.01f);  // 0.009999999776482582

struct PinvOptions {
  PinvMethod method = PinvMethod::newton;
  int max_iterations = 0;      // 0: the method's default (100; released and released_beta 20; nystromformer 6)
  double tolerance = 1e-10;    // stop once the iterated matrix's residual falls below it (0: run every iteration);
                               // the released methods stop early only with released_stop_at_tolerance (else they
                               // report it in `converged`)
  double alpha = 0;            // > 0 overrides the method's α (all but svd and nystromformer); no β rule then runs
  bool trace = true;           // record each iteration's residuals and errors (costs up to four spectral norms)
  bool float32_shift = false;  // released: shift by 0.01f (what the released code adds) instead of 0.01
  int beta_max_halvings = 0;   // 0: the method's cap (newton_beta 64, the paper sets none; released_beta 10)
  double rank_tolerance = 0;   // the reference drops singular values ≤ rank_tolerance·σ₁ (0: max(rows, cols)·ε)
  // released, released_beta: stop once the iterated matrix's residual is below tolerance, as the others do, instead
  // of the released code's fixed count (what "how many iterations does it need" asks)
  bool released_stop_at_tolerance = false;

  void validate() const;  // throws std::invalid_argument naming the parameter
};

struct PinvStep {
  static constexpr double none = std::numeric_limits<double>::quiet_NaN();
  int iteration = 0;
  double residual = 0;             // ‖A A_k A − A‖₂/‖A‖₂ against the input A
  double residual_shifted = none;  // ‖R A_k R − R‖₂/‖R‖₂, R = A + sI (the released method; NaN for the others)
  double error = 0;                // ‖A_k − A†‖₂, A† of the input by the rank-revealing reference
  double error_shifted = none;  // ‖A_k − R†‖₂ (the released method; NaN for the others)
};

struct PinvResult {
  MatrixD inverse;
  std::vector<PinvStep> trace;  // iteration 0 is the starting point
  int iterations = 0;
  double alpha = 0;
  double shift = 0;        // s of the iterated matrix A + sI (0 unless released)
  bool converged = false;  // the iterated matrix's residual below tolerance (at the end, for the released methods)
  bool diverged = false;   // that residual grew past 1e6 or stopped being finite (the run stops there)
  int beta_halvings = -1;  // n of the β rules; −1 where none ran
  bool beta_rule_met = false;
  // ‖I − αA‖₁ − 1 (newton_beta, without the rounding of 1 − αa_jj) or ‖I − αA²‖₁ − 1.01 (released_beta) at the
  // final α: ≤ 0 iff the rule is met; NaN where none ran.
  double beta_rule_excess = std::numeric_limits<double>::quiet_NaN();
  Index reference_rank = -1;  // rank of A under the reference's cutoff (−1 when no reference was computed)
  std::string status;         // one line: the β rule's outcome; converged / stopped at the cap / diverged, and why
};

// Throws std::invalid_argument for an empty A, non-finite entries, A = 0 (no α: ‖A‖ = 0), or a non-square A for
// the methods that need one (newton_beta, released, released_beta). Singular and rank-deficient A are accepted.
PinvResult pseudo_inverse(const MatrixD& A, const PinvOptions& options = {});

// 2/σ₁(A)²: Newton–Schulz from αAᵀ converges for 0 < α < this.
double newton_alpha_limit(const MatrixD& A);

// SOFT attention Ŝ V with K = Q: bottleneck Q̃ of Q, A = exp(Q̃ ⊖ Q̃), P = exp(Q̃ ⊖ Q), A⁺ by `pinv`
// (SOFT++'s D^{-1/2} A⁺ D^{-1/2} when `normalised`), then Pᵀ(A⁺(P V)): O(n·m·(d + c) + m³), never n×n.
struct BottleneckSpec;
MatrixD soft_attention(const MatrixD& Q, const MatrixD& V, const BottleneckSpec& bottleneck, const PinvOptions& pinv,
                       std::uint64_t seed, bool normalised = false);

}  // namespace attnlab
