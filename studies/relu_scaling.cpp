// h(S)/N^alpha at initialisation: mean weights, row sums and Frobenius growth (RELU §3, against POLY's 1/sqrt(N)),
// their constants under the exact law of the logits, the Gaussian-logit model and softmax's level.
#include <attnlab/io/study.hpp>

#include <cmath>

int main(int argc, char** argv) {
  attnlab::io::GridSweep grid{.quantities = {"mean_weight", "row_sum", "frob", "frob2"},
                              .fitted = {"mean_weight", "row_sum", "frob"}};
  grid.defaults.N = {16, 32, 64, 128, 256, 512, 1024};
  grid.defaults.D = {64};
  grid.defaults.d = {64};
  grid.defaults.activations = {"relu"};
  grid.defaults.alpha = {0.5, 1.0};
  grid.defaults.sigma_t = {1 / std::sqrt(64.0)};  // RELU's O(1) entries of q = xQ at initialisation
  grid.quick_defaults.N = {8, 16, 32, 64};
  const auto study = attnlab::io::claims_study(
      {.name = "relu_scaling",
       .description = "attention weights, row sums and Frobenius norms of h(S)/N^alpha over N, their constants against "
                      "the exact law of the logits, the Gaussian-logit model and softmax's Frobenius level; grid flags "
                      "(--N, --activation, --alpha, ...) explore a grid of your own instead",
       .patterns = {"relu."},
       .grid = grid});
  return attnlab::io::run_study(argc, argv, study);
}
