#pragma once
// SOFT's attention matrices: the Gaussian kernel S_ij = exp(−‖q_i − k_j‖²/(2√d)) and, for contrast,
// softmax(QKᵀ/√d); bottleneck sampling; the Nyström reconstruction Ŝ = Pᵀ A† P, applied without
// forming n×n.
#include <attnlab/core/types.hpp>

#include <cstdint>
#include <string>

namespace attnlab {

// exp(−‖q_i − k_j‖²/(2√d)) for the rows of Q (n×d) and K (m×d).
MatrixD gaussian_kernel(const MatrixD& Q, const MatrixD& K);

// Row-wise softmax(QKᵀ/√d).
MatrixD softmax_attention(const MatrixD& Q, const MatrixD& K);

// How the m bottleneck tokens Q̃ are taken from the n tokens: m distinct tokens at random, the first m,
// or adaptive average pooling of the grid_h × grid_w token grid to √m × √m cells (SOFT's default).
enum class Sampler { random, first, pool };
Sampler parse_sampler(const std::string& s);
std::string to_string(Sampler s);

struct BottleneckSpec {
  Sampler sampler = Sampler::pool;
  Index m = 49;
  Index grid_h = 0, grid_w = 0;  // pool: the token grid (n = grid_h · grid_w)

  void validate(Index n) const;  // m in [1, n]; pool: m a square, √m ≤ grid sides, grid covering n
};

// Q̃ (m×d) from Q (n×d); `seed` drives the random sampler.
MatrixD bottleneck_tokens(const MatrixD& Q, const BottleneckSpec& spec, std::uint64_t seed);

// A = exp(Q̃ ⊖ Q̃) (m×m) and P = exp(Q̃ ⊖ K) (m×n).
struct NystromFactors {
  MatrixD A, P;
};
NystromFactors nystrom_factors(const MatrixD& bottleneck, const MatrixD& K);

// Ŝ W = Pᵀ (A⁺ (P W)) for W (n×c), with A⁺ the pseudo-inverse in use: O(n·m·c), never n×n.
MatrixD nystrom_apply(const MatrixD& P, const MatrixD& A_pinv, const MatrixD& W);

// SOFT++'s D^{-1/2} A⁺ D^{-1/2}, D = diag(A 1); throws if a row sum of A is not positive.
MatrixD symmetric_normalised(const MatrixD& A, const MatrixD& A_pinv);

}  // namespace attnlab
