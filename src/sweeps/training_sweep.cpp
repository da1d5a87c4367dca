#include "sweep_catalogue.hpp"
#include "sweep_points.hpp"

#include <attnlab/core/text.hpp>
#include <attnlab/sweeps/training_sweep.hpp>
#include <attnlab/theory/claims.hpp>
#include <attnlab/theory/training_rows.hpp>

#include <algorithm>

namespace attnlab::sweeps {
namespace {

struct Judged {
  std::string id;
  ClaimOutcome outcome;
};

// Every registered claim that reads the sweep `name` (a preset model's as "vit-tiny/training_norms", a recall task's as
// "recall-query/k_sweep"), judged from its rows.
std::vector<Judged> judge(const std::string& name, const std::vector<ResultRow>& rows, const study::StudyOptions& o,
                          study::StudyContext& ctx) {
  auto claims = study::claim_context(o, ctx);
  claims.training_rows = [&](const std::string& wanted) { return wanted == name ? rows : std::vector<ResultRow>{}; };
  std::vector<Judged> judged;
  for (const auto& claim : claim_registry().all())
    if (claim.sweep == name) judged.push_back({claim.id, claim.check(claims)});
  return judged;
}

// Every point's run but what the grid varies: the initialisation is the grid's "init".
nlohmann::json budget_json(const Grid& g) {
  auto budget = to_json(g.run);
  budget["model"].erase("init");
  if (!g.depths.empty()) budget["model"].erase("depth");  // the grid's
  return budget;
}

std::string summary_markdown(const Sweep& sweep, const study::StudyOptions& o, const Grid& g, const SweepRows& swept,
                             const std::vector<Judged>& judged) {
  std::string md = text("# ", sweep.name, "\n\n", sweep.description, ".\n\nProduced by `", o.command, "`",
                        o.quick ? " (quick budget)" : "", ".\n\nRun per point: ", budget_json(g).dump(), "; Q/K init ",
                        nlohmann::json(g.inits).dump(), "; ", g.seeds, " seed(s) from ", o.seed, ".\n",
                        swept.left_out ? text("\n**Partial:** ", swept.left_out, " of the ", swept.points,
                                              " points are not finished yet and are left out (--finished-only).\n")
                                       : "");
  for (const auto& j : judged) {
    md += text("\n## ", j.id, ": ", to_string(j.outcome.verdict), "\n\n", j.outcome.detail, "\n\n", j.outcome.markdown);
    for (const auto& f : j.outcome.figures) md += text("\n![", f.title, "](", f.name, ".png)\n");
  }
  return md;
}

study::StudyOutput sweep_output(const Sweep& sweep, const study::StudyOptions& o, const Grid& g,
                                study::StudyContext& ctx) {
  study::StudyOutput out;
  auto swept = run_sweep(sweep, g, o.seed, o.out, *ctx.progress);
  out.rows = std::move(swept.rows);
  const auto task = task_of(g.run);
  const auto name = training_rows::sweep_path(preset_of(g.run.config.model),
                                              task.empty() ? sweep.name : task + "/" + sweep.name);
  const auto judged = judge(name, out.rows, o, ctx);
  nlohmann::json verdicts = nlohmann::json::object();
  for (const auto& j : judged) {
    for (auto r : j.outcome.evidence) {
      r.study = sweep.name;
      r.extra.insert(r.extra.begin(), {"claim_id", j.id});
      out.rows.push_back(std::move(r));
    }
    out.figures.insert(out.figures.end(), j.outcome.figures.begin(), j.outcome.figures.end());
    verdicts[j.id] = {{"verdict", to_string(j.outcome.verdict)}, {"detail", j.outcome.detail}};
  }
  out.files.push_back({sweep.name + ".md", summary_markdown(sweep, o, g, swept, judged)});
  if (judged.empty())  // a preset model's sweep that no claim of its own reads (alpha_sweep --model vit-tiny)
    out.summary += text(sweep.name, ": no claim reads ", name, ": rows and figures only, no verdicts\n");
  out.config = {{"budget", budget_json(g)},
                {"seeds", g.seeds},
                {"N", g.N},
                {"init", g.inits},
                {"refine_seeds", g.refine_seeds},
                {"points", swept.points},
                {"points_left_out", swept.left_out},
                {"verdicts", verdicts},
                {"command", o.command},
                {"data_dir", g.run.data.dir.string()}};
  for (const auto& k : g.k) out.config["k"].push_back(k.str());
  if (!g.powers.empty()) out.config["p"] = g.powers;
  if (!g.activations.empty()) out.config["activations"] = g.activations;
  if (!g.controls.empty()) out.config["controls"] = g.controls;
  if (!g.h.empty()) out.config["h"] = g.h, out.config["alpha"] = g.alpha;
  if (!g.depths.empty()) out.config["depths"] = g.depths;
  return out;
}

void validate_grid(const Sweep& sweep, const Grid& g) {
  if (g.seeds < 1) throw std::invalid_argument(text("seeds must be at least 1 (got ", g.seeds, ")"));
  if (g.refine_seeds < 0) throw std::invalid_argument(text("refine-seeds must be >= 0 (got ", g.refine_seeds, ")"));
  if (g.N.empty()) throw std::invalid_argument("N must list at least one sequence length");
  for (Index depth : g.depths)
    if (depth < 1) throw std::invalid_argument(text("depths must be at least 1 (got ", depth, ")"));
  const auto& data = g.run.data;
  for (Index n : g.N) {
    train::VitConfig model;
    fit_sequence_length(model, n, data);
  }
  if (data.validation < 1)
    throw std::invalid_argument(text("validation must be at least 1 (got ", data.validation, ")"));
  if (data.train_limit < 0) throw std::invalid_argument(text("train-limit must be >= 0 (got ", data.train_limit, ")"));
  const Index images = training_examples(data);
  if (data.name == "recall" && (g.run.config.augment.random_crop || g.run.config.augment.flip))
    throw std::invalid_argument("crop and flip move pixels: --data recall's tokens take neither");
  if (data.validation >= images)
    throw std::invalid_argument(text("validation (", data.validation, ") must be smaller than the ", images,
                                     " training images (train-limit ", data.train_limit, ")"));
  if (g.run.config.batch > images - data.validation)
    throw std::invalid_argument(text("batch (", g.run.config.batch, ") exceeds the ", images - data.validation,
                                     " images left for training beside the validation set"));
  std::vector<std::string> keys;
  for (const auto& p : grid_points(sweep, g, 1)) {
    p.config.validate();
    keys.push_back(point_key(sweep, g, p));
  }
  std::sort(keys.begin(), keys.end());
  if (std::adjacent_find(keys.begin(), keys.end()) != keys.end())
    throw std::invalid_argument(
        "the grid lists a configuration twice (a repeated N, k, p, activation, h, alpha, depth, init or control)");
  if (g.finished_only) return;  // reads points, never the images
  auto files = data_files(data);
  if (data.name == "fashion-mnist") files.resize(2);  // the training split only
  if (data.name == "cifar10") files.pop_back();
  require_data_files(data.dir, files);
}

}  // namespace

const std::vector<std::string>& training_sweep_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> n;
    for (const auto& s : sweeps()) n.push_back(s.name);
    return n;
  }();
  return names;
}

