#include <attnlab/core/text.hpp>
#include <attnlab/io/report.hpp>
#include <attnlab/io/table.hpp>
#include <attnlab/theory/catalogue.hpp>
#include <attnlab/theory/verdicts.hpp>

#include <algorithm>
#include <cmath>
#include <map>

namespace attnlab::io {
namespace {

const char* kConventions = R"md(## Conventions

- X ∈ R^{N×D}, Q, K ∈ R^{D×d} with i.i.d. entries N(0, σx²), N(0, σt²): σ is the standard deviation.
- M = XQKᵀXᵀ. `inside` convention (POLY Thm 4.2): ϕ = (M/√d)^p / k. `outside` (Thm 4.3): ϕ = M^p/(√d k).
  `none` (the proofs' closed forms): ϕ = M^p. Powers are elementwise. Softmax acts on the rows of M/√d.
- ∂ϕ/∂Q is the N×N×D×d Jacobian; its norm is the Frobenius norm of that tensor, computed by the exact
  contraction ‖∂ϕ/∂Q‖² = Σ_ij ϕ'(M_ij)² ‖x_i‖² ‖Kᵀx_j‖² (elementwise ϕ) or its row-softmax analogue, tested
  against the explicit Jacobian. ∇softmax(A) is the N²×N² Jacobian of the row-wise softmax.
- Monte-Carlo: trial t of a configuration draws X, Q, K from Philox4x32-10 streams keyed by
  (seed, N, D, d, t); σ scales standard normals, so configurations differing only in σ share noise.
  Means carry 95% Student-t intervals; trials with Inf/NaN are counted and never averaged. A norm (‖ϕ‖_F, ‖∂ϕ/∂S‖_F,
  ‖∂ϕ/∂Q‖_F, ‖∂ϕ/∂K‖_F) of x^p, x, relu or relu² is estimated with its square, whose mean is exact (Wick), as a
  control variate: the regression estimator ȳ − β̂(c̄ − E c), its interval from the residual variance with n − 2 dof;
  cv_variance_ratio says how many plain trials each trial is worth (--plain-means turns this off).
- "O(N^a)": weighted log-log fit of the mean over N (delta-method weights), exponent CI from Student t
  with n − 2 dof using the larger of model and residual errors.
- The independent-factor model of POLY's proof (eq 41, 43) is read as S = AB with A = XQ, B = KᵀXᵀ
  independent, entries N(0, Dσx²σt²) and inner dimension d (the paper does not say; this is a parameter
  of the comparison, not of the toolkit).
- PERIODIC: rows of logits are the activation's argument x = m/√d. Where the released training code
  (demo.py) defines a function differently from the paper and its layer file, the paper's keeps the plain
  name and demo.py's is judged in its own `.released` row at demo.py's d = 64: `sin2max-released`
  sin²((m − π/4)/√d + π/4), `sinsoftmax-released` softmax(sin(m)/√d), and prenorm before the 1/√d.
  Rows marked `.as_used` judge a reading the paper relies on beyond what it states. Worst inputs are saved
  in the evidence's `logits` column and replay with `periodic_properties --logits-file`.
)md";

const char* kDerivations = R"md(## Exact moments (derivation)

With u_i = Qᵀx_i and v_j = Kᵀx_j, M_ij = u_i·v_j. Given X, u_i ~ N(0, σt²‖x_i‖² I_d) and v_j ~ N(0, σt²‖x_j‖² I_d)
are independent (Q and K are). So for i ≠ j, M_ij = σt²‖x_i‖‖x_j‖ (g·h) with g, h ~ N(0, I_d) independent, and
E(g·h)^{2p} = (2p−1)!! E‖h‖^{2p} = (2p−1)!! [d]_p, where [n]_p = n(n+2)…(n+2p−2) = E(χ²_n)^p. With E‖x‖^{2p} = σx^{2p}[D]_p:

- E M_ij^{2p} = (2p−1)!! [d]_p σx^{4p} σt^{4p} [D]_p² (i ≠ j), and on the diagonal ‖x_i‖‖x_j‖ → ‖x_i‖², giving [D]_{2p}:
  **E‖M^p‖_F² = (2p−1)!! [d]_p σx^{4p} σt^{4p} (N(N−1)[D]_p² + N[D]_{2p})**.
- ∂M_ij^p/∂Q = p M_ij^{p−1} x_i v_jᵀ, so ‖∂M^p/∂Q‖_F² = Σ_ij p² M_ij^{2p−2} ‖x_i‖²‖v_j‖². Conditioning on x_i, x_j, v_j,
  M_ij ~ N(0, σt²‖x_i‖²‖v_j‖²), and ‖v_j‖² = σt²‖x_j‖² χ²_d:
  **E‖∂M^p/∂Q‖_F² = p² (2p−3)!! [d]_p σx^{4p} σt^{4p−2} (N(N−1)[D]_p² + N[D]_{2p})**; the K-gradient has the same
  expectation by the Q ↔ K, i ↔ j symmetry.
- For independent factors C = AB (inner dimension D): c = Σ a_i b_i is N(0, σ1²‖b‖²) given b, so
  **E c^{2p} = (2p−1)!! [D]_p σ1^{2p} σ2^{2p}**. POLY eq (43) has D!/(D−p)! in place of [D]_p (it keeps only
  distinct indices and drops the higher even moments); eq (55) has D(D−1) where independence of x_i and x_j (i ≠ j)
  gives D², and 3 where E‖x‖⁴ gives D+2; eq (71) drops the factor p² of eq (65).
)md";

// Paper formula, exact expectation and Monte-Carlo side by side for closed-form claims.
std::string closed_form_table(const std::vector<ResultRow>& rows) {
  std::string md;
  for (const auto& r : rows) {
    if (extra_value(r, "paper").empty()) continue;
    if (md.empty())
      md = "| N | D | d | p | Monte-Carlo [95% CI] | paper | exact | rel. err. paper | rel. err. exact | z (exact) |\n"
           "|---|---|---|---|---|---|---|---|---|---|\n";
    const auto dim = [](Index v) { return v > 0 ? text(v) : std::string("–"); };
    md += text("| ", dim(r.N), " | ", dim(r.D), " | ", dim(r.d), " | ", r.p, " | ", sig(r.value.mean), " [",
               sig(r.value.ci_lo), ", ", sig(r.value.ci_hi), "] | ", sig(extra_number(r, "paper")), " | ",
               sig(extra_number(r, "exact")), " | ", sig(extra_number(r, "rel_err_paper"), 3), " | ",
               sig(extra_number(r, "rel_err_exact"), 3), " | ", extra_value(r, "z_exact"), " |\n");
  }
  return md.empty() ? md : md + "\n";
}

// Text for a markdown table cell: the norms' bars would end the cell.
std::string table_cell(const std::string& s) {
  std::string out;
  for (char ch : s) out += ch == '|' ? std::string("\\|") : std::string(1, ch);
  return out;
}

// A number for a table cell: four significant digits, empty where the claim has none.
std::string cell(double v) { return std::isfinite(v) ? sig(v) : std::string(); }

// One threshold's nearest changes below and above 1, "x0.5 -> violated" (the fragile ones only, or all).
std::string changes(const Sensitivity& s, bool fragile_only) {
  std::string out;
  const auto add = [&](double factor, Verdict v, bool fragile) {
    if (fragile_only && !fragile) return;
    out += text(out.empty() ? "" : ", ", "x", sig(factor, 3), " -> ", to_string(v));
  };
  if (s.below > 0) add(s.below, s.verdict_below, s.fragile);
  if (std::isfinite(s.above)) add(s.above, s.verdict_above, s.fragile);
  return out;
}

std::string fragility(const ClaimOutcome& o) {
  std::string s;
  for (const auto& f : o.sensitivity)
    if (f.fragile) s += text(s.empty() ? "" : "; ", f.threshold, " ", changes(f, true));
  return s;
}

// Every threshold's multipliers at which the verdict changes: "bound_slack x0.5 -> loose; bound_rounding none".
std::string flip_multipliers(const ClaimOutcome& o) {
  std::string s;
  for (const auto& f : o.sensitivity) {
    const auto c = changes(f, false);
    s += text(s.empty() ? "" : "; ", f.threshold, " ", c.empty() ? "none in x1/16..x16" : c);
  }
  return s;
}

std::string verdict_cell(const ClaimOutcome& o) {
  return text("**", to_string(o.verdict), "**", o.fragile() ? " (fragile)" : "");
}

std::string verdict_rules() {
  return "## Verdict rules\n\n"
         "- Growth claims O(N^a): `holds` if the fitted exponent's 95% CI comes within `exponent_tolerance` of a; "
         "`violated` if it lies above a + `exponent_tolerance`; `loose` if below a − `exponent_tolerance`; "
         "`inconclusive` if the CI is wider than `exponent_ci_max` or any trial was non-finite.\n"
         "- Deterministic bounds: the largest ratio measured/bound over random inputs at many scales, structured "
         "extreme inputs and an adversarial search; `violated` above 1 (+ `bound_rounding`), `loose` below "
         "1 − `bound_slack` (the measured column is then the tight constant), else `holds`.\n"
         "- Closed forms: `inexact` when the Monte-Carlo 95% CI excludes the paper's value and the relative "
         "error exceeds `closed_form_rel_error`; the exact (Wick) expectation is shown beside it with its z-score "
         "(MC − exact)/SE, held to |z| ≤ `exact_z` per point. For p ≥ 3 the sample SE of these heavy-tailed moments "
         "runs low, so an occasional large |z| there reflects the estimator, not the formula.\n"
         "- `identity`: the statement follows from its construction (the derivation is given with the claim); the "
         "toolkit confirms it numerically and counts it apart from the claims that could fail.\n"
         "- Every verdict is re-judged with each threshold its rule reads moved outward from ×1 (×0.9, ×0.8, … down "
         "to ×1/16 and ×1.1, ×1.25, … up to ×16); the first multiplier on each side at which the verdict changes is "
         "reported (*Sensitivity*, and `claims.csv`'s `flips`). A verdict is **fragile** when such a change lies within "
         "the multipliers the threshold's origin justifies (×½..×2 unless its origin narrows them, shown in the "
         "threshold table), not when it needs a value the origin rules out.\n\n";
}

// Every threshold read by some claim: its value, its origin and the claims that read it.
std::string threshold_table(const std::vector<CheckedClaim>& checked) {
  std::map<std::string, std::pair<const Threshold*, std::vector<std::string>>> used;
  for (const auto& c : checked)
    for (const auto* t : c.outcome.thresholds) {
      auto& [threshold, ids] = used[t->name];
      threshold = t;
      ids.push_back(text("`", c.claim->id, "`"));
    }
  if (used.empty()) return "";
  std::string md =
      "## Thresholds\n\n| threshold | value | justified multipliers | origin | read by |\n|---|---|---|---|---|\n";
  for (const auto& [name, entry] : used) {
    std::string ids;
    for (const auto& id : entry.second) ids += (ids.empty() ? "" : ", ") + id;
    const auto* t = entry.first;
    md += text("| `", name, "` | ", sig(t->value), " | x", sig(t->justified_lo, 3), "..x", sig(t->justified_hi, 3),
               " | ", table_cell(t->origin), " | ", ids, " |\n");
  }
  return md + "\n";
}

}  // namespace

