// E‖∂ϕ(S)/∂Q‖_F and E‖∂ϕ(S)/∂K‖_F of the N×N×D×d Jacobians over a grid (POLY Thm 4.3, Cor 4.2).
#include <attnlab/io/study.hpp>

int main(int argc, char** argv) {
  auto grid = attnlab::io::poly_grid({"qgrad", "qgrad2", "kgrad", "kgrad2"}, {"qgrad", "kgrad"});
  grid.defaults.convention = "outside";  // Thm 4.3 differentiates (XQK^TX^T)^p/sqrt(d)
  const auto study = attnlab::io::ensemble_sweep_study(
      "poly_gradient", "Q- and K-gradient norms of scaled x^p attention and softmax over N", grid);
  return attnlab::io::run_study(argc, argv, study);
}
