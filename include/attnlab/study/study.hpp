#pragma once
// The common front end of every study binary: flags (and a TOML config with the same keys),
// validation before any output, the output folder contract, checkpoints and metadata.
#include <attnlab/attention/activation.hpp>
#include <attnlab/core/ensemble.hpp>
#include <attnlab/io/checkpoint.hpp>
#include <attnlab/io/progress.hpp>
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/mc/figure.hpp>
#include <attnlab/mc/result.hpp>
#include <attnlab/theory/claims.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace attnlab::study {

struct StudyOptions {
  std::filesystem::path out;  // empty: runs/<study>-<hash of the arguments>
  std::uint64_t seed = 1;
  std::int64_t trials = 0;  // 0: the study's default
  int threads = 0;          // 0: every hardware thread
  bool quick = false;
  std::string config;
  Backend backend = Backend::cpu;
  // Ensemble and activation grids (studies that sample X, Q, K).
  std::vector<Index> N, D, d;
  std::vector<int> p;
  std::vector<std::string> k;
  std::vector<double> alpha{1.0};  // the N^-alpha of h(S)/N^alpha activations
  std::vector<double> sigma_x{1.0}, sigma_t{1.0};
  std::vector<std::string> activations;
  std::vector<std::string> params;  // NAME=NUMBER: the formulas' parameters
  std::string convention = "inside";
  Precision precision = Precision::float64;
  bool plain_means = false;              // no control variates from exact moments (Monte-Carlo studies)
  std::vector<double> reference_slopes;  // dashed N^s lines on the sweep's figures
  // Filled by run_study: the command line as typed, and the flags it set (e.g. "--N").
  std::string command;
  std::vector<std::string> given;
  bool was_given(const std::string& flag) const;

  // Every (N, D, d) of the grid as an ensemble.
  std::vector<EnsembleSpec> ensembles() const;
  // Every activation of the grid: each poly activation × p × k; softmax once.
  std::vector<ActivationSpec> activation_specs() const;
};

struct StudyContext {
  ResultCache* cache;
  io::ProgressBar* progress;
  std::vector<std::string> warnings;
};

struct StudyOutput {
  std::vector<ResultRow> rows{};
  std::vector<Figure> figures{};
  std::vector<std::pair<std::string, std::string>> files{};  // extra outputs: name, content
  nlohmann::json config = nlohmann::json::object();          // study-specific settings, merged into <study>.json
  std::string summary{};  // the answer in a few lines (a table, the verdict counts): stdout, once everything is written
};

struct StudyDefinition {
  std::string name;
  std::string description;
  bool ensemble_flags = true;  // --N --D --d --p --k --sigma-x --sigma-t --activation ...
  bool accelerated = false;    // takes --backend: runs on thrust and cuda too
  bool monte_carlo = true;     // takes --trials
  StudyOptions defaults{};
  StudyOptions quick_defaults{};  // the defaults with --quick (the one quick mechanism: a flag given overrides them)
  // Binds the study-specific flags to its state, reset to its defaults or with `quick` to its quick defaults.
  std::function<void(CLI::App&, bool quick)> add_flags{};
  std::function<void(const StudyOptions&)> validate{};  // throws std::invalid_argument
  std::function<StudyOutput(const StudyOptions&, StudyContext&)> run{};
};

// --activation (lists split at commas outside parentheses, repeatable) and, given `params`, --param NAME=NUMBER.
void add_activation_flags(CLI::App& app, std::vector<std::string>& activations, const std::string& help,
                          std::vector<std::string>* params = nullptr);

// The claim context of a run: its seed, --quick, --trials, checkpoint cache and progress bar.
ClaimContext claim_context(const StudyOptions& options, StudyContext& ctx);

// An ensemble grid (N, D, d, sigmas) × activations to sweep: its defaults, the quantities kept and those fitted over N.
struct GridSweep {
  StudyOptions defaults{};
  StudyOptions quick_defaults{};  // the defaults with --quick
  std::vector<std::string> quantities{};
  std::vector<std::string> fitted{};
};

// POLY's grid: N = 16..1024, D = d = 64, x^p/k for p = 1..3 and k = 1, sqrt(N), and softmax; with --quick
// N = 8..64, D = d = 16.
GridSweep poly_grid(std::vector<std::string> quantities, std::vector<std::string> fitted);

// A study that sweeps `grid`: the estimates of its quantities at each point, a power law fitted over N to each
// curve of its fitted ones, a figure per fitted quantity (with --reference-slope lines), and the table of N, mean,
// interval and exponent as its summary.
StudyDefinition ensemble_sweep_study(std::string name, std::string description, GridSweep grid);

// What a claims study checks and which inputs it takes besides --claims.
struct ClaimsStudySpec {
  std::string name;
  std::string description;
  std::vector<std::string> patterns{};  // claim ids, or prefixes ending in '.'; empty: every claim
  bool soft_flags = false;   // --n --d --m --sampler --tokens --tolerance --max-iterations --matrix --tokens-file
  bool logits_flag = false;  // --logits-file: rows of logits for the claims of logit_row_claims()
  // The grid the study explores when a grid flag (--N, --activation, ...) is given: a sweep, no verdicts.
  std::optional<GridSweep> grid{};
  // With --matrix or --tokens-file and no --claims, a question about the user's input: no verdicts, `extend` writes.
  bool exploratory_on_user_input = false;
  // The study's own outputs, added once the claims are checked, from the same claim context.
  std::function<void(const ClaimContext&, StudyOutput&)> extend{};
  // Trains a training sweep by name and returns its rows (--retrain); empty: the training claims read their sweeps'
  // CSVs from --training-results only.
  std::function<std::vector<ResultRow>(const std::string& sweep, const StudyOptions&, StudyContext&)> retrain{};
};

// A study that checks registered claims: those matching the spec's patterns, or the ones named by --claims.
// Writes, besides <name>.csv of the evidence, claims.csv, report.md and each claim's figures; <name>.png draws
// measured/claimed per claim, one row each. The training claims read <--training-results>/<sweep>.csv (default
// results/, the committed full runs), or with --retrain train their sweeps (quick or full) into <out>.
// An exploratory run (a grid flag, or the user's --matrix or --tokens-file, without --claims) checks no claim: no
// verdicts, claims.csv or report.md, and <name>.json records "exploratory": true.
StudyDefinition claims_study(ClaimsStudySpec spec);

// Parses, validates, runs and writes <out>/<name>.csv, .json, .png (+ extra files).
// Returns the process exit code: 0, 2 for bad input (one line on stderr), 1 for failures.
int run_study(int argc, char** argv, const StudyDefinition& study);

// For a caller in the same process (the Python module): the error line instead of stderr, and the progress told to
// a listener instead of drawn.
struct StudyRunHooks {
  std::string error{};  // set on a non-zero exit: the line the command line prints after "<study>: error: "
  io::ProgressListener progress{};
  bool quiet = false;     // no progress and no closing lines on stderr (warnings are still written)
  std::string summary{};  // set on success: the summary the command line prints on stdout, left to the caller
};
// `args` as argv without the program's name.
int run_study(const StudyDefinition& study, std::vector<std::string> args, StudyRunHooks& hooks);

}  // namespace attnlab::study
