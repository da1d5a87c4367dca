// ‖softmax(A)‖_F and ‖∇softmax(A)‖_F against POLY Thm 4.1 on Gaussian logits and adversarial rows.
#include <attnlab/io/study.hpp>

int main(int argc, char** argv) {
  auto grid = attnlab::io::poly_grid({"frob", "frob2", "jac", "jac2"}, {"frob", "jac"});
  grid.defaults.activations = {"softmax"};
  const auto study = attnlab::io::claims_study(
      {.name = "softmax_bounds",
       .description = "softmax Frobenius and Jacobian norms against sqrt(N) and 2 sqrt(N); --logits-file replays rows; "
                      "grid flags (--N, --sigma-t, ...) explore a grid of your own instead",
       .patterns = {"poly.softmax_fro_bound", "poly.softmax_jac_bound"},
       .logits_flag = true,
       .grid = grid});
  return attnlab::io::run_study(argc, argv, study);
}
