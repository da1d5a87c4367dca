// ‖softmax(A)‖_F and ‖∇softmax(A)‖_F against POLY Thm 4.1 on Gaussian logits and adversarial rows.
#include <attnlab/io/study.hpp>

int main(int argc, char** argv) {
  const auto study = attnlab::io::claims_study(
      "softmax_bounds", "softmax Frobenius and Jacobian norms against sqrt(N) and 2 sqrt(N); --logits-file replays rows",
      {"poly.softmax_fro_bound", "poly.softmax_jac_bound"}, false, true);
  return attnlab::io::run_study(argc, argv, study);
}
