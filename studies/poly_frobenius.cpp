// E‖ϕ(S)‖_F (and its square) over a grid of N, D, d for x^p/k and softmax (POLY Thm 4.2, Cor 4.1).
#include <attnlab/io/study.hpp>

int main(int argc, char** argv) {
  const auto study = attnlab::io::ensemble_sweep_study(
      "poly_frobenius", "Frobenius norm of scaled x^p attention and softmax, and of its logit Jacobian, over N",
      attnlab::io::poly_grid({"frob", "frob2", "jac", "jac2"}, {"frob", "jac"}));
  return attnlab::io::run_study(argc, argv, study);
}
