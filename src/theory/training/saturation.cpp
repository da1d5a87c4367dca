// PERIODIC §4 and Fig 6 during training: softmax's gradients saturated even early on, the periodic alternatives'
// not at any stage, and logits that are not Gaussian.
#include "../periodic/rows.hpp"
#include "runs.hpp"

namespace attnlab::training_claims {
namespace {

using periodic_claims::kSaturatedShare;
using periodic_claims::kSoftmaxSaturates;

const Threshold kEarlyShare{
    "early_training_share", 0.1,
    "not in the paper, whose 'early stages of training' (Fig 6) has no number; chosen: the first tenth of the run, "
    "about 0.4 of the sweeps' 4 epochs"};

const Threshold kNormalKurtosis{
    "normal_kurtosis_band", 0.5,
    "not in the paper, which says only 'not strictly normal distributed'; chosen: a row of N + 1 = 65 Gaussian logits has "
    "mean sample excess kurtosis -6/66 = -0.09, and a layer's mean over thousands of rows is far more precise; 0.5 is "
    "the tail weight of a t distribution with 16 degrees of freedom, half a logistic's 1.2: a mean excess kurtosis "
    "inside [-0.5, 0.5] is read as Gaussian enough"};

constexpr const char* kSaturationSetup =
    "the paper's LeViT-like demo (§4, Fig 5; demo.py), data set not named, gradients of one layer (Fig 6)";

// A quantity per (activation, seed, step), the mean over the recorded layers.
using Trace = std::map<std::string, std::map<std::uint64_t, std::map<long, double>>>;

struct SaturationEvidence {
  Trace saturated{}, kurtosis{};
  std::string setup{};
  std::string task{};  // the task and its dynamic range per N (task_and_ranges)
};

Trace layer_means(const std::vector<ResultRow>& rows, const char* quantity) {
  std::map<std::tuple<std::string, std::uint64_t, long>, std::pair<double, int>> sums;
  for (const auto& r : rows)
    if (r.quantity == quantity && std::isfinite(r.value.mean)) {
      auto& [sum, count] =
          sums[{r.activation, std::uint64_t(extra_number(r, column::seed)), long(extra_number(r, column::step))}];
      sum += r.value.mean, ++count;
    }
  Trace t;
  for (const auto& [key, s] : sums) t[std::get<0>(key)][std::get<1>(key)][std::get<2>(key)] = s.first / s.second;
  return t;
}

SaturationEvidence measure_saturation(const ClaimContext& ctx) {
  const auto rows = sweep_rows(ctx, sweep::periodic_saturation);
  return {layer_means(rows, quantity::saturated_share), layer_means(rows, quantity::logit_kurtosis),
          setup_line(kSaturationSetup, rows),
          task_and_ranges(Regime{}.task_text(), sweep_rows(ctx, sweep::periodic_saturation, true))};
}

// Per seed, the mean over the steps up to `share` of the run; then the seeds' mean with its Student interval.
MeanInterval window_mean(const std::map<std::uint64_t, std::map<long, double>>& seeds, double share) {
  std::vector<double> per_seed;
  for (const auto& [seed, steps] : seeds) {
    if (steps.empty()) continue;
    const double last = double(steps.rbegin()->first);
    double sum = 0;
    int count = 0;
    for (const auto& [step, v] : steps)
      if (double(step) <= share * last) sum += v, ++count;
    if (count > 0) per_seed.push_back(sum / count);
  }
  return per_seed.size() < 2 ? MeanInterval{NAN, NAN, NAN, int(per_seed.size())} : student_mean(per_seed);
}

std::string interval_text(const MeanInterval& m) {
  return text(sig(m.value, 3), " [", sig(m.lo, 3), ", ", sig(m.hi, 3), "] over ", m.pairs, " seeds");
}

ClaimOutcome judge_saturation(const SaturationEvidence& e, const Thresholds& t) {
  if (!e.saturated.contains("softmax")) return no_results(sweep::periodic_saturation);
  ClaimOutcome out;
  const auto softmax = window_mean(e.saturated.at("softmax"), t(kEarlyShare));
  const double saturates = t(kSoftmaxSaturates), none = t(kSaturatedShare);
  out.measured = softmax.value, out.claimed = saturates, out.ci_lo = softmax.lo, out.ci_hi = softmax.hi;
  Verdict v = softmax.pairs < 2 ? Verdict::inconclusive
                                : equivalence_verdict(softmax.lo, softmax.hi, saturates, HUGE_VAL);
  std::string lines = text("- softmax, the first ", t(kEarlyShare), " of the run: ", interval_text(softmax), "\n");
  for (const auto& [activation, seeds] : e.saturated) {
    if (activation == "softmax") continue;
    const auto whole = window_mean(seeds, 1);
    v = worst(v, whole.pairs < 2 ? Verdict::inconclusive : equivalence_verdict(whole.lo, whole.hi, -HUGE_VAL, none));
    lines += text("- ", activation, ", the whole run: ", interval_text(whole), "\n");
  }
  out.verdict = v;
  out.detail = text("share of attention entries with N|d phi_j/d x_j| < ", periodic_claims::kSaturatedEntry.value,
                    ", mean over layers and steps per seed, 95% interval over seeds: softmax early ",
                    interval_text(softmax), " (holds: softmax's interval above ", saturates,
                    " and each alternative's below ", none,
                    " over the whole run; violated: one wholly on the wrong side); ", e.task);
  out.markdown = text(
      "Saturated shares (per seed the mean over the recorded layers and steps of the window; Student "
      "95% intervals over seeds):\n\n",
      lines, "\n", e.setup);
  return out;
}

ClaimOutcome judge_kurtosis(const SaturationEvidence& e, const Thresholds& t) {
  if (!e.kurtosis.contains("softmax")) return no_results(sweep::periodic_saturation);
  ClaimOutcome out;
  const auto k = window_mean(e.kurtosis.at("softmax"), 1);
  const double band = t(kNormalKurtosis);
  out.measured = k.value, out.claimed = band, out.ci_lo = k.lo, out.ci_hi = k.hi;
  // Not Gaussian: the interval wholly outside the band; Gaussian enough: wholly inside.
  out.verdict = k.pairs < 2                     ? Verdict::inconclusive
                : k.lo > band || k.hi < -band   ? Verdict::holds
                : k.lo >= -band && k.hi <= band ? Verdict::violated
                                                : Verdict::inconclusive;
  out.detail = text(
      "excess kurtosis of softmax's logits per row, mean over rows, layers and steps of the run per "
      "seed: ",
      interval_text(k), " (holds: the interval outside ±", band, "; violated: inside it); ", e.task);
  std::string lines;
  for (const auto& [activation, seeds] : e.kurtosis)
    lines += text("- ", activation, ": ", interval_text(window_mean(seeds, 1)), "\n");
  out.markdown = text("Excess kurtosis of the logits (0 for Gaussian rows), per activation's own training:\n\n", lines,
                      "\n", e.setup);
  return out;
}

// Every recorded value of `activation` set to `value`, seed i off by ±0.001·i (a spread for the interval).
void set_trace(Trace& t, const std::string& activation, double value) {
  for (auto& [seed, steps] : t[activation])
    for (auto& [step, v] : steps) v = value + 0.001 * (seed % 2 == 0 ? 1.0 : -1.0);
}

void saturation_as_claimed(SaturationEvidence& e) {
  for (auto& [activation, seeds] : e.saturated)
    set_trace(e.saturated, activation, activation == "softmax" ? 0.9 : 0.01);
  set_trace(e.kurtosis, "softmax", 3);
}

// Per seed the mean of a trace at `x` with the seeds' interval [x, x + 0.004] or [x - 0.004, x] (from `lower`).
void trace_edge(Trace& t, const std::string& activation, double x, bool lower) {
  auto& seeds = t[activation];
  std::vector<double> offsets;
  for (std::size_t i = 0; i < seeds.size(); ++i) offsets.push_back(i % 2 == 0 ? 0.001 : -0.001);
  const auto s = student_mean(offsets);
  std::size_t i = 0;
  for (auto& [seed, steps] : seeds) {
    const double v = (lower ? x - s.lo : x - s.hi) + offsets[i++];
    for (auto& [step, value] : steps) value = v;
  }
}

// softmax's share 0.9 at step 0 and nothing from a step at x of a 10,000-step run on: inside an early window drawn
// at x its mean falls to 0.45.
void early_window_at(SaturationEvidence& e, double x) {
  saturation_as_claimed(e);
  constexpr long kLast = 10000;
  for (auto& [seed, steps] : e.saturated["softmax"])
    steps = {{0, 0.9 + (seed % 2 == 0 ? 0.001 : -0.001)}, {long(std::ceil(x * double(kLast))), 0.0}, {kLast, 0.0}};
}

// The alternative judged last (the trace's order, softmax aside).
std::string last_alternative(const Trace& t) {
  for (auto it = t.rbegin(); it != t.rend(); ++it)
    if (it->first != "softmax") return it->first;
  return "";
}

}  // namespace

void register_training_saturation_claims(ClaimRegistry& r) {
  r.add(make_claim<SaturationEvidence>(
      {.id = "periodic.saturation.training",
       .source = "PERIODIC §4, Fig 6",
       .statement = "most of softmax's gradients are very small even in the early stages of training; the periodic "
                    "alternatives have no saturation area, so their gradients are satisfactory at each stage",
       .method = "periodic_saturation: the share of entries with N|d phi_j/d x_j| < 0.01 recorded through training; "
                 "softmax's over the first early_training_share of the run above periodic_softmax_saturates, "
                 "Sin2max-shifted's and SinSoftmax's over the whole run below periodic_saturated_share, by 95% "
                 "intervals over seeds",
       .sweep = sweep::periodic_saturation},
      {.measure = measure_saturation,
       .judge = judge_saturation,
       .contradict = [](SaturationEvidence& e) { set_trace(e.saturated, "softmax", 0.1); },
       .support = saturation_as_claimed,
       .crossings = {{&kSoftmaxSaturates, "softmax's early share, its interval starting at x", Verdict::inconclusive,
                      Verdict::holds,
                      [](SaturationEvidence& e, double x) {
                        saturation_as_claimed(e);
                        trace_edge(e.saturated, "softmax", x, true);
                      }},
                     {&kSaturatedShare, "the last alternative's share, its interval ending at x", Verdict::holds,
                      Verdict::inconclusive,
                      [](SaturationEvidence& e, double x) {
                        saturation_as_claimed(e);
                        trace_edge(e.saturated, last_alternative(e.saturated), x, false);
                      }},
                     {&kEarlyShare, "softmax's share gone at a step x of the run", Verdict::violated, Verdict::holds,
                      early_window_at}}}));
  r.add(make_claim<SaturationEvidence>(
      {.id = "periodic.logits_not_normal",
       .source = "PERIODIC §4",
       .statement = "the values that generate the attention scores are related to the image content and are not "
                    "strictly normally distributed",
       .method = "periodic_saturation: the excess kurtosis of each row of softmax's logits through training; not "
                 "normal when its 95% interval over seeds lies outside ±normal_kurtosis_band",
       .sweep = sweep::periodic_saturation},
      {.measure = measure_saturation,
       .judge = judge_kurtosis,
       .contradict = [](SaturationEvidence& e) { set_trace(e.kurtosis, "softmax", 0); },
       .support = saturation_as_claimed,
       .crossings = {{&kNormalKurtosis, "softmax's kurtosis, its interval starting at x", Verdict::inconclusive,
                      Verdict::holds, [](SaturationEvidence& e, double x) {
                        saturation_as_claimed(e);
                        trace_edge(e.kurtosis, "softmax", x, true);
                      }}}}));
}

}  // namespace attnlab::training_claims
