#pragma once
// The claim registry: each claim of the catalogue is an id, its source, its statement, how it is
// checked, and two stages kept apart: `measure` gathers evidence (samples, searches, reads sweeps) and
// `judge` turns evidence into a verdict under named thresholds. Keeping them apart lets verify re-judge
// the same evidence with every threshold moved (the multipliers that change the verdict), and lets the falsify
// tests hand each rule evidence for the opposite outcome (a rule that cannot fail is no check).
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/mc/driver.hpp>
#include <attnlab/mc/figure.hpp>
#include <attnlab/mc/result.hpp>

#include <attnlab/core/types.hpp>

#include <algorithm>
#include <any>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace attnlab {

// identity: the statement follows from the construction (the claim's derivation says why); the toolkit
// confirms it numerically and reports it outside the count of holds.
enum class Verdict { holds, violated, loose, inexact, inconclusive, identity };
std::string to_string(Verdict v);

// One threshold of a verdict rule. Define each once, as a namespace-scope constant, next to the rules
// that read it; `origin` quotes the paper or gives the derivation (report.md prints it).
struct Threshold {
  std::string name;
  double value;
  std::string origin;
  // The multipliers of `value` its origin leaves open: a verdict that changes within them is fragile, one that changes
  // only beyond them (at a value the origin rules out, such as a share of 1 or an exponent that is the truth) is not.
  double justified_lo = 0.5, justified_hi = 2.0;
};

// The threshold values a judge reads: each threshold's own value, or a scaled one for a sensitivity
// re-judge. It records which thresholds were read, so the sensitivity analysis needs no declarations.
class Thresholds {
 public:
  double operator()(const Threshold& t) const;
  Thresholds scaled(const Threshold& t, double factor) const;
  const std::map<std::string, const Threshold*>& read() const { return read_; }

 private:
  std::map<std::string, double> factors_;
  mutable std::map<std::string, const Threshold*> read_;
};

// The SOFT claims' inputs, settable from the SOFT studies' flags (defaults are the claims' own).
struct SoftOptions {
  Index n = 1024;        // tokens (a 32 × 32 grid for pooling)
  Index d = 64;          // head dimension
  std::vector<Index> m;  // bottleneck lengths (empty: each claim's grid)
  std::vector<std::string> samplers{"random", "first", "pool"};
  std::vector<std::string> tokens{"gaussian", "clustered", "low_rank", "grid"};
  double tolerance = 1e-8;  // Newton–Schulz stopping residual
  int max_iterations = 200;
  MatrixD matrix;       // a user's square matrix in place of the bottlenecks (set_matrix)
  MatrixD file_tokens;  // a user's n × d tokens in place of every token set (set_tokens)

  void validate() const;  // throws std::invalid_argument naming the parameter
  // A square, finite, non-zero matrix (singular is fine) from rows of numbers, else std::invalid_argument naming
  // "matrix".
  void set_matrix(const std::vector<std::vector<double>>& rows);
  // Tokens from rows of numbers of equal length; sets n and d from them. Else std::invalid_argument naming
  // "tokens-file".
  void set_tokens(const std::vector<std::vector<double>>& rows);
};

struct ClaimContext {
  std::uint64_t seed = 1;
  bool quick = false;            // CI-sized grids and trial counts
  std::uint32_t trials = 0;      // 0: each claim's default
  ResultCache* cache = nullptr;  // finished configurations (resume and sharing between claims)
  std::function<ProgressFn(const std::string& label)> progress{};  // may be empty
  SoftOptions soft{};
  // The rows of a finished training sweep by its study name (k_sweep, activation_table, training_norms,
  // alpha_sweep; a preset model's as "vit-tiny/training_norms": training_rows::sweep_path), empty when there are none:
  // val_accuracy per point with extras seed and validation (images), alpha_sweep's h and alpha, training_norms' phi_fro
  // and jacobian_fro with step, layer and weight_std.
  std::function<std::vector<ResultRow>(const std::string& sweep)> training_rows{};
  // Rows of logits (the activation's argument) that the claims of logit_row_claims() judge in place of
  // their own inputs (--logits-file, to replay a saved worst case); empty: their own.
  std::vector<VectorD> logits{};
  bool control_variates = true;  // attention_norms estimates norms with exact moments as control variates where known

