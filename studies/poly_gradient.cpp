// E‖∂ϕ(S)/∂Q‖_F and E‖∂ϕ(S)/∂K‖_F of the N×N×D×d Jacobians over a grid (POLY Thm 4.3, Cor 4.2).
#include <attnlab/io/study.hpp>
#include <attnlab/mc/sweep.hpp>

using namespace attnlab;

int main(int argc, char** argv) {
  io::StudyDefinition study{"poly_gradient", "Q- and K-gradient norms of scaled x^p attention and softmax over N"};
  study.defaults.N = {16, 32, 64, 128, 256, 512, 1024};
  study.defaults.D = {64};
  study.defaults.d = {64};
  study.quick_defaults.N = {8, 16, 32, 64};
  study.quick_defaults.D = {16};
  study.quick_defaults.d = {16};
  study.defaults.p = {1, 2, 3};
  study.defaults.k = {"1", "sqrtN"};
  study.defaults.activations = {"poly", "softmax"};
  study.defaults.convention = "outside";
  study.run = [](const io::StudyOptions& o, io::StudyContext& ctx) {
    const auto sweep = run_sweep({"poly_gradient", o.ensembles(), o.activation_specs(),
                                  {"qgrad", "qgrad2", "kgrad", "kgrad2"}, {"qgrad", "kgrad"}, o.seed, o.trials_or(64, 8),
                                  parse_precision(o.precision)},
                                 ctx.cache, [&](const std::string& label) { return ctx.progress->task(label); });
    return io::StudyOutput{sweep.rows, sweep.figures, {}};
  };
  return io::run_study(argc, argv, study);
}
