// The RELU claims that need no training: mean weights, row sums and Frobenius norms of ϕ = L^{-α}h(S) at
// initialisation. The law of one logit does not depend on N, so their exponents in N follow from the
// construction (identities); the constants, E h(S) and E h(S)² under the exact law of the toolkit's logits
// (theory/logit_moments.hpp), are what can fail, beside the Gaussian-logit model of that law and softmax's
// Frobenius level for Gaussian logits.
#include <attnlab/theory/claims.hpp>

#include "sweep.hpp"

namespace attnlab {

void register_relu_claims(ClaimRegistry& r) {
  relu_claims::register_row_sum_exponent_claims(r);
  relu_claims::register_row_sum_constant_claims(r);
  relu_claims::register_frob_exponent_claims(r);
  relu_claims::register_frob_constant_claims(r);
  relu_claims::register_gaussian_logit_claims(r);
}

}  // namespace attnlab
