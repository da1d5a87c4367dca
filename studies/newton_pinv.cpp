// Newton–Raphson pseudo-inverses of SOFT's bottleneck matrix: convergence, monotonicity, the iterations
// of Fig 5 for every variant, and the inverse's gradient (eq 12).
#include <attnlab/io/study.hpp>

int main(int argc, char** argv) {
  const auto study = attnlab::io::claims_study(
      "newton_pinv", "Newton-Schulz, beta-rule, released and Nystromformer pseudo-inverses with their traces",
      {"soft.prop1_newton_converges", "soft.prop2_monotone", "soft.fig5_iterations", "soft.eq12"}, true);
  return attnlab::io::run_study(argc, argv, study);
}