Figure verdict_figure(const std::vector<CheckedClaim>& checked, const std::string& name) {
  // Verdicts in the order a reader scans them, each with a colour of the Okabe-Ito palette.
  const std::vector<std::pair<Verdict, const char*>> verdicts{
      {Verdict::holds, "#009E73"},   {Verdict::identity, "#0072B2"}, {Verdict::loose, "#E69F00"},
      {Verdict::inexact, "#CC79A7"}, {Verdict::violated, "#D55E00"}, {Verdict::inconclusive, "#777777"}};
  const auto colour_of = [&](Verdict v) {
    for (const auto& [verdict, colour] : verdicts)
      if (verdict == v) return std::string(colour);
    return std::string("#000000");
  };
  // The families of the claim catalogue, training claims apart.
  const std::vector<std::pair<std::string, std::string>> families{
      {"poly.", "POLY"}, {"relu.", "RELU"}, {"periodic.", "PERIODIC"}, {"soft.", "SOFT"}};
  const auto family_of = [&](const Claim& c) -> std::string {
    if (!c.sweep.empty()) return "training";
    for (const auto& [prefix, family] : families)
      if (c.id.starts_with(prefix)) return family;
    return "other";
  };
  std::vector<std::string> order;
  for (const auto& [prefix, family] : families) order.push_back(family);
  order.insert(order.end(), {"training", "other"});

  Figure f{.name = name,
           .title = text(checked.size(),
                         " claims: measured / claimed, by family (the verdict and both numbers at the right)"),
           .xlabel =
               "measured / claimed, with its 95% CI where there is one (1: as claimed; no dot: nothing claimed, or a "
               "ratio of 0 or below)",
           .logx = true,
           .xlines = {1.0},
           .width = 1300};
  std::map<Verdict, Series> by_verdict;
  std::size_t longest = 0;
  double row = 0;
  for (const auto& family : order) {
    std::vector<const CheckedClaim*> members;
    for (const auto& c : checked)
      if (family_of(*c.claim) == family) members.push_back(&c);
    if (members.empty()) continue;
    if (row > 0) f.ylines.push_back(row + 0.5);
    f.labels.push_back({.x = 0.005, .y = ++row, .text = text(family, " (", members.size(), ")"), .bold = true});
    for (const auto* c : members) {
      const auto& o = c->outcome;
      f.ytics.push_back({++row, c->claim->id});
      std::string numbers = std::isfinite(o.measured) ? sig(o.measured) : std::string();
      if (std::isfinite(o.claimed)) numbers += text(numbers.empty() ? "claimed " : " vs ", sig(o.claimed));
      const std::string right = text(to_string(o.verdict), o.fragile() ? " (fragile)" : "", numbers.empty() ? "" : "  ",
                                     numbers);
      longest = std::max(longest, right.size());
      f.labels.push_back({.x = 1.01, .y = row, .text = right, .colour = colour_of(o.verdict)});
      const double ratio = o.measured / o.claimed;
      if (!(std::isfinite(ratio) && ratio > 0)) continue;  // no claimed value, or of another sign: the text says
      auto& s = by_verdict[o.verdict];
      s.x.push_back(ratio), s.y.push_back(row);
      const double a = o.ci_lo / o.claimed, b = o.ci_hi / o.claimed;
      s.lo.push_back(std::isfinite(a) && std::isfinite(b) ? std::min(a, b) : ratio);
      s.hi.push_back(std::isfinite(a) && std::isfinite(b) ? std::max(a, b) : ratio);
    }
  }
  // A verdict none of whose claims has a dot needs no legend entry: its rows' text says it in its colour.
  for (const auto& [verdict, colour] : verdicts) {
    const auto n = std::count_if(checked.begin(), checked.end(),
                                 [v = verdict](const auto& c) { return c.outcome.verdict == v; });
    if (by_verdict[verdict].x.empty()) continue;
    auto s = by_verdict[verdict];
    s.label = text(to_string(verdict), " (", n, ")");
    s.colour = colour;
    s.connect = false;
    s.x_bars = true;
    f.series.push_back(std::move(s));
  }
  f.height = int(row) * 17 + 110;
  f.right_margin = int(longest) + 3;
  return f;
}

