#include <attnlab/core/text.hpp>
#include <attnlab/studies/main.hpp>
#include <attnlab/studies/studies.hpp>
#include <attnlab/sweeps/train_study.hpp>
#include <attnlab/sweeps/training_sweep.hpp>
#include <attnlab/theory/training_rows.hpp>

#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>

namespace attnlab::studies {
namespace {

// E‖ϕ(S)‖_F (and its square) over a grid of N, D, d for x^p/k and softmax (POLY Thm 4.2, Cor 4.1).
study::StudyDefinition poly_frobenius() {
  return study::ensemble_sweep_study(
      "poly_frobenius", "Frobenius norm of scaled x^p attention and softmax, and of its logit Jacobian, over N",
      study::poly_grid({"frob", "frob2", "jac", "jac2"}, {"frob", "jac"}));
}

// E‖∂ϕ(S)/∂Q‖_F and E‖∂ϕ(S)/∂K‖_F of the N×N×D×d Jacobians over a grid (POLY Thm 4.3, Cor 4.2).
study::StudyDefinition poly_gradient() {
  auto grid = study::poly_grid({"qgrad", "qgrad2", "kgrad", "kgrad2"}, {"qgrad", "kgrad"});
  grid.defaults.convention = "outside";  // Thm 4.3 differentiates (XQK^TX^T)^p/sqrt(d)
  return study::ensemble_sweep_study("poly_gradient",
                                     "Q- and K-gradient norms of scaled x^p attention and softmax over N", grid);
}

// ‖softmax(A)‖_F and ‖∇softmax(A)‖_F against POLY Thm 4.1 on Gaussian logits and adversarial rows.
study::StudyDefinition softmax_bounds() {
  auto grid = study::poly_grid({"frob", "frob2", "jac", "jac2"}, {"frob", "jac"});
  grid.defaults.activations = {"softmax"};
  return study::claims_study(
      {.name = "softmax_bounds",
       .description = "softmax Frobenius and Jacobian norms against sqrt(N) and 2 sqrt(N); --logits-file "
                      "replays rows; grid flags (--N, --sigma-t, ...) explore a grid of your own instead",
       .patterns = {"poly.softmax_fro_bound", "poly.softmax_jac_bound"},
       .logits_flag = true,
       .grid = grid});
}

// h(S)/N^alpha at initialisation: mean weights, row sums and Frobenius growth (RELU §3, against POLY's 1/sqrt(N)),
// their constants under the exact law of the logits, the Gaussian-logit model and softmax's level.
study::StudyDefinition relu_scaling() {
  study::GridSweep grid{.quantities = {"mean_weight", "row_sum", "frob", "frob2"},
                        .fitted = {"mean_weight", "row_sum", "frob"}};
  grid.defaults.N = {16, 32, 64, 128, 256, 512, 1024};
  grid.defaults.D = {64};
  grid.defaults.d = {64};
  grid.defaults.activations = {"relu"};
  grid.defaults.alpha = {0.5, 1.0};
  grid.defaults.sigma_t = {1 / std::sqrt(64.0)};  // RELU's O(1) entries of q = xQ at initialisation
  grid.quick_defaults = grid.defaults;
  grid.quick_defaults.N = {8, 16, 32, 64};
  return study::claims_study(
      {.name = "relu_scaling",
       .description = "attention weights, row sums and Frobenius norms of h(S)/N^alpha over N, their "
                      "constants against the exact law of the logits, the Gaussian-logit model and "
                      "softmax's Frobenius level; grid flags (--N, --activation, --alpha, ...) explore a "
                      "grid of your own instead",
       .patterns = {"relu."},
       .grid = grid});
}

// The PERIODIC paper's properties of softmax and its periodic alternatives, measured, with the property table.
study::StudyDefinition periodic_properties() {
  return study::claims_study(
      {.name = "periodic_properties",
       .description = "saturation, submergence, poles, prenorm, value stability and the five-property "
                      "table, from data; --logits-file replays saved rows",
       .patterns = {"periodic."},
       .logits_flag = true});
}

// SOFT's spectral propositions: eigenvalues of softmax and Gaussian-kernel attention, the growth of the
// bottleneck pseudo-inverse with and without normalisation (Fig 6), eq 15, Lemmas 1–2 and SOFT against SOFT++ along n
// (Table 6).
study::StudyDefinition soft_spectral() {
  return study::claims_study(
      {.name = "soft_spectral",
       .description = "spectral norms and eigenvalues of SOFT's attention and bottleneck matrices",
       .patterns = {"soft.prop3.", "soft.prop4_gauss_eig", "soft.prop5_pinv_growth", "soft.prop6_normalized",
                    "soft.eq15", "soft.lemma1", "soft.lemma2", "soft.fig6_spectral", "soft.table6_long_n"},
       .soft_flags = true});
}

// Newton–Raphson pseudo-inverses of SOFT's bottleneck matrix: convergence (each reading of Prop 1), monotonicity,
// the iterations of Fig 5 for every variant, the beta rule, whether bottlenecks are singular, and the inverse's
// gradient (eq 12); with every method's per-iteration trace.
study::StudyDefinition newton_pinv() {
  return pinv_trace_study("newton_pinv",
                          "Newton-Schulz (Algorithm 2), the paper's and the released beta rules, the released "
                          "pseudo-inverse and Nystromformer's, with their traces",
                          {"soft.prop1.", "soft.prop2_monotone", "soft.fig5.", "soft.eq12", "soft.beta_rule.",
                           "soft.nonsingular_in_practice"});
}

// SOFT's Nyström attention against full Gaussian-kernel attention: time and memory over n, and the
// reconstruction error of each bottleneck sampler over m and against Nyströmformer's.
study::StudyDefinition soft_complexity() {
  return study::claims_study({.name = "soft_complexity",
                              .description = "time, memory and reconstruction error of Nystrom attention",
                              .patterns = {"soft.complexity", "soft.nystrom_error", "soft.nystromformer_unguaranteed"},
                              .soft_flags = true});
}

// Every registered claim with its verdict: claims.csv, report.md, verify.csv and the figures.
study::StudyDefinition verify() {
  return study::claims_study({.name = "verify",
                              .description = "check every claim of CLAIMS.md and write claims.csv and report.md",
                              .retrain = sweeps::retrain_sweep});
}

const std::map<std::string, std::function<study::StudyDefinition()>>& catalogue() {
  static const auto studies = [] {
    std::map<std::string, std::function<study::StudyDefinition()>> all{
        {"poly_frobenius", poly_frobenius},
        {"poly_gradient", poly_gradient},
        {"softmax_bounds", softmax_bounds},
        {"relu_scaling", relu_scaling},
        {"periodic_properties", periodic_properties},
        {"soft_spectral", soft_spectral},
        {"newton_pinv", newton_pinv},
        {"soft_complexity", soft_complexity},
        {"verify", verify},
        {"activation_rows", activation_rows_study},
        {"characterise", characterise_study},
        {"train", sweeps::train_study},
    };
    for (const auto& sweep : sweeps::training_sweep_names())
      all.emplace(sweep, [sweep] { return sweeps::training_sweep_study(sweep); });
    return all;
  }();
  return studies;
}

}  // namespace

const std::vector<std::string>& study_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& [name, make] : catalogue()) n.push_back(name);
    return n;
  }();
  return names;
}

study::StudyDefinition find_study(const std::string& name) {
  const auto it = catalogue().find(name);
  if (it == catalogue().end()) {
    std::string known;
    for (const auto& n : study_names()) known += (known.empty() ? "" : ", ") + n;
    throw std::invalid_argument(text("study: unknown study '", name, "' (", known, ")"));
  }
  return it->second();
}

int study_main(int argc, char** argv, const char* name) { return study::run_study(argc, argv, find_study(name)); }

}  // namespace attnlab::studies
