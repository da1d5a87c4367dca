// Newton–Raphson pseudo-inverses of SOFT's bottleneck matrix: convergence (each reading of Prop 1), monotonicity,
// the iterations of Fig 5 for every variant, the beta rule, whether bottlenecks are singular, and the inverse's
// gradient (eq 12); with every method's per-iteration trace.
#include <attnlab/io/study.hpp>

int main(int argc, char** argv) {
  const auto study = attnlab::io::pinv_trace_study(
      "newton_pinv",
      "Newton-Schulz (Algorithm 2), the paper's and the released beta rules, the released pseudo-inverse and "
      "Nystromformer's, with their traces",
      {"soft.prop1.", "soft.prop2_monotone", "soft.fig5.", "soft.eq12", "soft.beta_rule.", "soft.nonsingular_in_practice"});
  return attnlab::io::run_study(argc, argv, study);
}