  std::uint32_t trials_or(std::uint32_t full, std::uint32_t quick_default) const;
  // run_attention_norms through the cache, with theory::squared_norm_exact's control variates unless switched off.
  std::vector<ResultRow> attention_norms(AttentionMcConfig config, const std::string& label) const;
  // What a claim's evidence is sized by: its full value, or with --quick its CI-sized one.
  template <class T>
  T sized(T full, T quick_value) const {
    return quick ? std::move(quick_value) : std::move(full);
  }
  ProgressFn progress_for(const std::string& label) const { return progress ? progress(label) : ProgressFn{}; }
};

// The matrices the SOFT pseudo-inverse claims and traces run on: the user's --matrix (labelled "matrix"), or else
// the bottleneck matrix (trial 0) of each token ensemble of ctx.soft for each m ≤ n of ctx.soft.m (`default_m` when
// none is given), labelled by the ensemble; with --tokens-file, of the user's tokens alone (labelled "tokens_file",
// landmarks sampled at random).
struct SoftMatrix {
  std::string label;
  Index m = 0;
  MatrixD A;
};
std::vector<SoftMatrix> soft_pinv_inputs(const ClaimContext& ctx, const std::vector<Index>& default_m);

// How far one threshold moves before the verdict changes: scanning multipliers outward from 1 (down to 1/16, up to 16,
// the threshold's justified ends among them), the first at which it does on each side and the verdict there.
struct Sensitivity {
  std::string threshold;
  double below = 0;  // the multiplier < 1 (0: none down to 1/16)
  Verdict verdict_below = Verdict::inconclusive;
  double above = std::numeric_limits<double>::infinity();  // the multiplier > 1 (infinite: none up to 16)
  Verdict verdict_above = Verdict::inconclusive;
  bool fragile = false;  // a change within the threshold's justified multipliers
};

struct ClaimOutcome {
  Verdict verdict = Verdict::inconclusive;
  // NaN where the claim has no such number (written as an empty field).
  double measured = std::numeric_limits<double>::quiet_NaN(), claimed = std::numeric_limits<double>::quiet_NaN();
  double ci_lo = std::numeric_limits<double>::quiet_NaN(), ci_hi = std::numeric_limits<double>::quiet_NaN();
  std::string detail{};               // one line: what was measured and why this verdict
  std::vector<ResultRow> evidence{};  // rows for verify.csv
  std::vector<Figure> figures{};
  std::string markdown{};  // optional section for report.md (tables)
  // Extra outputs by file name, e.g. "worst_inputs/<id>.csv": the worst input found, replayable by a flag.
  std::vector<std::pair<std::string, std::string>> files{};
  std::vector<const Threshold*> thresholds{};  // those the rule read (filled by Claim::check)
  std::vector<Sensitivity> sensitivity{};      // per threshold read, filled by Claim::check
  bool fragile() const {
    return std::any_of(sensitivity.begin(), sensitivity.end(), [](const Sensitivity& s) { return s.fragile; });
  }
};

// A falsify case calibrated on one threshold: `place(e, x)` moves one case of supported evidence onto the edge the
// threshold drawn at x would be (a bound's ratio at 1 + x, an exponent interval's end at a + x), leaving the others
// where they are. The falsify tests place it a margin either side of the threshold's value and expect `below` and
// `above`: a rule that reads the threshold ×4 off, reads another, or reads only some cases fails there.
template <class Evidence>
struct Crossing {
  const Threshold* threshold;
  std::string what;  // the bound or case it moves ("the Jacobian bound", "the last curve's exponent")
  Verdict below, above;
  std::function<void(Evidence&, double)> place;
};
inline constexpr double kCrossingMargin = 0.01;  // relative: far above the judges' rounding, far below a ×4 error

