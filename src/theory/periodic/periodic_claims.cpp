// The PERIODIC claims: softmax's gradient bound, the five-property table regenerated from measured
// quantities, submergence, saturation, sinsoftmax's score ratio, sirenmax's poles, prenorm, sinmax's
// value instability, value stability of g >= 0 with its denominator, and cosmax's gradient (A.5).
// Rows of logits are the activation's argument x (Gaussian at a sweep of scales, from the X, Q, K
// ensemble, a library of extreme rows with an adversarial search, or the user's --logits-file).
// Where the released demo.py defines a function differently from the paper (sin2max-released,
// sinsoftmax-released, prenorm-released), the demo's definition is judged in its own row.
#include <attnlab/theory/claims.hpp>

#include "rows.hpp"

namespace attnlab {

void register_periodic_claims(ClaimRegistry& r) {
  periodic_claims::register_softmax_gradient_claims(r);
  periodic_claims::register_property_table_claims(r);
  periodic_claims::register_value_stability_claims(r);
  periodic_claims::register_sinsoftmax_ratio_claims(r);
  periodic_claims::register_saturation_claims(r);
  periodic_claims::register_cosmax_claims(r);
}

}  // namespace attnlab
