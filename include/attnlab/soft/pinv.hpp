#pragma once
// Moore–Penrose pseudo-inverses of the bottleneck matrix A: the dense SVD reference and the iterations
// of SOFT and Nyströmformer, each with its per-iteration trace.
#include <attnlab/core/types.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace attnlab {

// newton: Newton–Schulz A_{k+1} = 2A_k − A_k A A_k from A_0 = α Aᵀ, α = 2/‖A‖₁² (SOFT Alg. 2; Aᵀ = A for
//   SOFT's symmetric A);
// newton_beta: α = 2βⁿ/‖A‖₁², β = 1/2, n the smallest with ‖I − αA‖₁ ≤ 1 (SOFT §3.3);
// released: the released code's α = 1.8/‖A‖∞² on A + 0.01 I, 20 iterations;
// nystromformer: Z_0 = Aᵀ/(‖A‖₁‖A‖∞), Z ← ¼ Z(13I − AZ(15I − AZ(7I − AZ))), 6 iterations;
// svd: the dense reference, dense_pinv (singular values below max(m, n)·ε·σ₁ count as zero).
enum class PinvMethod { svd, newton, newton_beta, released, nystromformer };
PinvMethod parse_pinv_method(const std::string& s);
std::string to_string(PinvMethod m);

struct PinvOptions {
  PinvMethod method = PinvMethod::newton;
  int max_iterations = 0;    // 0: the method's default (100; released 20; nystromformer 6)
  double tolerance = 1e-10;  // stop once ‖A A_k A − A‖₂/‖A‖₂ falls below it (0: run every iteration)
  double alpha = 0;          // > 0 overrides the method's α (newton, newton_beta, released)
  bool trace = true;         // record the per-iteration residual and error (costs two spectral norms)

  void validate() const;  // throws std::invalid_argument naming the parameter
};

struct PinvStep {
  int iteration = 0;
  double residual = 0;  // ‖A A_k A − A‖₂/‖A‖₂
  double error = 0;     // ‖A_k − A†‖₂, A† by SVD (of A + 0.01 I for `released`)
};

struct PinvResult {
  MatrixD inverse;
  std::vector<PinvStep> trace;  // iteration 0 is the starting point
  int iterations = 0;
  double alpha = 0;
  bool converged = false;  // residual below tolerance
  bool diverged = false;   // residual grew past 1e6 or stopped being finite
  std::string status;      // one line: converged / stopped at the cap / diverged, and why
};

// Throws std::invalid_argument for an empty A, non-finite entries or A = 0.
PinvResult pseudo_inverse(const MatrixD& A, const PinvOptions& options = {});

// 2/σ₁(A)²: Newton–Schulz from αAᵀ converges for 0 < α < this.
double newton_alpha_limit(const MatrixD& A);

// SOFT attention Ŝ V with K = Q: bottleneck Q̃ of Q, A = exp(Q̃ ⊖ Q̃), P = exp(Q̃ ⊖ Q), A⁺ by `pinv`
// (SOFT++'s D^{-1/2} A⁺ D^{-1/2} when `normalised`), then Pᵀ(A⁺(P V)): O(n·m·(d + c) + m³), never n×n.
struct BottleneckSpec;
MatrixD soft_attention(const MatrixD& Q, const MatrixD& V, const BottleneckSpec& bottleneck, const PinvOptions& pinv,
                       std::uint64_t seed, bool normalised = false);

}  // namespace attnlab
