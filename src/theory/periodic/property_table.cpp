// The five-property table of PERIODIC §3 regenerated from measured quantities, and sinmax-constant's submergence.
#include "rows.hpp"

namespace attnlab::periodic_claims {
namespace {

const Threshold kGradientFrob{
    "periodic_gradient_frob", 1.0,
    "twice the largest ||ds/dx||_F softmax can produce, 1/2 (two tied entries: J = [[1/4, -1/4], [-1/4, 1/4]]): a "
    "row's gradient misbehaves beyond anything softmax gives"};

const Threshold kZeroGradient{
    "periodic_zero_gradient", 0.1,
    "paper §3 (4) 'zero-region gradient' as a number: the median of n|ds_1/dx_1| at x_1 = 0 among N(0,1) "
    "neighbours is at least a tenth of softmax's (~1)"};

const Threshold kSubmergedExponent{
    "periodic_submerged_exponent", -0.5,
    "paper §3.2: 'the influence of x_i will be weakened ... as the dimension grows'; read as: the largest score one "
    "entry can reach decays in n at least like n^-1/2 (softmax's does not decay, 2/(n + 1) for 1 + sin 10x); a split "
    "between no decay (0) and 1/n (-1), so -0.25..-0.75 (x0.5..x1.5), never -1, the decay it is there to detect",
    0.5, 1.5};

// ---- the property table -------------------------------------------------------------------

// sup over x_1 in [-10, 10] of s_1, the other n - 1 entries N(0,1), on a grid; its mean over rows against n.
struct Influence {
  double score = 0, gradient = 0;
};

Influence best_influence(const Activation& a, VectorD x, int grid) {
  Influence best;
  for (int k = 0; k <= grid; ++k) {
    x[0] = -10 + 20 * double(k) / grid;
    const auto r = forward(a, x);
    if (!std::isfinite(r.y[0])) continue;
    best.score = std::max(best.score, r.y[0]);
    best.gradient = std::max(best.gradient, std::abs(r.J.diagonal()[0]));
  }
  return best;
}

struct Submergence {
  PowerLawFit score, gradient;
  Series score_curve;
};

Submergence submergence(const ClaimContext& ctx, const std::string& name) {
  const auto a = definition(name);
  const std::vector<Index> sizes{16, 64, 256, 1024};
  const Index rows = ctx.sized(24, 6);
  const int grid = ctx.sized(2000, 400);
  std::vector<double> x, s_mean, s_se, s_lo, s_hi, g_mean, g_se;
  for (Index n : sizes) {
    const MatrixD X = gaussian_rows(ctx, "periodic-submerged", rows, n, 1.0);
    std::vector<double> s, g;
    for (Index i = 0; i < rows; ++i) {
      const auto best = best_influence(a, X.row(i).transpose(), grid);
      s.push_back(best.score);
      g.push_back(best.gradient);
    }
    const auto es = estimate(s), eg = estimate(g);
    x.push_back(double(n));
    s_mean.push_back(es.mean), s_se.push_back(es.se), g_mean.push_back(eg.mean), g_se.push_back(eg.se);
    s_lo.push_back(es.ci_lo), s_hi.push_back(es.ci_hi);
  }
  return {fit_power_law(x, s_mean, s_se),
          fit_power_law(x, g_mean, g_se),
          {.label = definition_note(name), .x = x, .y = s_mean, .lo = s_lo, .hi = s_hi}};
}

FunctionStats function_stats(const ClaimContext& ctx, const std::string& name) {
  const auto a = definition(name);
  FunctionStats st{.name = name};
  measure_scales(ctx, a, st);
  MatrixD X = gaussian_rows(ctx, "periodic-zero", row_count(ctx), kRowLength, 1.0);
  X.col(0).setZero();
  std::vector<double> zero;
  for (Index i = 0; i < X.rows(); ++i)
    zero.push_back(double(kRowLength) * std::abs(forward(a, X.row(i).transpose()).J.diagonal()[0]));
  st.zero_median = Sample::of(std::move(zero)).median();
  const auto sub = submergence(ctx, name);
  st.submerged = sub.score;
  st.submerged_curve = sub.score_curve;
  return st;
}

struct TableEvidence {
  bool released = false;
  // The x_i reading: saturation from the x_j-related part of n|ds_j/dx_j|, and submergence as the influence against
  // the uniform share, sup n s_1, since the 1/n every normalised score has is no constant term's doing.
  bool xi_part = false;
  std::vector<FunctionStats> judged{};     // compared cell by cell with the paper's row
  std::vector<FunctionStats> prenormed{};  // the same with prenorm (the paper's or demo.py's), no counterpart
};

std::string cell(int holds_at, int scales) { return holds_at == scales ? "✓" : holds_at == 0 ? "✘" : "✘/✓"; }

// The samples the saturation column reads: the x_j-related part where the reading asks for it and one was measured.
const std::vector<Sample>& saturation_samples(const FunctionStats& st, bool xi_part) {
  return xi_part && !st.xi_diagonal.empty() ? st.xi_diagonal : st.diagonal;
}

std::array<std::string, 5> measured_cells(const FunctionStats& st, const Thresholds& t, bool xi_part) {
  int value_ok = 0, gradient_ok = 0, unsaturated = 0;
  const auto& saturation = saturation_samples(st, xi_part);
  for (std::size_t s = 0; s < kScales.size(); ++s) {
    value_ok += st.value_unstable[s] <= t(kUnstableRows);
    gradient_ok += st.frob[s].share_above(t(kGradientFrob)) <= t(kUnstableRows);
    unsaturated += saturation[s].share_below(t(kSaturatedEntry)) <= t(kSaturatedShare);
  }
  const int scales = int(kScales.size());
  // sup n s_1 ~ n^(exponent + 1): the influence against the uniform share
  const double submerged_exponent = st.submerged.ci_hi + (xi_part ? 1.0 : 0.0);
  return {cell(value_ok, scales), cell(gradient_ok, scales), cell(unsaturated, scales),
          st.zero_median >= t(kZeroGradient) ? "✓" : "✘", submerged_exponent > t(kSubmergedExponent) ? "✓" : "✘"};
}

ClaimOutcome judge_table(const TableEvidence& e, const Thresholds& t) {
  ClaimOutcome out;
  std::string table = text("| function | ", kColumns[0], " | ", kColumns[1], " | ", kColumns[2], " | ", kColumns[3],
                           " | ", kColumns[4], " |\n|---|---|---|---|---|---|\n");
  std::vector<std::string> disagreements;
  int agree = 0, cells = 0;
  for (const auto& st : e.judged) {
    const auto measured = measured_cells(st, t, e.xi_part);
    const auto& paper = kPaperTable.at(paper_row(st.name));
    table += text("| ", st.name);
    for (std::size_t c = 0; c < 5; ++c) {
      const bool same = measured[c] == paper[c];
      agree += same, ++cells;
      if (!same)
        disagreements.push_back(text(st.name, " / ", kColumns[c], ": measured ", measured[c], ", paper ", paper[c]));
      table += text(" | ", measured[c], " (paper ", paper[c], ")");
    }
    table += " |\n";
  }
  for (const auto& st : e.prenormed) {
    const auto measured = measured_cells(st, t, e.xi_part);
    table += text("| ", st.name);
    for (const auto& m : measured) table += " | " + m;
    table += " |\n";
  }
  for (const auto* group : {&e.judged, &e.prenormed})
    for (const auto& st : *group) {
      for (std::size_t s = 0; s < kScales.size(); ++s) {
        const ExtraColumns at{{"logit_scale", kScales[s]}};
        out.evidence.push_back(evidence_row("value_unstable_rows", st.name, kRowLength, st.value_unstable[s], at));
        out.evidence.push_back(
            evidence_row("gradient_unstable_rows", st.name, kRowLength, st.frob[s].share_above(t(kGradientFrob)), at));
        const bool xi = e.xi_part && !st.xi_diagonal.empty();
        out.evidence.push_back(evidence_row(xi ? "saturated_share_xi_part" : "saturated_share", st.name, kRowLength,
                                            saturation_samples(st, e.xi_part)[s].share_below(t(kSaturatedEntry)), at));
      }
      out.evidence.push_back(evidence_row("zero_region_n_grad_median", st.name, kRowLength, st.zero_median));
      auto exponent = evidence_row("best_score_exponent", st.name, 0, st.submerged.exponent);
      exponent.value.se = st.submerged.exponent_se;
      exponent.value.ci_lo = st.submerged.ci_lo, exponent.value.ci_hi = st.submerged.ci_hi;
      out.evidence.push_back(exponent);
    }
  out.verdict = agree == cells ? Verdict::holds : Verdict::inexact;
  out.measured = agree;
  out.claimed = cells;
  out.detail = text(agree, " of ", cells, " cells agree with the paper's table (",
                    e.released ? "demo.py's definitions: sin2max-released for Sin2max, sinsoftmax-released for "
                                 "SinSoftmax, d = 64"
                               : "the paper's definitions",
                    e.xi_part ? "; the x_i reading: saturation from the x_j-related part of n|ds_j/dx_j|, submergence "
                                "as sup n s_1 against n"
                              : "",
                    "); ", disagreements.size(), " disagreements (listed in report.md)");
  out.markdown = text(
      "Columns as measured quantities (rows of n = ", kRowLength,
      " Gaussian logits at each scale in {0.1, 0.3, 1, 3, "
      "10, 30}; ✓ at every scale, ✘ at none, ✘/✓ at some):\n\n",
      "- *value stability*: at most ", t(kUnstableRows), " of the rows have a score outside [0, 1] or not finite;\n",
      "- *gradient stability*: at most ", t(kUnstableRows), " of the rows have ||ds/dx||_F > ", t(kGradientFrob),
      " or not finite;\n", "- *no saturation area*: at most ", t(kSaturatedShare),
      " of the entries have n |ds_j/dx_j| < ", t(kSaturatedEntry),
      e.xi_part
          ? " (its x_j-related part: the others' sum of g replaced by (n - 1) times the median |g| at that scale; "
            "prenormed rows whole)"
          : "",
      ";\n",
      "- *zero-region gradient good*: with x_1 = 0 among N(0,1) neighbours, the median of n |ds_1/dx_1| is at least ",
      t(kZeroGradient), ";\n",
      "- *info not submerged*: the largest score one entry can reach by moving it over [-10, 10], others N(0,1)",
      e.xi_part ? ", times n (against the uniform share 1/n)" : "", ", does not decay in n = 16..1024 faster than n^",
      t(kSubmergedExponent), " (upper end of the CI).\n\n", table, "\nPrenorm rows",
      e.released ? " (demo.py's placement: before the 1/sqrt(d), d = 64)" : "",
      " have no counterpart in the paper's table. Disagreements with the paper:\n\n", [&] {
        std::string list;
        for (const auto& d : disagreements) list += "- " + d + "\n";
        return list.empty() ? std::string("- none\n") : list;
      }());
  return out;
}

TableEvidence measure_table(const ClaimContext& ctx, bool released, bool xi_part) {
  TableEvidence e{.released = released, .xi_part = xi_part};
  for (const auto& f : table_functions(released)) {
    e.judged.push_back(function_stats(ctx, f));
    e.prenormed.push_back(function_stats(ctx, f + (released ? "+prenorm-released" : "+prenorm")));
  }
  return e;
}

// The last function the paper marks ✓ in `column`: its largest scale (or its one number) is where a crossing moves.
FunctionStats& last_marked(TableEvidence& e, std::size_t column) {
  for (auto it = e.judged.rbegin(); it != e.judged.rend(); ++it)
    if (kPaperTable.at(paper_row(it->name))[column] == "✓") return *it;
  throw std::logic_error(text("no function the paper marks ✓ in ", kColumns[column]));
}

Sample& last_saturation_sample(TableEvidence& e) {
  auto& st = last_marked(e, 2);
  return (e.xi_part && !st.xi_diagonal.empty() ? st.xi_diagonal : st.diagonal).back();
}

// Each column's edges on the last function the paper marks ✓ there: past one, its cell turns ✘/✓ (or ✘) and the table
// disagrees with the paper.
std::vector<Crossing<TableEvidence>> table_crossings() {
  using E = TableEvidence;
  const auto inexact = Verdict::inexact, holds = Verdict::holds;
  return {{&kUnstableRows, "the value column's share of unstable rows", holds, inexact,
           [](E& e, double x) { last_marked(e, 0).value_unstable.back() = x; }},
          {&kUnstableRows, "the gradient column's share of unstable rows", holds, inexact,
           [](E& e, double x) { last_marked(e, 1).frob.back() = Sample::with_share(x, HUGE_VAL, 0); }},
          {&kGradientFrob, "the gradient column's rows", holds, inexact,
           [](E& e, double x) { last_marked(e, 1).frob.back() = Sample::of({x}); }},
          {&kSaturatedEntry, "the saturation column's entries", inexact, holds,
           [](E& e, double x) { last_saturation_sample(e) = Sample::of({x}); }},
          {&kSaturatedShare, "the saturation column's saturated share", holds, inexact,
           [](E& e, double x) { last_saturation_sample(e) = Sample::with_share(x, 0, 1); }},
          {&kZeroGradient, "the zero-region column's median", inexact, holds,
           [](E& e, double x) { last_marked(e, 3).zero_median = x; }},
          // the x_i reading judges the exponent of sup n s_1, one more than sup s_1's
          {&kSubmergedExponent, "the submergence column's exponent interval", holds, inexact,
           [](E& e, double x) { last_marked(e, 4).submerged.ci_hi = x - (e.xi_part ? 1.0 : 0.0); }}};
}

ClaimRules<TableEvidence> table_rules(bool released, bool xi_part = false) {
  return {.measure = [released, xi_part](const ClaimContext& ctx) { return measure_table(ctx, released, xi_part); },
          .judge = judge_table,
          // softmax's value and gradient made unstable at every scale: two cells the paper marks ✓
          .contradict =
              [](TableEvidence& e) {
                auto& softmax = e.judged.front();
                for (auto& v : softmax.value_unstable) v = 1.0;
                for (auto& s : softmax.frob) s = Sample::of({HUGE_VAL});
              },
          // every cell moved to the paper's: the rule must then agree everywhere
          .support =
              [](TableEvidence& e) {
                for (auto& st : e.judged) {
                  const auto& paper = kPaperTable.at(paper_row(st.name));
                  const auto set = [](const std::string& cell, std::size_t s, auto yes, auto no) {
                    return cell == "✓" || (cell == "✘/✓" && s == 0) ? yes : no;
                  };
                  for (std::size_t s = 0; s < kScales.size(); ++s) {
                    st.value_unstable[s] = set(paper[0], s, 0.0, 1.0);
                    st.frob[s] = Sample::of({set(paper[1], s, 0.0, HUGE_VAL)});
                    st.diagonal[s] = Sample::of({set(paper[2], s, 1.0, 0.0)});
                    if (!st.xi_diagonal.empty()) st.xi_diagonal[s] = st.diagonal[s];
                  }
                  st.zero_median = paper[3] == "✓" ? 1.0 : 0.0;
                  st.submerged.ci_hi = paper[4] == "✓" ? 0.0 : -2.0;  // ✘ under either reading of the column
                }
              },
          .crossings = table_crossings()};
}

// ---- sinmax-constant's submergence ------------------------------------------------------------

struct SubmergedEvidence {
  Submergence constant, softmax;
};

ClaimOutcome judge_submerged(const SubmergedEvidence& e, const Thresholds& t) {
  const auto& s = e.constant.score;
  const auto& g = e.constant.gradient;
  const double limit = t(kSubmergedExponent);
  const bool vanish = s.ci_hi < limit && g.ci_hi<limit, stays = s.ci_lo> limit || g.ci_lo > limit;
  ClaimOutcome out{.verdict = vanish  ? Verdict::holds
                              : stays ? Verdict::violated
                                      : Verdict::inconclusive,
                   .measured = s.exponent,
                   .ci_lo = s.ci_lo,
                   .ci_hi = s.ci_hi};
  out.detail = text("sinmax-constant (demo.py's sinmax, 1 + sin 10x): sup s_1 ~ ", sig(s.prefactor, 3), " n^",
                    sig(s.exponent, 3), " [", sig(s.ci_lo, 3), ", ", sig(s.ci_hi, 3), "], sup |ds_1/dx_1| ~ n^",
                    sig(g.exponent, 3), " [", sig(g.ci_lo, 3), ", ", sig(g.ci_hi, 3),
                    "]; both must fall faster than n^", limit, "; softmax for contrast: sup s_1 ~ n^",
                    sig(e.softmax.score.exponent, 3));
  auto constant = e.constant.score_curve, softmax = e.softmax.score_curve;
  constant.fit = SeriesFit{.law = s}, softmax.fit = SeriesFit{.law = e.softmax.score};
  out.figures.push_back({.name = "periodic_submerged",
                         .title = "largest score one entry can reach (others N(0,1)) against the row length",
                         .xlabel = "n (row length)",
                         .ylabel = "mean over rows of sup_x1 s_1, 95% CI",
                         .logx = true,
                         .logy = true,
                         .series = {constant, softmax}});
  return out;
}

void set_fit(PowerLawFit& f, double exponent) {
  f.exponent = exponent, f.ci_lo = exponent - 0.05, f.ci_hi = exponent + 0.05;
}

void shift_fit(PowerLawFit& f, double by) { f.exponent += by, f.ci_lo += by, f.ci_hi += by; }

// Each fit's interval with its upper end at x (holds beyond: vanishes) and with its lower end at x (violated short
// of it: stays), the other fit left where the supported evidence has it.
std::vector<Crossing<SubmergedEvidence>> submerged_crossings() {
  using E = SubmergedEvidence;
  const auto inconclusive = Verdict::inconclusive;
  return {{&kSubmergedExponent, "the score's interval's upper end", inconclusive, Verdict::holds,
           [](E& e, double x) { shift_fit(e.constant.score, x - e.constant.score.ci_hi); }},
          {&kSubmergedExponent, "the gradient's interval's upper end", inconclusive, Verdict::holds,
           [](E& e, double x) { shift_fit(e.constant.gradient, x - e.constant.gradient.ci_hi); }},
          {&kSubmergedExponent, "the score's interval's lower end", Verdict::violated, inconclusive,
           [](E& e, double x) { shift_fit(e.constant.score, x - e.constant.score.ci_lo); }},
          {&kSubmergedExponent, "the gradient's interval's lower end", Verdict::violated, inconclusive,
           [](E& e, double x) { shift_fit(e.constant.gradient, x - e.constant.gradient.ci_lo); }}};
}

}  // namespace

void register_property_table_claims(ClaimRegistry& r) {
  r.add(make_claim<TableEvidence>(
      {.id = "periodic.property_table",
       .source = "PERIODIC §3 table",
       .statement =
           "the 5-column table (value stability, gradient stability, no saturation area, zero-region gradient, "
           "information submerged) for the 7 functions",
       .method = "each column a measured quantity with a named threshold, regenerated with the paper's definitions "
                 "(with and without prenorm) and compared cell by cell with the paper (holds only if every cell "
                 "agrees, else inexact)"},
      table_rules(false)));
  r.add(make_claim<TableEvidence>(
      {.id = "periodic.property_table.released",
       .source = "PERIODIC §3 table; demo.py",
       .statement = "the same table for the functions as demo.py defines them (sin_2_max, sin_softmax, map_norm "
                    "before the 1/sqrt(d))",
       .method = "as periodic.property_table with sin2max-released and sinsoftmax-released (d = 64) in the rows of "
                 "Sin2max and SinSoftmax, and demo.py's prenorm"},
      table_rules(true)));
  r.add(make_claim<TableEvidence>(
      {.id = "periodic.property_table.xi_part",
       .source = "PERIODIC §3 table, §3 ('we only consider aspects related to x_i'), "
                 "§3.2 ('the constant term')",
       .statement =
           "the same table with the gradient read as the paper says it reads it: saturation from the part of "
           "n|ds_j/dx_j| that x_j sets (the others' sum of g at a typical background, not one entry near a pole), "
           "and submergence, which the paper blames on the constant term, as the influence against the uniform "
           "share 1/n that every normalised score has",
       .method =
           "as periodic.property_table (the paper's definitions, the same rows); the saturation column from n|g'(x_j)| "
           "B/(g(x_j) + B)^2 with B = (n - 1) times the median |g| at that scale; the submergence column from sup n s_1 "
           "~ n^(exponent + 1)"},
      table_rules(false, true)));
  r.add(make_claim<SubmergedEvidence>(
      {.id = "periodic.sinmax_submerged",
       .source = "PERIODIC §3.2",
       .statement = "for sinmax-constant the influence of one x_i and its gradient vanish as n grows",
       .method = "sup over x_1 in [-10, 10] of s_1 and of |ds_1/dx_1| with the others N(0,1), fitted against n = "
                 "16..1024: holds when both exponents' CIs lie below the submergence exponent"},
      {.measure =
           [](const ClaimContext& ctx) {
             return SubmergedEvidence{submergence(ctx, "sinmax-constant"), submergence(ctx, "softmax")};
           },
       .judge = judge_submerged,
       .contradict = [](SubmergedEvidence& e) { set_fit(e.constant.score, 0), set_fit(e.constant.gradient, 0); },
       .support = [](SubmergedEvidence& e) { set_fit(e.constant.score, -1), set_fit(e.constant.gradient, -1); },
       .crossings = submerged_crossings()}));
}

}  // namespace attnlab::periodic_claims
