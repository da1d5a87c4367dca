#include <attnlab/accel/engine.hpp>
#include <attnlab/core/distributed.hpp>
#include <attnlab/core/machine.hpp>
#include <attnlab/core/rng.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/io/config_file.hpp>
#include <attnlab/io/files.hpp>
#include <attnlab/io/metadata.hpp>
#include <attnlab/io/plot.hpp>
#include <attnlab/io/table.hpp>
#include <attnlab/study/study.hpp>

#include <omp.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>
#include <utility>

namespace attnlab::study {

void add_activation_flags(CLI::App& app, std::vector<std::string>& activations, const std::string& help,
                          std::vector<std::string>* params) {
  std::string defaults;
  for (const auto& a : activations) defaults += (defaults.empty() ? "" : ",") + a;
  app.add_option_function<std::vector<std::string>>(
         "--activation",
         [&activations](const std::vector<std::string>& lists) {
           activations.clear();
           for (const auto& list : lists)
             for (auto& a : split_activation_list(list)) activations.push_back(std::move(a));
         },
         help + "; or a formula in x (the logit S), N, d" + (params ? " and --param names" : "") +
             ": expr:x^3/sqrt(N) (phi = h(S)), rowexpr:exp(x) (phi = g(S)/sum of g over the row)")
      ->default_str(defaults);
  if (params)
    app.add_option("--param", *params, "values of a formula's parameters, NAME=NUMBER (comma-separated, repeatable)")
        ->delimiter(',');
}

namespace {

// `word` as one shell word: quoted when it holds anything but plain characters.
std::string shell_word(const std::string& word) {
  if (!word.empty() &&
      word.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_=.,/:+^") ==
          std::string::npos)
    return word;
  std::string quoted = "'";
  for (char c : word) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

// Without --out a run writes its own folder under runs/ (ignored by git), named by its arguments so that
// rerunning the same command resumes it and another command never overwrites it.
std::filesystem::path default_out(const std::string& study, const std::vector<std::string>& args) {
  std::string key;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    if (a == "--out" || a == "--threads") {
      ++i;
      continue;
    }
    if (a.starts_with("--out=") || a.starts_with("--threads=")) continue;
    key += a + '\n';
  }
  char hash[16];
  std::snprintf(hash, sizeof hash, "%08llx", static_cast<unsigned long long>(hash_string(key) & 0xffffffffULL));
  return std::filesystem::path("runs") / (study + "-" + hash);
}

nlohmann::json resolved_config(const StudyOptions& o) {
  nlohmann::json config{{"out", o.out.string()},
                        {"seed", o.seed},
                        {"trials", o.trials},
                        {"threads", omp_get_max_threads()},
                        {"quick", o.quick},
                        {"config", o.config},
                        {"backend", to_string(o.backend)}};
  if (o.backend == Backend::cuda) config["device"] = accel::cuda_device_description();
  return config;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      diagonal = std::exchange(row[j], std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] != b[j - 1])}));
  }
  return row[b.size()];
}

// An argument that looks like a flag but is none of the app's gets one line with the closest flag's name
// (CLI11's own message lists the stray words without saying which flag was meant).
void refuse_unknown_flags(const CLI::App& app, const std::vector<std::string>& args) {
  for (const auto& arg : args) {
    if (!arg.starts_with("--") || arg == "--") continue;
    const auto flag = arg.substr(0, arg.find('='));
    if (app.get_option_no_throw(flag) || flag == "--help") continue;
    std::string closest;
    std::size_t best = std::max<std::size_t>(2, flag.size() / 3) + 1;
    for (const auto* option : app.get_options())
      for (const auto& name : option->get_lnames())
        if (const auto d = edit_distance(flag, "--" + name); d < best) best = d, closest = "--" + name;
    throw std::invalid_argument(closest.empty() ? text("unknown flag ", flag, " (--help lists the flags)")
                                                : text("unknown flag ", flag, " (did you mean ", closest, "?)"));
  }
}

