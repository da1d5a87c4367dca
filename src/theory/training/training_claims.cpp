// The claims about training (POLY Fig 1-3, Table 1/2/5, Remark 4.1; RELU Fig 2; PERIODIC Table 2), judged from the rows
// of the training sweeps (see ClaimContext::training_rows): best scales from curves fitted with the paired seeds as
// blocks, exponents by least squares, tables of mean ± sd with paired-seed intervals, and norms along training
// against the Monte-Carlo prediction of the core engine. `measure` reads the rows into curves and norm tables;
// `judge` fits, draws, compares and decides under the thresholds below.
#include <attnlab/theory/claims.hpp>

#include "runs.hpp"

namespace attnlab {

void register_training_claims(ClaimRegistry& r) {
  training_claims::register_k_sweep_claims(r);
  training_claims::register_activation_table_claims(r);
  training_claims::register_training_norm_claims(r);
  training_claims::register_alpha_sweep_claims(r);
  training_claims::register_periodic_table_claims(r);
  training_claims::register_training_saturation_claims(r);
}

}  // namespace attnlab
