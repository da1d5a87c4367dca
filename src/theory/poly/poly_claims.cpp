// The POLY claims that need no training: softmax bounds (Thm 4.1), growth of the Frobenius
// norms and Q/K-gradients in N (Thm 4.2, 4.3, Cor 4.1, 4.2) and the closed forms of the proofs.
#include <attnlab/theory/claims.hpp>

#include "growth_sweep.hpp"

namespace attnlab {

void register_poly_claims(ClaimRegistry& r) {
  poly_claims::register_norm_claims(r);
  poly_claims::register_proof_claims(r);
  poly_claims::register_high_p_claims(r);
}

}  // namespace attnlab