void add_common_flags(CLI::App& app, StudyOptions& o, const StudyDefinition& study) {
  const bool ensemble = study.ensemble_flags;
  app.add_option(
      "--out", o.out,
      "output directory (default: runs/<study>-<hash of the other arguments>; rerunning the command resumes it)");
  // CLI11 would wrap a negative seed to 2^64 - 1 silently.
  const CLI::Validator non_negative(
      [](std::string& v) { return v.rfind('-', 0) == 0 ? "must be at least 0 (got " + v + ")" : std::string(); }, "",
      "non-negative");
  app.add_option("--seed", o.seed, "seed of every random stream")->check(non_negative)->capture_default_str();
  if (study.monte_carlo) {
    app.add_option("--trials", o.trials, "Monte-Carlo trials per configuration (default: the study's own)");
    app.add_flag("--plain-means", o.plain_means,
                 "estimate every norm by its plain mean, without the exact moments as control variates");
  }
  app.add_option("--threads", o.threads, "OpenMP threads (0: all hardware threads)")->capture_default_str();
  app.add_flag("--quick", o.quick, "small grids and few trials (CI)");
  app.add_option("--config", o.config, "TOML file whose keys are these flags' names (the command line wins)");
  if (study.accelerated)
    app.add_option_function<std::string>(
           "--backend", [&o](const std::string& s) { o.backend = parse_backend(s); },
           "cpu; thrust (the Thrust engine on OpenMP) or cuda (on a GPU)")
        ->default_str(to_string(o.backend));
  if (!ensemble) return;
  app.add_option("--N", o.N, "sequence lengths, comma-separated")->delimiter(',')->capture_default_str();
  app.add_option("--D", o.D, "embedding dimensions")->delimiter(',')->capture_default_str();
  app.add_option("--d", o.d, "head dimensions")->delimiter(',')->capture_default_str();
  app.add_option("--p", o.p, "powers of x^p/k (positive integers)")->delimiter(',')->capture_default_str();
  app.add_option("--k", o.k, "scales k of x^p/k: numbers or sqrtN")->delimiter(',')->capture_default_str();
  app.add_option("--sigma-x", o.sigma_x, "standard deviations of the entries of X")
      ->delimiter(',')
      ->capture_default_str();
  app.add_option("--sigma-t", o.sigma_t, "standard deviations of the entries of Q and K")
      ->delimiter(',')
      ->capture_default_str();
  std::string names;
  for (const auto& info : activation_registry()) names += (names.empty() ? "" : ", ") + info.name;
  app.add_option("--alpha", o.alpha, "exponents alpha of h(S)/N^alpha activations (>= 0)")
      ->delimiter(',')
      ->capture_default_str();
  add_activation_flags(
      app, o.activations,
      "activations by name, each optionally followed by +prenorm (or +prenorm-released) and/or +qkln: " + names,
      &o.params);
  app.add_option("--convention", o.convention,
                 "where 1/sqrt(d) goes for x^p: inside (Thm 4.2), outside (Thm 4.3) or none")
      ->capture_default_str();
  app.add_option_function<std::string>(
         "--precision", [&o](const std::string& s) { o.precision = parse_precision(s); }, "float or double")
      ->default_str(to_string(o.precision));
  app.add_option("--reference-slope", o.reference_slopes,
                 "slopes s drawn as dashed N^s guide lines on the figures, e.g. 0.5,1")
      ->delimiter(',');
}

// The tiled engine never holds an N x N matrix: a trial keeps X (N x D), its projections and their gradients
// (N x d each) and tiles, per thread (measured: 62 MB in all at N = 32768, D = d = 64, 2 threads; this estimate
// says 200 MB per thread), and every rank of an MPI job on this node has its threads. Sizes beyond the machine's
// memory are refused here rather than failing in an allocation.
void refuse_what_cannot_fit(const EnsembleSpec& e, int threads) {
  const double entries = 4 * double(e.N) * double(e.D + 2 * e.d) + 2 * double(e.D) * double(e.d);
  const int ranks = distributed::node_size();
  const double bytes = 8 * entries * threads * ranks, memory = physical_memory_bytes();
  if (bytes > memory)
    throw std::invalid_argument(text("N: ", e.N, " (with D = ", e.D, ", d = ", e.d, ", ", threads, " threads",
                                     ranks > 1 ? text(" on each of ", ranks, " ranks") : "", ") needs about ",
                                     sig(bytes / 1e9, 3), " GB, more than this machine's ", sig(memory / 1e9, 3),
                                     " GB"));
}