// The typed stages of one claim; make_claim erases the evidence type.
template <class Evidence>
struct ClaimRules {
  std::function<Evidence(const ClaimContext&)> measure;
  std::function<ClaimOutcome(const Evidence&, const Thresholds&)> judge;
  // Evidence changed into what the claim's failure would look like (the judge must say violated or
  // inexact) and into what its success would look like (holds, loose or identity). The falsify tests
  // apply both to the measured evidence; a claim without `contradict` must be an identity.
  std::function<void(Evidence&)> contradict{}, support{};
  std::vector<Crossing<Evidence>> crossings{};  // one per threshold and bound the rule reads (the falsify tests)
};

struct Claim {
  std::string id, source, statement, method;
  std::string sweep{};  // the training sweep whose rows it judges (training_rows); empty when it samples its own data
  std::string identity{};      // non-empty: why the statement cannot fail (one-line derivation)
  bool judges_logits = false;  // judges rows of logits, so ClaimContext::logits (--logits-file) can replace them
  std::function<std::any(const ClaimContext&)> measure;
  std::function<ClaimOutcome(const std::any&, const Thresholds&)> judge;
  std::function<std::any(const std::any&)> contradict, support;
  std::vector<Crossing<std::any>> crossings;  // placed on the supported evidence

  // measure, judge with the thresholds' own values, then re-judge with each threshold read ×½ and ×2.
  ClaimOutcome check(const ClaimContext& ctx) const;
  // The verdict of `judge`, with identity claims that hold reported as identities.
  ClaimOutcome judged(const std::any& evidence, const Thresholds& thresholds) const;
};

struct ClaimText {
  std::string id, source, statement, method, sweep{}, identity{};
  bool judges_logits = false;
};

template <class Evidence>
Claim make_claim(ClaimText text, ClaimRules<Evidence> rules) {
  Claim c{std::move(text.id),
          std::move(text.source),
          std::move(text.statement),
          std::move(text.method),
          std::move(text.sweep),
          std::move(text.identity),
          text.judges_logits,
          {},
          {},
          {},
          {},
          {}};
  c.measure = [m = std::move(rules.measure)](const ClaimContext& ctx) { return std::any(m(ctx)); };
  c.judge = [j = std::move(rules.judge)](const std::any& e, const Thresholds& t) {
    return j(std::any_cast<const Evidence&>(e), t);
  };
  const auto transform = [](std::function<void(Evidence&)> f) -> std::function<std::any(const std::any&)> {
    if (!f) return {};
    return [f = std::move(f)](const std::any& e) {
      Evidence changed = std::any_cast<const Evidence&>(e);
      f(changed);
      return std::any(std::move(changed));
    };
  };
  c.contradict = transform(std::move(rules.contradict));
  c.support = transform(std::move(rules.support));
  for (auto& crossing : rules.crossings)
    c.crossings.push_back(
        {crossing.threshold, std::move(crossing.what), crossing.below, crossing.above,
         [place = std::move(crossing.place)](std::any& e, double x) { place(std::any_cast<Evidence&>(e), x); }});
  return c;
}

class ClaimRegistry {
 public:
  void add(Claim claim);  // throws on a duplicate id, or a check that is neither falsifiable nor an identity
  const std::vector<Claim>& all() const { return claims_; }
  const Claim& find(const std::string& id) const;  // throws std::invalid_argument naming the id

 private:
  std::vector<Claim> claims_;
};

// Every registered claim, in catalogue order.
const ClaimRegistry& claim_registry();
// The ids of the claims that judge rows of logits (take --logits-file).
std::vector<std::string> logit_row_claims();

// Each family adds its claims here; a new claim is one add() in its family's file.
void register_poly_claims(ClaimRegistry& registry);
void register_relu_claims(ClaimRegistry& registry);
void register_periodic_claims(ClaimRegistry& registry);
void register_soft_claims(ClaimRegistry& registry);
void register_training_claims(ClaimRegistry& registry);

}  // namespace attnlab
