#include "grid_sweep.hpp"

#include <attnlab/core/csv_number.hpp>
#include <attnlab/core/distributed.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/io/files.hpp>
#include <attnlab/io/metadata.hpp>
#include <attnlab/io/report.hpp>
#include <attnlab/io/table.hpp>
#include <attnlab/theory/claims.hpp>
#include <attnlab/theory/extreme_rows.hpp>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>

namespace attnlab::study {

StudyDefinition claims_study(ClaimsStudySpec spec) {
  StudyDefinition study{.name = spec.name, .description = spec.description, .ensemble_flags = spec.grid.has_value()};
  if (spec.grid) study.defaults = spec.grid->defaults, study.quick_defaults = spec.grid->quick_defaults;
  const auto patterns = spec.patterns;
  const bool soft_flags = spec.soft_flags, logits_flag = spec.logits_flag;
  auto ids = std::make_shared<std::vector<std::string>>();
  auto soft = std::make_shared<SoftOptions>();
  // A prefix ("relu.") takes the family's sampling claims; the training claims belong to verify and their sweeps.
  const auto matches = [patterns](const std::string& id) {
    const bool trained = !claim_registry().find(id).sweep.empty();
    return patterns.empty() || std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) {
             return p == id || (p.ends_with('.') && id.starts_with(p) && !trained);
           });
  };
  struct TrainingSource {
    std::filesystem::path results = "results";
    bool retrain = false;
  };
  auto training = std::make_shared<TrainingSource>();
  const bool training_flags = patterns.empty();
  struct LogitsSource {
    std::string file;
    std::vector<VectorD> rows;
  };
  auto logits = std::make_shared<LogitsSource>();
  struct SoftFiles {
    std::string matrix, tokens;
  };
  auto soft_files = std::make_shared<SoftFiles>();
  const auto takes_logits = [](const std::string& id) { return claim_registry().find(id).judges_logits; };
  const bool retrains = static_cast<bool>(spec.retrain);
  study.add_flags = [ids, soft, soft_files, soft_flags, training, training_flags, retrains, logits, logits_flag,
                     matches](CLI::App& app, bool) {
    app.add_option("--claims", *ids, "claim ids to check (default: every claim of this study)")->delimiter(',');
    if (logits_flag) {
      std::string row_claims;
      for (const auto& id : logit_row_claims())
        if (matches(id)) row_claims += (row_claims.empty() ? "" : ", ") + id;
      app.add_option("--logits-file", logits->file,
                     "rows of logits as CSV, one row of at least 2 entries per line, judged in place of the claims' "
                     "own inputs (replays a worst case from the logits column of the evidence); only these claims "
                     "take it, and they are the default with it: " +
                         row_claims);
    }
    if (training_flags)
      app.add_option("--training-results", training->results,
                     "folder of the training sweeps' CSVs the training claims read (the committed full runs)")
          ->capture_default_str();
    if (retrains)
      app.add_flag("--retrain", training->retrain,
                   "train the sweeps (quick budget with --quick) into --out instead of reading --training-results");
    if (!soft_flags) return;
    app.add_option("--n", soft->n, "tokens (a square number for grid tokens)")->capture_default_str();
    app.add_option("--d", soft->d, "head dimension")->capture_default_str();
    app.add_option("--m", soft->m, "bottleneck lengths (default: each claim's grid)")->delimiter(',');
    app.add_option("--sampler", soft->samplers, "bottleneck samplers: random, first, pool")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("--tokens", soft->tokens, "token ensembles: gaussian, clustered, low_rank, grid")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("--tolerance", soft->tolerance, "Newton-Schulz stopping residual (>= 0)")->capture_default_str();
    app.add_option("--max-iterations", soft->max_iterations, "Newton-Schulz iteration cap")->capture_default_str();
    app.add_option("--matrix", soft_files->matrix,
                   "a square matrix as CSV, pseudo-inverted in place of the generated bottleneck matrices");
    app.add_option("--tokens-file", soft_files->tokens,
                   "tokens as CSV, one per row (n rows of d numbers; they set --n and --d), in place of every token "
                   "ensemble and structured extreme of the claims that draw tokens (landmarks sampled at random); "
                   "evidence rows label them tokens_file");
  };
  study.validate = [ids, soft, soft_files, matches, logits, takes_logits,
                    exploring = spec.grid.has_value()](const StudyOptions& o) {
    if (exploring && grid_flag_given(o) && !ids->empty())
      throw std::invalid_argument(
          "claims: each claim is checked on its own grid; grid flags (--N, --activation, ...) "
          "explore instead, without --claims");
    for (const auto& id : *ids)
      if (!matches(claim_registry().find(id).id))
        throw std::invalid_argument(text("claims: '", id, "' is not checked by this study"));
    if (!soft_files->matrix.empty())
      soft->set_matrix(parse_number_rows(io::read_numbers_file(soft_files->matrix, "matrix"), "matrix"));
    const Index n_flag = soft->n, d_flag = soft->d;
    if (!soft_files->tokens.empty()) {
      if (!soft_files->matrix.empty())
        throw std::invalid_argument(
            "tokens-file: cannot be combined with --matrix (each replaces the generated inputs)");
      soft->set_tokens(parse_number_rows(io::read_numbers_file(soft_files->tokens, "tokens-file"), "tokens-file"));
    }
    const auto agrees_with_file = [&](const std::string& flag, Index given, Index read, const std::string& what) {
      if (!soft_files->tokens.empty() && o.was_given("--" + flag) && given != read)
        throw std::invalid_argument(text(flag, ": --", flag, " ", given, " disagrees with the ", read, " ", what,
                                         " of tokens-file '", soft_files->tokens, "' (leave --", flag,
                                         " out: the file sets it)"));
    };
    agrees_with_file("n", n_flag, soft->n, "tokens");
    agrees_with_file("d", d_flag, soft->d, "entries per token");
    soft->validate();  // after the tokens file, which sets n
    if (logits->file.empty()) return;
    logits->rows = parse_logits_rows(io::read_numbers_file(logits->file, "logits-file"), "logits-file", 2);
    for (const auto& id : *ids)
      if (!takes_logits(id))
        throw std::invalid_argument(text("logits-file: claim '", id, "' does not judge rows of logits"));
  };
  study.run = [ids, soft, soft_files, matches, training, logits, spec](const StudyOptions& o, StudyContext& ctx) {
    const auto& name = spec.name;
    if (spec.grid && grid_flag_given(o)) {
      if (distributed::root())
        std::fprintf(stderr, "%s: exploratory run on the grid given: no claims checked, no verdicts\n", name.c_str());
      return sweep_output(name, *spec.grid, o, ctx);
    }
    auto claims = claim_context(o, ctx);
    claims.soft = *soft;
    claims.logits = logits->rows;
    std::map<std::string, std::vector<ResultRow>> sweeps;  // each read or trained once
    claims.training_rows = [&](const std::string& sweep) {
      if (const auto it = sweeps.find(sweep); it != sweeps.end()) return it->second;
      const auto csv = training->results / (sweep + ".csv");
      auto& rows = sweeps[sweep];
      if (training->retrain) rows = spec.retrain(sweep, o, ctx);
      else if (std::filesystem::exists(csv)) rows = io::rows_from_csv(io::read_file(csv), csv.string());
      return rows;
    };
    // A question about the user's own input, not about the papers: no claim is checked unless --claims names it.
    if (spec.exploratory_on_user_input && ids->empty() &&
        (!soft_files->matrix.empty() || !soft_files->tokens.empty())) {
      StudyOutput out;
      out.config["exploratory"] = true;
      if (distributed::root())
        std::fprintf(
            stderr, "%s: exploratory run on %s: no claims checked, no verdicts (--claims id judges a claim on it)\n",
            name.c_str(), soft_files->matrix.empty() ? soft_files->tokens.c_str() : soft_files->matrix.c_str());
      if (spec.extend) spec.extend(claims, out);
      return out;
    }
    std::vector<const Claim*> chosen;
    for (const auto& claim : claim_registry().all())
      if (ids->empty() ? matches(claim.id) && (logits->rows.empty() || claim.judges_logits)
                       : std::find(ids->begin(), ids->end(), claim.id) != ids->end())
        chosen.push_back(&claim);
    std::vector<io::CheckedClaim> checked;
    for (const auto* claim : chosen) {
      ctx.progress->stage(text("claim ", checked.size() + 1, "/", chosen.size(), " ", claim->id));
      checked.push_back({claim, claim->check(claims)});
    }
    StudyOutput out;
    for (const auto& c : checked) {
      for (auto r : c.outcome.evidence) {
        r.study = name;
        r.extra.insert(r.extra.begin(), {"claim_id", c.claim->id});
        out.rows.push_back(std::move(r));
      }
      out.figures.insert(out.figures.end(), c.outcome.figures.begin(), c.outcome.figures.end());
      out.files.insert(out.files.end(), c.outcome.files.begin(), c.outcome.files.end());
    }
    if (!checked.empty()) out.figures.insert(out.figures.begin(), io::verdict_figure(checked, name));  // no empty box
    if (training->retrain)
      for (const auto& [sweep, rows] : sweeps) out.files.push_back({sweep + ".csv", io::to_csv(rows)});
    out.files.push_back({"claims.csv", io::claims_csv(checked)});
    const nlohmann::json run{{"seed", o.seed}, {"quick", o.quick}, {"git_sha", io::git_description()}};
    out.files.push_back({"report.md", io::report_markdown(checked, run)});
    if (spec.extend) spec.extend(claims, out);
    out.summary += text(name, ": ", io::verdict_counts(checked), "; report: ", (o.out / "report.md").string(), "\n");
    return out;
  };
  return study;
}

}  // namespace attnlab::study