void validate_common(const StudyOptions& o, const StudyDefinition& study) {
  if (o.threads < 0) throw std::invalid_argument(text("threads must be at least 0 (got ", o.threads, ")"));
  if (o.backend != Backend::cpu && !study.accelerated)
    throw std::invalid_argument(
        text("backend: ", study.name, " runs on the cpu backend only (got '", to_string(o.backend), "')"));
  if (!study.ensemble_flags) return;
  const auto non_empty = [](const char* name, std::size_t n) {
    if (n == 0) throw std::invalid_argument(text(name, " must list at least one value"));
  };
  non_empty("N", o.N.size());
  non_empty("D", o.D.size());
  non_empty("d", o.d.size());
  non_empty("sigma-x", o.sigma_x.size());
  non_empty("sigma-t", o.sigma_t.size());
  non_empty("activation", o.activations.size());
  // Checked whether or not an activation reads it: a value outside the documented range is a typo either way.
  for (double a : o.alpha)
    if (!(a >= 0) || !std::isfinite(a))
      throw std::invalid_argument(text("alpha must be a finite number >= 0 (got ", a, ")"));
  for (double s : o.reference_slopes)
    if (!std::isfinite(s)) throw std::invalid_argument(text("reference-slope must be a finite number (got ", s, ")"));
  for (const auto& e : o.ensembles()) {
    e.validate();
    if (o.backend == Backend::cpu) refuse_what_cannot_fit(e, o.threads > 0 ? o.threads : omp_get_max_threads());
  }
  for (const auto& a : o.activation_specs())
    for (const auto& e : o.ensembles()) a.validate(e.N, e.d);
  validate_backend(o.backend, o.activation_specs());
  for (const auto& e : o.ensembles())
    refuse_what_device_cannot_fit(
        {.ensemble = e, .activations = o.activation_specs(), .precision = o.precision, .backend = o.backend});
}

// Rank 0's checkpoint answers every lookup of the job, and its rows go to every rank: ranks that answered alone (each
// its own --out, or rank 0 with this run's results in memory) would part at the trials' collective calls, the ones
// that found nothing left waiting. Rank 0 alone stores: one process owns the file.
class RootDecidedCache final : public ResultCache {
 public:
  explicit RootDecidedCache(io::JsonlCheckpoint* checkpoint) : checkpoint_(checkpoint) {}  // null on every other rank
  bool find(const std::string& key, std::vector<ResultRow>& rows) override {
    const bool hit = checkpoint_ && checkpoint_->find(key, rows);
    if (distributed::size() == 1) return hit;
    std::string found;  // rank 0's rows as JSON; empty for a miss
    if (hit) {
      auto json = nlohmann::json::array();
      for (const auto& r : rows) json.push_back(io::to_json(r));
      found = json.dump();
    }
    distributed::broadcast_from_root(found);
    if (found.empty()) return false;
    if (!checkpoint_) {
      rows.clear();
      for (const auto& r : nlohmann::json::parse(found)) rows.push_back(io::row_from_json(r));
    }
    return true;
  }
  void store(const std::string& key, const std::vector<ResultRow>& rows) override {
    if (checkpoint_) checkpoint_->store(key, rows);
  }

 private:
  io::JsonlCheckpoint* checkpoint_;
};

// Whether `args` (the command line and the config's keys) set --quick.
bool quick_given(const std::vector<std::string>& args) {
  bool quick = false;
  CLI::App probe;
  probe.allow_extras();
  probe.set_help_flag();
  probe.add_flag("--quick", quick);
  std::vector<std::string> reversed(args.rbegin(), args.rend());
  probe.parse(reversed);
  return quick;
}