study::StudyDefinition training_sweep_study(const std::string& name) {
  const Sweep& sweep = find_sweep(name);
  auto grid = std::make_shared<Grid>(sweep.full);
  study::StudyDefinition s;
  s.name = sweep.name;
  s.description = sweep.description;
  s.ensemble_flags = false;
  s.monte_carlo = false;
  s.add_flags = [&sweep, grid](CLI::App& app, bool quick) {
    auto& g = *grid;
    g = quick ? sweep.quick : sweep.full;
    const auto has = [&](const char* f) {
      return std::find(sweep.grid_flags.begin(), sweep.grid_flags.end(), f) != sweep.grid_flags.end();
    };
    app.add_option(
           "--N", g.N,
           "sequence lengths (patches of the 32x32 image: powers of two, 8 = 8x16 patches; --data recall: tokens)")
        ->delimiter(',')
        ->capture_default_str();
    if (has("k")) {
      std::string defaults;
      for (const auto& k : g.k) defaults += (defaults.empty() ? "" : ",") + k.str();
      app.add_option_function<std::vector<std::string>>(
             "--k",
             [&g](const std::vector<std::string>& ks) {
               g.k.clear();
               for (const auto& k : ks) g.k.push_back(KScale::parse(k));
             },
             "scales k of x^p/k")
          ->delimiter(',')
          ->default_str(defaults);
    }
    if (has("p"))
      app.add_option("--p", g.powers, "powers p of x^p/k, each a grid axis (3: POLY's x^3; 1: REPOLY's x)")
          ->delimiter(',')
          ->check(CLI::Range(1, 12))
          ->capture_default_str();
    if (has("activation"))
      study::add_activation_flags(app, g.activations,
                                  "softmax, uniform, off, x^p, x^p/K, x^p/sqrtN, x^p*learned, h/L^a");
    if (has("h")) app.add_option("--h", g.h, "functions h of h(S)/L^alpha")->delimiter(',')->capture_default_str();
    if (has("alpha")) app.add_option("--alpha", g.alpha, "exponents alpha")->delimiter(',')->capture_default_str();
    if (has("depths"))
      app.add_option("--depths", g.depths, "model depths (blocks), each a grid axis in place of --depth")
          ->delimiter(',')
          ->capture_default_str();
    app.add_option("--controls", g.controls,
                   "activations trained beside the grid at every N and seed, rows marked control (softmax; uniform and "
                   "off ignore content): the baselines the grid is read against")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option(
           "--init", g.inits,
           "initial Q and K weights, each a grid axis: timm (N(0, 0.02^2)), xavier (variance 1/D) or unit (logits of unit variance)")
        ->delimiter(',')
        ->check(CLI::IsMember({"timm", "xavier", "unit"}))
        ->capture_default_str();
    app.add_option("--seeds", g.seeds, "training seeds per configuration (--seed, --seed + 1, ...)")
        ->capture_default_str();
    if (has("refine-seeds"))
      app.add_option("--refine-seeds", g.refine_seeds,
                     "seeds of the second stage: " + sweep.refine_points + " (0: none)")
          ->capture_default_str();
    app.add_flag(
        "--finished-only", g.finished_only,
        "train nothing: write the outputs from the points already finished under --out, naming how many are missing");
    add_train_flags(app, g.run, TrainFlags::budget);
  };
  s.validate = [&sweep, grid](const study::StudyOptions&) { validate_grid(sweep, *grid); };
  s.run = [&sweep, grid](const study::StudyOptions& o, study::StudyContext& ctx) {
    return sweep_output(sweep, o, *grid, ctx);
  };
  return s;
}

std::vector<ResultRow> retrain_sweep(const std::string& name, const study::StudyOptions& options,
                                     study::StudyContext& ctx) {
  const auto slash = name.find('/');
  if (slash == std::string::npos) {
    const Sweep& sweep = find_sweep(name);
    const Grid& g = options.quick ? sweep.quick : sweep.full;
    validate_grid(sweep, g);
    return run_sweep(sweep, g, options.seed, options.out, *ctx.progress).rows;
  }
  const auto model = name.substr(0, slash);
  const Sweep& sweep = find_sweep(name.substr(slash + 1));
  for (const auto& p : sweep.presets)
    if (p.model == model) {
      const Grid& g = options.quick ? p.quick : p.full;
      validate_grid(sweep, g);
      return run_sweep(sweep, g, options.seed, options.out / model, *ctx.progress).rows;
    }
  throw std::logic_error("unknown training sweep " + name);
}

}  // namespace attnlab::sweeps
