#include <attnlab/core/text.hpp>
#include <attnlab/io/report.hpp>
#include <attnlab/io/table.hpp>
#include <attnlab/theory/verdicts.hpp>

#include <map>

namespace attnlab::io {
namespace {

std::string g(double v) { return text(v); }

const char* kConventions = R"md(## Conventions

- X ∈ R^{N×D}, Q, K ∈ R^{D×d} with i.i.d. entries N(0, σx²), N(0, σt²): σ is the standard deviation.
- M = XQKᵀXᵀ. `inside` convention (POLY Thm 4.2): ϕ = (M/√d)^p / k. `outside` (Thm 4.3): ϕ = M^p/(√d k).
  `none` (the proofs' closed forms): ϕ = M^p. Powers are elementwise. Softmax acts on the rows of M/√d.
- ∂ϕ/∂Q is the N×N×D×d Jacobian; its norm is the Frobenius norm of that tensor, computed by the exact
  contraction ‖∂ϕ/∂Q‖² = Σ_ij ϕ'(M_ij)² ‖x_i‖² ‖Kᵀx_j‖² (elementwise ϕ) or its row-softmax analogue, tested
  against the explicit Jacobian. ∇softmax(A) is the N²×N² Jacobian of the row-wise softmax.
- Monte-Carlo: trial t of a configuration draws X, Q, K from Philox4x32-10 streams keyed by
  (seed, N, D, d, t); σ scales standard normals, so configurations differing only in σ share noise.
  Means carry 95% Student-t intervals; trials with Inf/NaN are counted and never averaged.
- "O(N^a)": weighted log-log fit of the mean over N (delta-method weights), exponent CI from Student t
  with n − 2 dof using the larger of model and residual errors.
- The independent-factor model of POLY's proof (eq 41, 43) is read as S = AB with A = XQ, B = KᵀXᵀ
  independent, entries N(0, Dσx²σt²) and inner dimension d (the paper does not say; this is a parameter
  of the comparison, not of the toolkit).
)md";

std::string verdict_rules() {
  const auto& t = tolerances;
  return text("## Verdict rules\n\n",
              "- Growth claims O(N^a): `holds` if the fitted exponent's 95% CI comes within ", t.exponent,
              " of a; `violated` if it lies above a + ", t.exponent, "; `loose` if below a − ", t.exponent,
              "; `inconclusive` if the CI is wider than ", t.exponent_ci_max, " or any trial was non-finite.\n",
              "- Deterministic bounds: the largest ratio measured/bound over random inputs at many scales and an "
              "adversarial search; `violated` above 1, `loose` below ", t.bound_loose,
              " (the measured column is then the tight constant), else `holds`.\n",
              "- Closed forms: `inexact` when the Monte-Carlo 95% CI excludes the paper's value and the relative "
              "error exceeds ", t.closed_form, "; the exact (Wick) expectation is shown beside it.\n\n");
}

}  // namespace

std::string claims_csv(const std::vector<CheckedClaim>& checked) {
  std::string out = "claim_id,source,verdict,measured,claimed,ci_lo,ci_hi,detail\n";
  for (const auto& c : checked) {
    const auto& o = c.outcome;
    out += text(csv_field(c.claim->id), ',', csv_field(c.claim->source), ',', to_string(o.verdict), ',', g(o.measured),
                ',', g(o.claimed), ',', g(o.ci_lo), ',', g(o.ci_hi), ',', csv_field(o.detail), '\n');
  }
  return out;
}

std::string report_markdown(const std::vector<CheckedClaim>& checked, const nlohmann::json& run) {
  std::map<std::string, int> counts;
  for (const auto& c : checked) ++counts[to_string(c.outcome.verdict)];
  std::string md = "# attnlab verify report\n\n";
  md += text("Seed ", run.value("seed", 0), ", ", run.value("quick", false) ? "quick" : "full",
             " mode, attnlab ", run.value("git_sha", std::string("?")), ". Verdicts:");
  for (const auto& [v, n] : counts) md += text(" ", n, " ", v, ";");
  md += "\n\n| claim | source | verdict | measured | claimed | 95% CI |\n|---|---|---|---|---|---|\n";
  for (const auto& c : checked) {
    const auto& o = c.outcome;
    md += text("| `", c.claim->id, "` | ", c.claim->source, " | **", to_string(o.verdict), "** | ", g(o.measured),
               " | ", g(o.claimed), " | [", g(o.ci_lo), ", ", g(o.ci_hi), "] |\n");
  }
  md += "\n";
  md += kConventions;
  md += "\n" + verdict_rules();
  md += "## Claims\n\n";
  for (const auto& c : checked) {
    md += text("### `", c.claim->id, "` — ", to_string(c.outcome.verdict), "\n\n");
    md += text("*Statement* (", c.claim->source, "): ", c.claim->statement, "\n\n");
    md += text("*Method*: ", c.claim->method, "\n\n");
    md += text("*Result*: ", c.outcome.detail, "\n\n");
    for (const auto& f : c.outcome.figures) md += text("![", f.title, "](", f.name, ".png)\n\n");
  }
  md += "Evidence rows (every estimate behind every verdict) are in `verify.csv`.\n";
  return md;
}

}  // namespace attnlab::io
