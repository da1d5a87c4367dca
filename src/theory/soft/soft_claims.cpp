// The SOFT claims: Newton–Raphson pseudo-inverses as the paper writes them and as the released code runs them
// (Prop 1, 2, Fig 5, eq 12, the β rule, non-singular bottlenecks), spectra of softmax and Gaussian-kernel attention
// (Prop 3 as written and as used, Prop 4), growth of the bottleneck's pseudo-inverse with and without normalisation
// (Prop 5, 6, Fig 6, eq 15, Lemmas 1, 2), SOFT against SOFT++ along n (Table 6), Nyström error (against
// Nyströmformer's) and complexity. Each inequality is searched over random ensembles and structured extremes; its worst
// input is kept as evidence rows and replays with --matrix (its tokens, where the claim's object is tokens, with
// --tokens-file, which replaces every token set the claims draw).
#include <attnlab/theory/claims.hpp>

#include "inputs.hpp"

namespace attnlab {

void register_soft_claims(ClaimRegistry& r) {
  soft_claims::register_newton_claims(r);
  soft_claims::register_attention_spectrum_claims(r);
  soft_claims::register_pinv_growth_claims(r);
  soft_claims::register_kernel_bound_claims(r);
  soft_claims::register_eq12_claims(r);
  soft_claims::register_fig5_claims(r);
  soft_claims::register_bottleneck_claims(r);
  soft_claims::register_fig6_claims(r);
  soft_claims::register_complexity_claims(r);
  soft_claims::register_s_hat_claims(r);
  soft_claims::register_long_n_claims(r);
  soft_claims::register_nystrom_error_claims(r);
  soft_claims::register_reconstruction_claims(r);
}

}  // namespace attnlab
