#pragma once
// What the k-sweep claims' files share (k_sweep.cpp, k_interaction.cpp): one regime's sweep with the controls'
// dynamic range at each N, how it is measured and reshaped for the falsify cases, and the range a task needs to show
// the scale's effect at all.
#include "runs.hpp"

namespace attnlab::training_claims {

extern const Threshold kSqrtBand, kCensoredShare, kEdgeDelta;

// Which regime each side of POLY assumes: its theorems i.i.d. Gaussian X, Q, K (Remark 4.1: true at initialisation
// only), its experiments ViT-Tiny's timm initialisation.
inline constexpr const char* kTimmRegime =
    "Q and K start at timm's N(0, 0.02^2), as POLY's ViT-Tiny experiments do, so the logits start near 0.03 and x^3 near "
    "1e-5; POLY's theorems assume i.i.d. Gaussian X, Q, K whose logits are not small, which this regime is not.";

inline constexpr const char* kUnitRegime =
    "Q and K scaled so that the logits have unit variance at step 0 (--init unit), the regime closest to the i.i.d. "
    "Gaussian X, Q, K of POLY's theorems that still trains; POLY's own experiments used timm's N(0, 0.02^2) instead.";

struct KSweepEvidence {
  Regime regime{};                     // the Q/K initialisation and model of the rows judged
  int power = 3;                       // p of the x^p/k rows judged (the sweep's p axis)
  std::uint64_t seed = 1;              // of the posterior draws
  std::vector<Index> sizes{};          // N, ascending
  std::vector<GridCurve> curves{};     // validation accuracy against log10 k, one per N
  std::vector<DynamicRange> ranges{};  // the controls at each N
  std::string setup{};                 // the paper's and ours (setup_line)
};

// The sweep's task and its dynamic range at each N, the line every k claim's detail ends with.
std::string task_and_ranges(const KSweepEvidence& e);

// The regime's x^p/k rows of power `power` with the controls' dynamic range at each N.
KSweepEvidence measure_k_sweep(const ClaimContext& ctx, const Regime& regime, int power = 3);

// The judges' posterior draws, per draw and fitted curve: the best log k (poly.k_vs_N), the plateau's edge within
// deltas[c] of the best (poly.k_edge_vs_N); and how many of them sit at an end of a curve's grid (censored).
std::vector<std::vector<double>> best_k_draws(const KSweepEvidence& e, const std::vector<GridCurve>& curves,
                                              const std::vector<BlockedCurve>& fits);
std::vector<std::vector<double>> edge_draws(const KSweepEvidence& e, const std::vector<GridCurve>& curves,
                                            const std::vector<BlockedCurve>& fits, const std::vector<double>& deltas,
                                            const std::vector<double>& trained);
std::size_t draws_at_an_end(const std::vector<std::vector<double>>& draws, const std::vector<GridCurve>& curves,
                            std::size_t curve);

// The curves at an end of their grid in more than `allowed_share` of the draws (a NaN draw locates no curve), their N
// listed: "16, 128", or "" for none.
std::string censored_sizes(const std::vector<std::vector<double>>& draws, const std::vector<GridCurve>& curves,
                           const std::vector<Index>& sizes, double allowed_share);

// The exponent's 95% interval over the draws of log k per N: the draws' least-squares slopes on log_n, or where some N
// is `censored` the bounds the clamped draws give (sqrt_rule_text); NaN where no draw is located.
std::pair<double, double> exponent_interval(const std::vector<std::vector<double>>& draws,
                                            const std::vector<GridCurve>& curves, const std::vector<double>& log_n,
                                            bool censored);

// "like sqrt(N)": the equivalence test of the exponent's interval against 0.5 ± band, and the rule's text.
Verdict exponent_verdict(double lo, double hi, double band);
std::string sqrt_rule_text(double band);

// ---- the falsify cases (k_sweep_cases.cpp) ----

// The default grid where the evidence has fewer than two N or an N whose seeds do not connect its points.
void with_default_grid(KSweepEvidence& e);

// The grid a campaign would train (N in {16, 64, 256, 1024}, log k from -3 to 3 in half decades, two seeds at every
// point), every run at one accuracy, for falsify cases that need a complete design.
void default_grid(KSweepEvidence& e);

// Every N's controls set to a dynamic range of `range` (softmax at the curve's best, uniform and off `range` below).
void set_dynamic_range(KSweepEvidence& e, double range);

// Every N's best k at k* ∝ N^exponent, centred on the middle of its k grid (the default grid where fewer than two N
// can be fitted).
void place_best_k(KSweepEvidence& e, double exponent);

// Every N's plateau edge at k_edge ∝ N^exponent on a task of dynamic range `range` (place_edge's comment).
void place_edge(KSweepEvidence& e, double exponent, double range);

// The two largest N able to show the scale's effect with a dynamic range of `range`, the others not at all: a crossing
// of min_dynamic_range for any rule that needs two N, on evidence shaped by `shape(e, range)` to hold.
Crossing<KSweepEvidence> range_crossing(std::function<void(KSweepEvidence&, double)> shape);

// A gap in [lo, hi] at which `count(gap)` (falling as the gap grows) is `target`, or the last that reaches it, by
// bisection: a censored share placed just over its threshold.
double gap_reaching(double lo, double hi, std::size_t target, const std::function<std::size_t(double)>& count);

// One crossing per threshold that poly.k_vs_N's and poly.k_edge_vs_N's judges read.
std::vector<Crossing<KSweepEvidence>> best_k_crossings();
std::vector<Crossing<KSweepEvidence>> edge_crossings();

// The curves at an N whose dynamic range reaches `least`: those that can show the scale's effect.
std::vector<std::size_t> able_sizes(const KSweepEvidence& e, double least);

// What a judge that needs two N of min_dynamic_range returns before it judges (no rows, or the task cannot show it),
// with its claimed value; nullopt where it can judge.
std::optional<ClaimOutcome> unable_to_judge(const KSweepEvidence& e, const Thresholds& t, double claimed);

// The curve replaced by a plateau in log k that starts at `edge`, falls linearly over three decades below it to `range`
// under the top and is flat beyond, with no seed-to-seed spread.
void ramp(GridCurve& curve, double edge, double range);

// poly.k_band of one regime (k_band.cpp), REPOLY's Fig 10, after the regime's interaction claim; and
// poly.k_best.linear, REPOLY §5.1.2's x/k read on the same band.
void register_k_band_claim(ClaimRegistry& r, const Regime& regime, const std::string& init_text);
void register_linear_best_claim(ClaimRegistry& r, const Regime& regime, const std::string& init_text);

// poly.k_retrieval_vs_N of one regime (k_retrieval.cpp): the k at which half the seeds retrieve, where runs either
// retrieve or stay at chance.
void register_k_retrieval_claim(ClaimRegistry& r, const Regime& regime, const std::string& init_text);

// poly.k_interaction_vs_N of one regime (k_interaction.cpp), after the regime's k_vs_N and k_edge_vs_N.
void register_k_interaction_claims(ClaimRegistry& r, const Regime& regime, const std::string& init_text);

}  // namespace attnlab::training_claims
