#pragma once
// The squared norms of one sample, as every engine (CPU, Thrust, CUDA) reports them.
#include <attnlab/core/hd.hpp>

namespace attnlab {

// All sums are accumulated in double.
struct AttentionNormsSquared {
  double frob2 = 0;     // ‖ϕ(M)‖_F²
  double jac2 = 0;      // ‖∂ϕ/∂S‖_F², S the activation's argument (diagonal for elementwise ϕ)
  double qgrad2 = 0;    // ‖∂ϕ/∂Q‖_F² of the N×N×D×d tensor
  double kgrad2 = 0;    // ‖∂ϕ/∂K‖_F²
  double sum = 0;       // Σ_ij ϕ_ij
  double row_sum2 = 0;  // Σ_i (Σ_j ϕ_ij)²

  ATTNLAB_HD AttentionNormsSquared& operator+=(const AttentionNormsSquared& o) {
    frob2 += o.frob2;
    jac2 += o.jac2;
    qgrad2 += o.qgrad2;
    kgrad2 += o.kgrad2;
    sum += o.sum;
    row_sum2 += o.row_sum2;
    return *this;
  }
};

}  // namespace attnlab
