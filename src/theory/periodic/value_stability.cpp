// Value stability: sinmax's instability without the constant (§3.2), g >= 0 and its denominator.
#include "rows.hpp"

namespace attnlab::periodic_claims {
namespace {

const Threshold kUnstableScore{
    "periodic_unstable_score", 10.0,
    "paper §3.2 'the value of s is unstable' as a number: a score ten times outside [0, 1] (a g >= 0 function "
    "never leaves [0, 1])"};

const Threshold kDenominatorFloor{
    "periodic_denominator_floor", 1e-6,
    "every g here is O(1) where it is not zero (sin^2 <= 1, 1 + sin 10x <= 2, e^(sin x) >= 1/e, sirenmax's g(0) = "
    "1/2, softmax's exp(x - max x) has its largest term 1): a row sum below n 1e-6 magnifies an error in one g_j a "
    "millionfold in the scores, and at 0 the scores are 0/0"};

// ---- value stability ----------------------------------------------------------------------

// The g >= 0 definitions, and where their g vanishes (zeros, in one period) for the extreme rows.
struct NonNegative {
  std::string name;
  std::vector<double> zeros;
};

std::vector<NonNegative> non_negative(bool released) {
  const double c = 1 / std::sqrt(double(kReleasedHeadDim));
  if (released)
    return {{"sin2max-released", {-kPi / 4 * (1 - c), kPi - kPi / 4 * (1 - c)}},
            {"sinsoftmax-released", {-c * kPi / 2}}};
  return {{"softmax", {}},
          {"sinmax-constant", {-kPi / 20}},
          {"sin2max", {0.0, kPi}},
          {"sin2max-shifted", {-kPi / 4, 3 * kPi / 4}},
          {"sinsoftmax", {-kPi / 2}},  // no zero: e^(sin x) is smallest, 1/e, here
          {"sirenmax", {-kPi / 2}}};
}

// Inputs for the g >= 0 checks: the given rows, or Gaussian rows at every scale and the extreme rows at the
// function's zeros.
std::vector<Case> value_inputs(const ClaimContext& ctx, const NonNegative& f) {
  std::vector<Case> inputs;
  if (!ctx.logits.empty()) {
    for (std::size_t i = 0; i < ctx.logits.size(); ++i)
      inputs.push_back({text("--logits-file line ", i + 1), 0, ctx.logits[i]});
    return inputs;
  }
  for (double scale : kScales) {
    const MatrixD X = gaussian_rows(ctx, "periodic-value", row_count(ctx), kRowLength, scale);
    for (Index i = 0; i < X.rows(); ++i)
      inputs.push_back({text("Gaussian rows at scale ", scale), 0, X.row(i).transpose()});
  }
  for (Index n : {Index(8), kRowLength})
    for (auto& r : extreme_rows(n, ctx.seed, f.zeros)) inputs.push_back({r.family, 0, std::move(r.logits)});
  return inputs;
}

struct ValueIdentityEvidence {
  std::vector<std::string> functions;
  std::vector<Case> worst;  // per function: the largest excursion of a score outside [0, 1] (rows with sum g > 0)
  std::vector<std::int64_t> rows;
};

ValueIdentityEvidence measure_value_identity(const ClaimContext& ctx) {
  ValueIdentityEvidence e;
  for (bool released : {false, true})
    for (const auto& f : non_negative(released)) {
      const auto a = definition(f.name);
      Case worst{"", -HUGE_VAL, {}};
      std::int64_t rows = 0;
      for (const auto& in : value_inputs(ctx, f)) {
        VectorD y(in.logits.size());
        row_forward(a, in.logits.data(), in.logits.size(), y.data());
        if (!y.allFinite()) continue;  // sum g = 0: 0/0, judged in periodic.value_stability.denominator
        ++rows;
        const double excursion = std::max(-y.minCoeff(), y.maxCoeff() - 1) + 0.0;  // + 0: no "-0"
        if (clearly_larger(excursion, worst.value)) worst = {in.input, excursion, in.logits};
      }
      e.functions.push_back(f.name);
      e.worst.push_back(worst);
      e.rows.push_back(rows);
    }
  return e;
}

ClaimOutcome judge_value_identity(const ValueIdentityEvidence& e, const Thresholds& t) {
  ClaimOutcome out{.verdict = Verdict::holds};
  std::string list;
  double largest_excursion = -HUGE_VAL;
  const Case* worst = nullptr;
  for (std::size_t i = 0; i < e.functions.size(); ++i) {
    const auto& w = e.worst[i];
    if (!worst || clearly_larger(w.value, worst->value)) worst = &w;
    largest_excursion = std::max(largest_excursion, w.value);
    if (w.value > t(kBoundRounding)) out.verdict = Verdict::violated;
    list += text(" ", e.functions[i], " ", sig(w.value, 3), " (", e.rows[i], " rows);");
    out.evidence.push_back(evidence_row("score_excursion_outside_0_1", e.functions[i], w.logits.size(), w.value,
                                        {{"input", w.input}, {"rows", e.rows[i]}, {"logits", logits_line(w.logits)}}));
  }
  out.measured = largest_excursion;
  out.detail = text(
      "largest excursion of a score outside [0, 1] (negative: inside) over the inputs (Gaussian rows at "
      "scales 0.1..30 and extreme rows at each g's zeros, or the --logits-file rows), paper's and demo.py's "
      "definitions:",
      list, " the constant that can fail is judged in periodic.value_stability.denominator");
  if (worst) save_worst(out, "periodic.value_stability", *worst);
  return out;
}

// How close the row sum of g comes to 0 (scores 0/0), per definition, over every input and a search.
struct DenominatorEvidence {
  bool released = false;
  std::vector<std::string> functions{};
  std::vector<Case> smallest{};   // per function: the smallest sum_j g(x_j)/n found
  std::vector<double> typical{};  // per function: the smallest over the Gaussian (or given) rows alone
};

double mean_g(const Activation& a, const VectorD& x) {
  const auto& row = std::get<RowActivation>(a.fn);
  const RowConstants k{.shift = row.fn == RowNormalised::softmax ? x.maxCoeff() : 0.0, .logit_scale = row.logit_scale};
  double sum = 0;
  for (Index j = 0; j < x.size(); ++j) {
    double g, dg;
    evaluate_row(row.fn, x[j], k, g, dg);
    sum += g;
  }
  return sum / double(x.size());
}

DenominatorEvidence measure_denominator(const ClaimContext& ctx, bool released) {
  DenominatorEvidence e{.released = released};
  for (const auto& f : non_negative(released)) {
    const auto a = definition(f.name);
    Case smallest{"", HUGE_VAL, {}};
    double typical = HUGE_VAL;
    for (const auto& in : value_inputs(ctx, f)) {
      const double m = mean_g(a, in.logits);
      if (clearly_larger(-m, -smallest.value)) smallest = {in.input, m, in.logits};
      if (in.input.starts_with("Gaussian") || in.input.starts_with("--logits-file")) typical = std::min(typical, m);
    }
    if (ctx.logits.empty())
      for (Index n : {Index(8), kRowLength}) {
        const auto found = search_rows(
            n, [&](const VectorD& x) { return -mean_g(a, x); }, ctx.seed, search_budget(ctx), f.zeros);
        if (clearly_larger(found.best, -smallest.value))
          smallest = {text("search, n = ", n, ": ", found.family), -found.best, found.logits};
      }
    e.functions.push_back(f.name);
    e.smallest.push_back(smallest);
    e.typical.push_back(typical);
  }
  return e;
}

bool paper_marks_value_stable(const std::string& name) { return kPaperTable.at(paper_row(name))[0] == "✓"; }

ClaimOutcome judge_denominator(const DenominatorEvidence& e, const Thresholds& t) {
  ClaimOutcome out{.verdict = Verdict::holds};
  std::string list;
  const Case* worst = nullptr;
  for (std::size_t i = 0; i < e.functions.size(); ++i) {
    const auto& s = e.smallest[i];
    const bool judged = paper_marks_value_stable(e.functions[i]);
    if (judged && (!worst || clearly_larger(-s.value, -worst->value))) worst = &s, out.measured = s.value;
    if (judged && s.value < t(kDenominatorFloor)) out.verdict = Verdict::violated;
    list += text(" ", e.functions[i], judged ? "" : " (paper: not value-stable, not judged)", " ", sig(s.value, 3),
                 " (", s.input, "; Gaussian or given rows alone ", sig(e.typical[i], 3), ");");
    out.evidence.push_back(
        evidence_row("smallest_mean_g", e.functions[i], s.logits.size(), s.value,
                     {{"input", s.input}, {"judged", judged ? "yes" : "no"}, {"logits", logits_line(s.logits)}}));
  }
  out.detail = text(e.released ? "demo.py's definitions (d = 64)" : "the paper's definitions",
                    ": smallest row mean of g over Gaussian rows, extreme rows at g's zeros and a search, or the "
                    "--logits-file rows (",
                    "the functions the paper marks value-stable must stay above ", t(kDenominatorFloor), "):", list);
  if (worst)
    save_worst(out,
               e.released ? "periodic.value_stability.denominator.released" : "periodic.value_stability.denominator",
               *worst);
  return out;
}

// The last function the paper marks value-stable, its smallest row mean of g at x: violated below the floor.
std::vector<Crossing<DenominatorEvidence>> denominator_crossings() {
  return {{&kDenominatorFloor, "the last value-stable function's smallest row mean", Verdict::violated, Verdict::holds,
           [](DenominatorEvidence& e, double x) {
             for (std::size_t i = e.functions.size(); i-- > 0;)
               if (paper_marks_value_stable(e.functions[i])) {
                 e.smallest[i].value = x;
                 return;
               }
           }}};
}

ClaimRules<DenominatorEvidence> denominator_rules(bool released) {
  return {.measure = [released](const ClaimContext& ctx) { return measure_denominator(ctx, released); },
          .judge = judge_denominator,
          .contradict =
              [](DenominatorEvidence& e) {
                for (std::size_t i = 0; i < e.functions.size(); ++i)
                  if (paper_marks_value_stable(e.functions[i])) e.smallest[i].value = 0;
              },
          .support =
              [](DenominatorEvidence& e) {
                for (auto& s : e.smallest) s.value = 1;
              },
          .crossings = denominator_crossings()};
}

// ---- sinmax without the constant: value instability (§3.2) -------------------------------

struct SinmaxValueEvidence {
  std::vector<double> unstable_share;           // per scale: rows with a score outside [0, 1] or not finite
  std::vector<double> constant_unstable_share;  // the same for sinmax-constant, for contrast
  std::vector<Case> largest;                    // the largest |score| found
};

// A |score| past 1/sqrt(eps) (6.7e7) has a denominator under sqrt(eps) of its terms, whose rounding decides half its
// digits: a pole, reported as 1/sqrt(eps). Beyond it the size is rounding, which differs between CPUs (an AVX-512
// build found 8.9e15 on one symmetric row where an AVX2 one found 7.4e15 on another), and would pick the worst row.
constexpr double kPoleScore = 6.7108864e7;  // 2^26 = 1/sqrt(2^-52)

double largest_score(const Activation& a, const VectorD& x) {
  VectorD y(x.size());
  row_forward(a, x.data(), x.size(), y.data());
  return std::min(y.cwiseAbs().maxCoeff(), kPoleScore);
}

double unstable_share(const Activation& a, const MatrixD& X) {
  double unstable = 0;
  VectorD y(X.cols());
  for (Index i = 0; i < X.rows(); ++i) {
    row_forward(a, X.row(i).data(), X.cols(), y.data());
    unstable += !y.allFinite() || y.minCoeff() < 0 || y.maxCoeff() > 1;
  }
  return unstable / double(X.rows());
}

SinmaxValueEvidence measure_sinmax_value(const ClaimContext& ctx) {
  const auto a = definition("sinmax"), constant = definition("sinmax-constant");
  SinmaxValueEvidence e;
  if (!ctx.logits.empty()) {
    double unstable = 0;
    for (const auto& x : ctx.logits) {
      VectorD y(x.size());
      row_forward(a, x.data(), x.size(), y.data());
      unstable += !y.allFinite() || y.minCoeff() < 0 || y.maxCoeff() > 1;
    }
    e.unstable_share.push_back(unstable / double(ctx.logits.size()));
  } else {
    for (double scale : kScales) {
      const MatrixD X = gaussian_rows(ctx, "periodic-value", row_count(ctx), kRowLength, scale);
      e.unstable_share.push_back(unstable_share(a, X));
      e.constant_unstable_share.push_back(unstable_share(constant, X));
    }
  }
  const std::array<double, 2> zeros{0.0, kPi};
  e.largest = worst_cases(
      ctx, "periodic-value", [a](const VectorD& x) { return largest_score(a, x); },
      ctx.sized(std::vector<Index>{8, 64}, std::vector<Index>{8}), zeros);
  return e;
}

// Either sign of instability alone, the other case stable: every share 0 and every |score| 1 but the last.
void only_last_unstable(SinmaxValueEvidence& e) {
  for (auto& v : e.unstable_share) v = 0;
  for (auto& c : e.largest) c.value = 1;
}

ClaimOutcome judge_sinmax_value(const SinmaxValueEvidence& e, const Thresholds& t) {
  const double share = *std::max_element(e.unstable_share.begin(), e.unstable_share.end());
  const auto& worst = largest(e.largest);
  const bool unstable = share > t(kUnstableRows) || worst.value > t(kUnstableScore);
  ClaimOutcome out{.verdict = unstable ? Verdict::holds : Verdict::violated, .measured = worst.value};
  std::string shares, contrast;
  for (std::size_t i = 0; i < e.unstable_share.size(); ++i) shares += text(" ", sig(e.unstable_share[i], 3));
  for (double v : e.constant_unstable_share) contrast += text(" ", sig(v, 3));
  const bool sampled = e.unstable_share.size() == kScales.size();  // else one share over the given rows
  for (std::size_t i = 0; i < e.unstable_share.size(); ++i)
    out.evidence.push_back(evidence_row("value_unstable_rows", "sinmax", kRowLength, e.unstable_share[i],
                                        {{"logit_scale", sampled ? text(kScales[i]) : "given rows"}}));
  for (const auto& c : e.largest)
    out.evidence.push_back(evidence_row("largest_abs_score", "sinmax", c.logits.size(), c.value,
                                        {{"input", c.input}, {"logits", logits_line(c.logits)}}));
  out.detail = text(
      "sinmax (g = sin x: the paper's §3.2 without the constant, layer file Sinmax): share of rows with a "
      "score outside [0, 1] or not finite ",
      sampled ? "by scale 0.1..30:" : "over the given rows:", shares, "; largest |s_j| found ", sig(worst.value, 4),
      worst.value == kPoleScore ? " (1/sqrt(eps): a pole, beyond which its size is rounding)" : "", " (", worst.input,
      "); with the constant (1 + sin 10x) the shares are", contrast.empty() ? " not measured" : contrast,
      "; holds when the share exceeds ", t(kUnstableRows), " or a score exceeds ", t(kUnstableScore), " in magnitude");
  save_worst(out, "periodic.sinmax_value_unstable", worst);
  return out;
}

}  // namespace

void register_value_stability_claims(ClaimRegistry& r) {
  r.add(make_claim<SinmaxValueEvidence>(
      {.id = "periodic.sinmax_value_unstable",
       .source = "PERIODIC §3.2",
       .statement = "without the constant (g = sin x) the value of the scores is unstable",
       .method = "share of Gaussian rows at scales 0.1..30 with a score outside [0, 1] or not finite, and the largest "
                 "|score| over extreme rows at the zeros of sin and an adversarial search",
       .identity =
           "a row whose sines take both signs has a score sin x_j / sum_l sin x_l below 0 wherever sin x_j's sign "
           "differs from the sum's, and a Gaussian row of 64 entries has sines of both signs at every scale but "
           "with probability 2^-63: the share is 1 by construction",
       .judges_logits = true},
      {.measure = measure_sinmax_value,
       .judge = judge_sinmax_value,
       .contradict =
           [](SinmaxValueEvidence& e) {
             for (auto& v : e.unstable_share) v = 0;
             for (auto& c : e.largest) c.value = 1;
           },
       .support =
           [](SinmaxValueEvidence& e) {
             for (auto& v : e.unstable_share) v = 0.5;
           },
       .crossings = {{&kUnstableRows, "the largest scale's share of unstable rows", Verdict::violated, Verdict::holds,
                      [](SinmaxValueEvidence& e, double x) {
                        only_last_unstable(e);
                        e.unstable_share.back() = x;
                      }},
                     {&kUnstableScore, "the last search's largest |score|", Verdict::violated, Verdict::holds,
                      [](SinmaxValueEvidence& e, double x) {
                        only_last_unstable(e);
                        e.largest.back().value = x;
                      }}}}));
  r.add(make_claim<ValueIdentityEvidence>(
      {.id = "periodic.value_stability",
       .source = "PERIODIC §3 table, column 1",
       .statement =
           "for g >= 0 (softmax, sinmax-constant, sin2max, sin2max-shifted, sinsoftmax, sirenmax and demo.py's "
           "sin2max and sinsoftmax) every score lies in [0, 1]",
       .method = "largest excursion of a score outside [0, 1] over Gaussian rows and extreme rows at each g's zeros",
       .identity = "g_j >= 0 and sum_l g_l > 0 give 0 <= g_j/sum_l g_l <= 1",
       .judges_logits = true},
      {.measure = measure_value_identity,
       .judge = judge_value_identity,
       .contradict = [](ValueIdentityEvidence& e) { e.worst.front().value = 0.5; },
       .support =
           [](ValueIdentityEvidence& e) {
             for (auto& w : e.worst) w.value = -1;
           },
       .crossings = {{&kBoundRounding, "the last function's excursion outside [0, 1]", Verdict::holds,
                      Verdict::violated, [](ValueIdentityEvidence& e, double x) { e.worst.back().value = x; }}}}));
  r.add(make_claim<DenominatorEvidence>(
      {.id = "periodic.value_stability.denominator",
       .source = "PERIODIC §3 table, column 1",
       .statement = "value stability for every input: the scores of the functions the paper marks value-stable stay "
                    "defined, their row sum of g bounded away from 0",
       .method = "smallest row mean of g over Gaussian rows, extreme rows at g's zeros and an adversarial search (n = "
                 "8, 64), the paper's definitions",
       .judges_logits = true},
      denominator_rules(false)));
  r.add(make_claim<DenominatorEvidence>({.id = "periodic.value_stability.denominator.released",
                                         .source = "PERIODIC §3 table, column 1; demo.py",
                                         .statement = "the same for demo.py's sin_2_max and sin_softmax (d = 64)",
                                         .method = "as periodic.value_stability.denominator",
                                         .judges_logits = true},
                                        denominator_rules(true)));
}

}  // namespace attnlab::periodic_claims