std::string claims_csv(const std::vector<CheckedClaim>& checked) {
  std::string out = "claim_id,source,verdict,measured,claimed,ci_lo,ci_hi,fragile,detail,flips\n";
  const auto number = [](double v) { return std::isfinite(v) ? text(v) : std::string(); };
  for (const auto& c : checked) {
    const auto& o = c.outcome;
    out += text(csv_field(c.claim->id), ',', csv_field(c.claim->source), ',', to_string(o.verdict), ',',
                number(o.measured), ',', number(o.claimed), ',', number(o.ci_lo), ',', number(o.ci_hi), ',',
                csv_field(fragility(o)), ',', csv_field(o.detail), ',', csv_field(flip_multipliers(o)), '\n');
  }
  return out;
}

std::string claim_catalogue_markdown() {
  std::string md =
      "# Claim catalogue\n\n"
      "Generated from the claim registry by `build/studies/claims_catalogue > docs/claims.md`; a unit test fails when "
      "the two differ. Sources: POLY = *Polynomial alternatives to softmax in transformers* (REPOLY its earlier "
      "version), RELU = *Replacing softmax with ReLU in vision transformers*, PERIODIC = *Escaping the gradient "
      "vanishing: periodic alternatives of softmax*, SOFT = *Softmax-free linear transformers*.\n\n"
      "Ids are stable: `claims.csv`, `report.md` and the tests use them. Where a paper uses a statement for more "
      "than it says, each reading is judged in its own row, `<claim>.<reading>` (for example `.literal` for the "
      "statement as printed and `.as_used` for what the paper's argument needs from it). An *identity* follows from "
      "its construction: the derivation is given, the toolkit confirms it numerically and counts it apart.\n";
  const std::vector<std::pair<std::string, std::string>> families{
      {"poly.", "POLY"}, {"relu.", "RELU"}, {"periodic.", "PERIODIC"}, {"soft.", "SOFT"}};
  const auto row = [](const Claim& c) {
    return text("| `", c.id, "` | ", table_cell(c.statement), " | ", c.source, " | ", table_cell(c.method),
                c.identity.empty() ? "" : text(" *Identity*: ", table_cell(c.identity)), " |\n");
  };
  const std::string header = "| id | claim | source | how it is judged |\n|---|---|---|---|\n";
  for (const auto& [prefix, family] : families) {
    md += text("\n## ", family, "\n\n", header);
    for (const auto& c : claim_registry().all())
      if (c.id.starts_with(prefix) && c.sweep.empty()) md += row(c);
  }
  md += text("\n## Training claims (judged from the training sweeps in `results/`)\n\n", header);
  for (const auto& c : claim_registry().all())
    if (!c.sweep.empty()) md += row(c);
  md += "\n## Left out\n\n| source | claim | why |\n|---|---|---|\n";
  for (const auto& l : left_out_claims()) md += text("| ", l.source, " | ", l.statement, " | ", l.reason, " |\n");
  return md;
}