// argv[0] names the program; `hooks`, when given, receive the error line and the progress.
int run_study_with(const StudyDefinition& study, const std::vector<std::string>& argv, StudyRunHooks* hooks) {
  const auto start = std::chrono::steady_clock::now();
  const bool root = distributed::root();
  // The flags bind to the study's defaults, or with --quick to its quick defaults: --quick is read first, and a flag
  // given overrides either.
  StudyOptions options;
  const auto bind_flags = [&](bool quick) {
    options = quick ? study.quick_defaults : study.defaults;
    auto flags = std::make_unique<CLI::App>(study.description, study.name);
    add_common_flags(*flags, options, study);
    if (study.add_flags) study.add_flags(*flags, quick);
    return flags;
  };
  auto app_bound = bind_flags(false);
  const auto fail = [&](const std::string& message, int code) {
    if (hooks) hooks->error = message;
    else if (root) std::fprintf(stderr, "%s: error: %s\n", study.name.c_str(), message.c_str());
    else std::fprintf(stderr, "%s: error on rank %d: %s\n", study.name.c_str(), distributed::rank(), message.c_str());
    return code;
  };
  int stop_code = -1;  // this rank's exit code where validation stops it
  bool help = false;
  std::string error;
  try {
    std::vector<std::string> args(argv.begin() + 1, argv.end());
    // Vector flags append on repeat, so the config supplies only keys absent from argv.
    {
      StudyOptions probe;
      CLI::App first{study.description, study.name};
      first.allow_extras();
      first.add_option("--config", probe.config);
      first.set_help_flag();
      std::vector<std::string> reversed(args.rbegin(), args.rend());
      first.parse(reversed);
      if (!probe.config.empty()) {
        const auto extra = io::config_arguments(probe.config, *app_bound, args);
        args.insert(args.begin(), extra.begin(), extra.end());
      }
      if (quick_given(args)) app_bound = bind_flags(true);
    }
    CLI::App& app = *app_bound;
    options.command = argv[0];
    for (std::size_t i = 1; i < argv.size(); ++i) options.command += " " + shell_word(argv[i]);
    refuse_unknown_flags(app, args);
    const auto given_args = args;
    std::reverse(args.begin(), args.end());
    app.parse(args);
    if (app.count("--out") == 0) options.out = default_out(study.name, given_args);
    for (const auto* option : app.get_options())
      if (option->count() > 0) options.given.push_back(option->get_name());
    if (options.was_given("--trials") && options.trials < 1)
      throw std::invalid_argument(text("trials must be at least 1 (got ", options.trials, ")"));
    // Trial counts are 32-bit downstream: a larger one would wrap silently (to 0: the default).
    if (options.trials > std::int64_t{std::numeric_limits<std::uint32_t>::max()})
      throw std::invalid_argument(
          text("trials must be at most ", std::numeric_limits<std::uint32_t>::max(), " (got ", options.trials, ")"));
    validate_common(options, study);
    if (study.validate) study.validate(options);
    io::ensure_writable_directory(options.out);  // last: nothing is created for invalid input
    if (root) io::remove_stale_temporaries(options.out);
  } catch (const CLI::CallForHelp&) {
    help = true, stop_code = 0;
  } catch (const CLI::ParseError& e) {
    error = excerpt(e.what(), io::kMaxFlagError), stop_code = 2;
  } catch (const std::invalid_argument& e) {
    error = e.what(), stop_code = 2;
  }
  // Validation can stop some ranks only (a node without its GPU, flags a wrapper gives one rank): all agree before the
  // first collective call, and stop with the first such rank's code, that rank alone saying why.
  if (const auto stop = distributed::first_stop(stop_code); stop.rank >= 0) {
    if (stop.rank != distributed::rank()) return stop.exit_code;
    if (help) std::cout << app_bound->help();
    return help ? stop.exit_code : fail(error, stop.exit_code);
  }

  try {
    if (options.threads > 0) omp_set_num_threads(options.threads);
    std::optional<io::JsonlCheckpoint> checkpoint;  // rank 0's alone
    if (root) checkpoint.emplace(options.out / ".partial" / (study.name + ".jsonl"), io::git_description());
    RootDecidedCache cache(root ? &*checkpoint : nullptr);
    const bool quiet = hooks && hooks->quiet;
    io::ProgressBar progress(study.name, std::chrono::seconds(10), root && !quiet && !(hooks && hooks->progress),
                             hooks ? hooks->progress : io::ProgressListener{});
    StudyContext ctx{&cache, &progress, {}};
    const auto output = study.run(options, ctx);
    if (!root) return 0;
    if (checkpoint->resumed() > 0 && !quiet)
      std::fprintf(stderr, "%s: resumed %zu finished configurations\n", study.name.c_str(), checkpoint->resumed());

    for (const auto& r : output.rows)
      if (r.value.nonfinite > 0)
        ctx.warnings.push_back(text("non-finite values in ", r.value.nonfinite, " trials of ", r.quantity, " for ",
                                    r.activation, " at N=", r.N, " D=", r.D, " d=", r.d, " (excluded; row marked)"));
    io::write_atomically(options.out / (study.name + ".csv"), io::to_csv(output.rows));
    for (const auto& [name, content] : output.files) io::write_atomically(options.out / name, content);
    progress.stage("writing outputs");
    const auto drawn = progress.task("figures");
    for (std::size_t i = 0; i < output.figures.size(); ++i) {
      std::string warning;
      if (!io::draw_png(output.figures[i], options.out, warning)) ctx.warnings.push_back(warning);
      drawn(std::uint32_t(i + 1), std::uint32_t(output.figures.size()));
    }
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    auto config = resolved_config(options);
    config.update(output.config);
    auto meta = io::run_metadata(study.name, config, wall);
    meta["command"] = options.command;
    meta["warnings"] = ctx.warnings;
    meta["outputs"] = nlohmann::json::array({study.name + ".csv"});
    for (const auto& [name, content] : output.files) meta["outputs"].push_back(name);
    for (const auto& f : output.figures) meta["outputs"].push_back(f.name + ".png");
    io::write_atomically(options.out / (study.name + ".json"), meta.dump(2) + "\n");
    checkpoint->remove();
    for (const auto& w : ctx.warnings) std::fprintf(stderr, "%s: warning: %s\n", study.name.c_str(), w.c_str());
    if (hooks) hooks->summary = output.summary;
    if (quiet) return 0;
    std::fprintf(stderr, "%s: wrote %zu rows, %zu figures and %zu other files to %s/ in %s\n", study.name.c_str(),
                 output.rows.size(), output.figures.size(), output.files.size(), options.out.c_str(),
                 io::duration_text(wall).c_str());
    if (!hooks) std::fputs(output.summary.c_str(), stdout);  // a caller in the process prints hooks->summary itself
    return 0;
  } catch (const std::exception& e) {  // past validation: a failure, not bad input
    // The other ranks may wait for this one in a collective call: the whole job ends here.
    if (distributed::size() > 1)
      distributed::abort(1, text(study.name, ": error on rank ", distributed::rank(), ": ", e.what()));
    return fail(e.what(), 1);
  }
}

}  // namespace

int run_study(int argc, char** argv, const StudyDefinition& study) {
  // A file size limit (ulimit -f) then fails the write with EFBIG, reported with the file's name, instead of a signal.
  std::signal(SIGXFSZ, SIG_IGN);
  distributed::init(argc, argv);
  return run_study_with(study, std::vector<std::string>(argv, argv + argc), nullptr);
}

int run_study(const StudyDefinition& study, std::vector<std::string> args, StudyRunHooks& hooks) {
  args.insert(args.begin(), study.name);
  return run_study_with(study, std::move(args), &hooks);
}

}  // namespace attnlab::study