std::string verdict_counts(const std::vector<CheckedClaim>& checked) {
  std::map<Verdict, int> by;
  int fragile = 0;
  for (const auto& c : checked) ++by[c.outcome.verdict], fragile += c.outcome.fragile();
  return text(checked.size(), " claims judged: ", by[Verdict::identity], " identities, ", by[Verdict::holds], " hold, ",
              by[Verdict::violated], " violated, ", by[Verdict::loose], " loose, ", by[Verdict::inexact], " inexact, ",
              by[Verdict::inconclusive], " inconclusive; ", fragile, " fragile");
}

std::string report_markdown(const std::vector<CheckedClaim>& checked, const nlohmann::json& run) {
  std::string md = "# attnlab verify report\n\n";
  md += text("**", verdict_counts(checked),
             ".** Fragile: the verdict changes when a threshold moves within the range "
             "its origin justifies (x1/2..x2 unless the threshold's origin says otherwise).\n\n");
  md += text("Seed ", run.value("seed", 0), ", ", run.value("quick", false) ? "quick" : "full", " mode, attnlab ",
             run.value("git_sha", std::string("?")), ".\n\n");
  md += "| claim | source | verdict | measured | claimed | 95% CI |\n|---|---|---|---|---|---|\n";
  for (const auto& c : checked) {
    const auto& o = c.outcome;
    const bool interval = std::isfinite(o.ci_lo) && std::isfinite(o.ci_hi);
    md += text("| `", c.claim->id, "` | ", c.claim->source, " | ", verdict_cell(o), " | ", cell(o.measured), " | ",
               cell(o.claimed), " | ", interval ? text("[", sig(o.ci_lo), ", ", sig(o.ci_hi), "]") : std::string(),
               " |\n");
  }
  md += "\n";
  md += kConventions;
  md += "\n" + verdict_rules();
  md += threshold_table(checked);
  md += kDerivations;
  md += "\n";
  md += "## Claims\n\n";
  for (const auto& c : checked) {
    md += text("### `", c.claim->id, "` — ", to_string(c.outcome.verdict), "\n\n");
    md += text("*Statement* (", c.claim->source, "): ", c.claim->statement, "\n\n");
    md += text("*Method*: ", c.claim->method, "\n\n");
    if (!c.claim->identity.empty()) md += text("*Identity*: ", c.claim->identity, "\n\n");
    md += text("*Result*: ", c.outcome.detail, "\n\n");
    if (c.outcome.fragile()) md += text("*Fragile*: ", fragility(c.outcome), "\n\n");
    if (!c.outcome.sensitivity.empty())
      md += text("*Sensitivity* (multipliers at which the verdict changes): ", flip_multipliers(c.outcome), "\n\n");
    md += closed_form_table(c.outcome.evidence);
    if (!c.outcome.markdown.empty()) md += c.outcome.markdown + "\n";
    for (const auto& f : c.outcome.figures) md += text("![", f.title, "](", f.name, ".png)\n\n");
  }
  md += "Evidence rows (every estimate behind every verdict) are in `verify.csv`.\n";
  return md;
}

}  // namespace attnlab::io
