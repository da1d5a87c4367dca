#include <attnlab/core/distributed.hpp>
#include <attnlab/core/rng.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/io/files.hpp>
#include <attnlab/io/sweep_point.hpp>
#include <attnlab/io/table.hpp>
#include <attnlab/io/train_study.hpp>
#include <attnlab/io/training_sweep.hpp>
#include <attnlab/theory/claims.hpp>
#include <attnlab/train/trainer.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>

namespace attnlab::io {
namespace {

namespace fs = std::filesystem;

constexpr Index kFashionMnistTrain = 60000;

// The fixed training budget of every point of a sweep.
struct Budget {
  Index dim = 32, depth = 2, heads = 2, mlp = 128, batch = 64, validation = 2000, train_limit = 0;
  long steps = 160, warmup = 16, log_every = 10;
  double lr = 2e-3, min_lr = 1e-5, weight_decay = 0.05, clip = 1.0;
};

// What a sweep trains: its grid flags (each sweep exposes some of them) and the budget.
struct Grid {
  std::vector<Index> N;
  std::vector<std::string> k, activations, h;
  std::vector<double> alpha;
  int seeds = 2;
  Budget budget;
  std::string data_dir = train::kFashionMnistDir.string();
};

struct Point {
  train::TrainConfig config;
  std::vector<std::pair<std::string, std::string>> labels;  // extra columns
};

struct Sweep {
  std::string name, description;
  Grid full{}, quick{};
  std::vector<std::string> grid_flags{};  // of "N", "k", "activation", "h", "alpha"
  bool norms = false;                     // keep per-layer norms along training (layers at 1/6, 1/2 and the end)
  std::function<std::vector<Point>(const Grid&, std::uint64_t seed)> points{};
};

// The patch that cuts the 32×32 image into N patches: a 2^⌈e/2⌉ × 2^⌊e/2⌋ grid for N = 2^e
// (N = 256, 64, 16, 8 → 2×2, 4×4, 8×8, 8×16).
std::pair<Index, Index> patch_for(Index N) {
  if (N < 2 || N > 1024 || (N & (N - 1)) != 0)
    throw std::invalid_argument(text("N must be a power of two from 2 to 1024 (patches of the 32x32 image; got ", N, ")"));
  int e = 0;
  while ((Index{1} << e) < N) ++e;
  return {32 >> ((e + 1) / 2), 32 >> (e / 2)};
}

// The table's names: softmax (or any registered row-normalised name), x^p (p = 1 as x), x^p/K with K a number
// or sqrtN, x^p*learned (a trained scale starting at 1/sqrtN), h/L or h/L^a for h(S)/N^a.
ActivationSpec table_activation(const std::string& s) {
  const auto bad = [&] {
    return std::invalid_argument(
        text("activation: '", s, "' is not softmax, x^p, x^p/K, x^p/sqrtN, x^p*learned or h/L^a (e.g. relu/L)"));
  };
  if (s.starts_with("x")) {
    std::size_t at = 1;
    ActivationSpec a{"poly", 1, KScale{}, Convention::inside};
    if (s.size() > 1 && s[1] == '^') {
      std::size_t used = 0;
      try {
        a.p = std::stoi(s.substr(2), &used);
      } catch (const std::exception&) {
        throw bad();
      }
      at = 2 + used;
    }
    const std::string rest = s.substr(at);
    if (rest == "*learned") {
      a.name = "poly-learned", a.k = KScale::parse("sqrtN");
    } else if (rest.starts_with("/")) {
      try {
        a.k = KScale::parse(rest.substr(1));
      } catch (const std::invalid_argument&) {
        throw bad();
      }
    } else if (!rest.empty()) {
      throw bad();
    }
    a.validate();
    return a;
  }
  const auto slash = s.find("/L");
  if (slash != std::string::npos) {
    auto a = ActivationSpec::parse(s.substr(0, slash));
    if (!find_activation(a.name).uses_alpha) throw bad();
    const std::string rest = s.substr(slash + 2);
    try {
      a.alpha = rest.empty() ? 1.0 : rest.starts_with("^") ? std::stod(rest.substr(1)) : throw bad();
    } catch (const std::logic_error&) {
      throw bad();
    }
    a.validate();
    return a;
  }
  try {
    auto a = ActivationSpec::parse(s);
    if (find_activation(a.name).uses_p || find_activation(a.name).uses_alpha) throw bad();
    return a;
  } catch (const std::invalid_argument&) {
    throw bad();
  }
}

train::TrainConfig base_config(const Grid& g, Index N, const ActivationSpec& activation, std::uint64_t seed) {
  train::TrainConfig c;
  const Budget& b = g.budget;
  c.model = train::VitConfig::preset("small");
  c.model.dim = b.dim, c.model.depth = b.depth, c.model.heads = b.heads, c.model.mlp_hidden = b.mlp;
  std::tie(c.model.patch_h, c.model.patch_w) = patch_for(N);
  c.model.activation = activation;
  c.batch = b.batch, c.steps = b.steps, c.warmup = std::min(b.warmup, b.steps), c.lr = b.lr, c.min_lr = b.min_lr;
  c.weight_decay = b.weight_decay, c.clip = b.clip, c.log_every = b.log_every;
  c.seed = seed;
  return c;
}

std::vector<std::uint64_t> seeds(const Grid& g, std::uint64_t first) {
  std::vector<std::uint64_t> s;
  for (int i = 0; i < g.seeds; ++i) s.push_back(first + std::uint64_t(i));
  return s;
}

std::vector<std::string> log_grid(double lo, double hi, int points) {
  std::vector<std::string> grid;
  for (int i = 0; i < points; ++i)
    grid.push_back(sig(std::pow(10, std::log10(lo) + (std::log10(hi) - std::log10(lo)) * i / (points - 1)), 4));
  return grid;
}

Budget quick_budget() {
  Budget b;
  b.dim = 16, b.depth = 2, b.heads = 2, b.mlp = 32, b.batch = 16, b.validation = 100, b.train_limit = 600;
  b.steps = 4, b.warmup = 1, b.log_every = 2;
  return b;
}

const std::vector<Sweep>& sweeps() {
  static const std::vector<Sweep> all = [] {
    std::vector<Sweep> s;
    Sweep k{"k_sweep", "x^3/k attention trained over a log grid of k at several N (POLY Fig 1)"};
    k.full.N = {8, 16, 64, 256};
    // The paper's 1e-3..1e3 and two decades below: at timm's init the logits are ~0.03, so x³ ~ 1e-5 and the
    // best k of short runs at small N lies at or under 1e-3.
    k.full.k = log_grid(1e-5, 1e3, 17);
    k.quick = {{8, 16}, {"0.1", "1", "10"}, {}, {}, {}, 2, quick_budget()};
    k.grid_flags = {"N", "k"};
    k.points = [](const Grid& g, std::uint64_t seed) {
      std::vector<Point> points;
      for (std::uint64_t s : seeds(g, seed))
        for (Index n : g.N)
          for (const auto& kv : g.k)
            points.push_back({base_config(g, n, {"poly", 3, KScale::parse(kv), Convention::inside}, s), {}});
      return points;
    };
    s.push_back(k);

    Sweep table{"activation_table", "accuracy of every activation of POLY Table 1/2/5 at N = 64 and 256"};
    table.full.N = {64, 256};
    table.full.activations = {"softmax",   "x^3/sqrtN", "x^3",       "x/sqrtN",   "x",          "x^2/sqrtN",
                              "x^4/sqrtN", "x^5/sqrtN", "x^6/sqrtN", "x*learned", "x^2*learned", "x^3*learned",
                              "x^4*learned", "x^5*learned", "relu/L"};
    table.full.seeds = 3;
    table.quick = {{16}, {}, {"softmax", "x^3/sqrtN", "x^3", "x/sqrtN", "x", "x^4/sqrtN", "x^3*learned"}, {}, {}, 1,
                   quick_budget()};
    table.grid_flags = {"N", "activation"};
    table.points = [](const Grid& g, std::uint64_t seed) {
      std::vector<Point> points;
      for (std::uint64_t s : seeds(g, seed))
        for (Index n : g.N)
          for (const auto& a : g.activations) points.push_back({base_config(g, n, table_activation(a), s), {}});
      return points;
    };
    s.push_back(table);

    Sweep norms{"training_norms", "per-layer attention norms through training for softmax, x^3/sqrtN and x^3 (POLY Fig 2/3)"};
    norms.full.N = {64};
    norms.full.activations = {"softmax", "x^3/sqrtN", "x^3"};
    norms.full.budget.depth = 6, norms.full.budget.steps = 400, norms.full.budget.warmup = 40;
    norms.quick = {{16}, {}, {"softmax", "x^3/sqrtN", "x^3"}, {}, {}, 1, quick_budget()};
    norms.quick.budget.depth = 3;
    norms.grid_flags = {"N", "activation"};
    norms.norms = true;
    norms.points = table.points;
    s.push_back(norms);

    Sweep alpha{"alpha_sweep", "L^-alpha h attention over alpha in [0, 2] for five h at two N (RELU Fig 2)"};
    alpha.full.N = {16, 64};
    alpha.full.h = {"relu", "relu2", "gelu", "softplus", "identity"};
    alpha.full.alpha = {0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2};
    alpha.quick = {{8, 16}, {}, {}, {"relu", "identity"}, {0, 1, 2}, 2, quick_budget()};
    alpha.grid_flags = {"N", "h", "alpha"};
    alpha.points = [](const Grid& g, std::uint64_t seed) {
      std::vector<Point> points;
      for (std::uint64_t s : seeds(g, seed))
        for (Index n : g.N)
          for (const auto& h : g.h)
            for (double a : g.alpha) {
              auto spec = ActivationSpec::parse(h);
              spec.alpha = a;
              points.push_back({base_config(g, n, spec, s), {{"h", h}, {"alpha", text(a)}}});
            }
      return points;
    };
    s.push_back(alpha);
    return s;
  }();
  return all;
}

const Sweep& find_sweep(const std::string& name) {
  for (const auto& s : sweeps())
    if (s.name == name) return s;
  throw std::logic_error("unknown training sweep " + name);
}

std::vector<Index> norm_layers(Index depth) {
  std::vector<Index> layers;
  for (Index l : {std::max<Index>(1, (depth + 3) / 6), std::max<Index>(1, (depth + 1) / 2), depth})
    if (layers.empty() || layers.back() != l) layers.push_back(l);
  return layers;
}

std::string point_key(const Sweep& sweep, const Grid& g, const Point& p) {
  return text(sweep.name, "|", train::fingerprint(p.config), "|validation=", g.budget.validation,
              ":train-limit=", g.budget.train_limit, ":norms=", sweep.norms);
}

// What one training run measured: quantities with their step and layer (norms), and where it diverged.
// Points store only this; the labels (activation, N, seed, ...) are added when the sweep assembles its rows,
// so a new column never retrains anything.
// Trains one point. A run whose loss or gradient turns non-finite stops there and is evaluated with its last
// finite parameters.
PointResult train_point(const Sweep& sweep, const Grid& g, const Point& p, const train::Dataset& data) {
  auto [train_part, validation] = train::split(data, g.budget.validation, p.config.seed);
  train::Trainer trainer(p.config, std::move(train_part), std::move(validation));
  PointResult result;
  while (!trainer.done()) {
    try {
      trainer.train_step();
    } catch (const train::NonFiniteError&) {
      result.diverged_at = trainer.step();
      break;
    }
  }
  const auto eval = trainer.evaluate();
  const double train_loss = trainer.records().empty() ? std::nan("") : trainer.records().back().loss;
  result.measurements = {{"val_accuracy", eval.accuracy}, {"val_loss", eval.loss}, {"train_loss", train_loss}};
  if (sweep.norms)
    for (const auto& rec : trainer.records())
      for (Index l : norm_layers(p.config.model.depth))
        if (!rec.norms.empty()) {
          const auto& n = rec.norms[std::size_t(l - 1)];
          result.measurements.push_back({"phi_fro", n.phi, rec.step, l});
          result.measurements.push_back({"jacobian_fro", n.jacobian, rec.step, l});
        }
  return result;
}

// The rows of a point: its measurements with the configuration's columns.
std::vector<ResultRow> point_rows(const Sweep& sweep, const Grid& g, const Point& p, const PointResult& result) {
  const auto& c = p.config;
  const auto& info = find_activation(c.model.activation.name);
  std::vector<ResultRow> rows;
  for (const auto& m : result.measurements) {
    ResultRow r;
    r.study = sweep.name;
    r.quantity = m.quantity;
    r.activation = c.model.activation.label();
    r.N = c.model.patches(), r.D = c.model.dim, r.d = c.model.head_dim();
    if (info.uses_p) r.p = c.model.activation.p, r.k = c.model.activation.k.str();
    r.trials = 1;
    const bool finite = std::isfinite(m.value);
    r.value = {finite ? 1 : 0, finite ? 0 : 1, m.value, 0, m.value, m.value};
    r.extra = {{"seed", text(c.seed)}, {"validation", text(g.budget.validation)}, {"steps", text(c.steps)},
               {"function", c.model.activation.name}};
    if (info.uses_alpha) r.extra.push_back({"alpha", text(c.model.activation.alpha)});
    for (const auto& label : p.labels)  // a grid label the activation's columns already hold (alpha) is not repeated
      if (extra_value(r, label.first).empty()) r.extra.push_back(label);
    if (m.layer > 0)
      r.extra.insert(r.extra.end(), {{"step", text(m.step)}, {"layer", text(m.layer)}, {"tokens", text(c.model.tokens())},
                                     {"weight_std", text(train::kInitWeightStd)}});
    r.extra.push_back({"diverged_at", result.diverged_at < 0 ? "" : text(result.diverged_at)});
    rows.push_back(std::move(r));
  }
  return rows;
}

// A point's files in <out>/.partial/<sweep>/: <key hash>.json once finished, and <key hash>.lock, on which the
// process training it holds an exclusive flock (the kernel releases it when that process dies).
class PointStore {
 public:
  explicit PointStore(fs::path dir) : dir_(std::move(dir)) { fs::create_directories(dir_); }

  std::optional<PointResult> load(const std::string& key) const {
    const auto path = file(key, ".json");
    return fs::exists(path) ? read_point_record(read_file(path), key) : std::nullopt;
  }
  // The lock of the point, or -1 when another live process holds it.
  int try_lock(const std::string& key) const {
    const auto path = file(key, ".lock");
    const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) throw std::runtime_error(text("cannot open ", path.string(), ": ", std::strerror(errno)));
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
    const int error = errno;
    ::close(fd);
    if (error == EWOULDBLOCK) return -1;
    throw std::runtime_error(text("cannot lock ", path.string(), ": ", std::strerror(error)));
  }
  // Releases a lock; every holder checks for the finished point first, so removing the file is always safe.
  void unlock(const std::string& key, int fd) const {
    fs::remove(file(key, ".lock"));
    ::close(fd);
  }
  void store(const std::string& key, const PointResult& result) const {
    write_atomically(file(key, ".json"), point_record(key, result));
  }

 private:
  fs::path file(const std::string& key, const char* suffix) const {
    char name[32];
    std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(hash_string(key)));
    return dir_ / (std::string(name) + suffix);
  }

  fs::path dir_;
};

// Every point's rows in grid order: loaded, trained here, or waited for while other processes train them.
std::vector<ResultRow> run_points(const Sweep& sweep, const Grid& g, std::uint64_t seed, const fs::path& out,
                                  ProgressBar& progress_bar) {
  const auto points = sweep.points(g, seed);
  PointStore store(out / ".partial" / sweep.name);
  std::unique_ptr<train::Dataset> data;  // loaded on the first point trained here
  std::vector<std::optional<PointResult>> results(points.size());
  std::size_t finished = 0, trained = 0;
  const auto progress = progress_bar.task(text(sweep.name, " points"));
  // Loads point i, or trains it under its lock; false when another process holds the lock.
  const auto settle = [&](std::size_t i) {
    const auto key = point_key(sweep, g, points[i]);
    results[i] = store.load(key);
    if (!results[i]) {
      const int lock = store.try_lock(key);
      if (lock < 0) return false;
      results[i] = store.load(key);  // finished by its last holder while this process waited for the lock
      if (!results[i]) {
        if (!data)
          data = std::make_unique<train::Dataset>(
              train::first(train::pad(train::load_fashion_mnist(g.data_dir, true), 32, 32), g.budget.train_limit));
        results[i] = train_point(sweep, g, points[i], *data);
        store.store(key, *results[i]);
        ++trained;
      }
      store.unlock(key, lock);
    }
    ++finished;
    if (progress) progress(std::uint32_t(finished), std::uint32_t(points.size()));
    return true;
  };
  // The ranks of an MPI job take points from one queue, so a slow point holds up only its rank; then each rank reads
  // the points the others settled (and waits for those another job holds).
  {
    distributed::WorkQueue queue(points.size());
    for (auto i = queue.next(); i < points.size(); i = queue.next()) settle(i);
  }
  distributed::barrier();
  while (finished < points.size()) {
    bool waiting = false;
    for (std::size_t i = 0; i < points.size(); ++i)
      if (!results[i]) waiting |= !settle(i);
    if (waiting && finished < points.size()) std::this_thread::sleep_for(std::chrono::seconds(2));
  }
  std::fprintf(stderr, "%s: trained %zu of %zu points here (the others by earlier runs or other processes)\n",
               sweep.name.c_str(), trained, points.size());
  std::vector<ResultRow> rows;
  for (std::size_t i = 0; i < points.size(); ++i) {
    const auto part = point_rows(sweep, g, points[i], *results[i]);
    rows.insert(rows.end(), part.begin(), part.end());
  }
  return rows;
}

struct Judged {
  std::string id;
  ClaimOutcome outcome;
};

// Every registered claim that reads this sweep, judged from its rows.
std::vector<Judged> judge(const Sweep& sweep, const std::vector<ResultRow>& rows, const StudyOptions& o, StudyContext& ctx) {
  auto claims = claim_context(o, ctx);
  claims.training_rows = [&](const std::string& name) { return name == sweep.name ? rows : std::vector<ResultRow>{}; };
  std::vector<Judged> judged;
  for (const auto& claim : claim_registry().all())
    if (claim.sweep == sweep.name) judged.push_back({claim.id, claim.check(claims)});
  return judged;
}

nlohmann::json budget_json(const Budget& b) {
  return {{"model", {{"dim", b.dim}, {"depth", b.depth}, {"heads", b.heads}, {"mlp", b.mlp}}},
          {"batch", b.batch}, {"steps", b.steps}, {"warmup", b.warmup}, {"lr", b.lr}, {"min_lr", b.min_lr},
          {"weight_decay", b.weight_decay}, {"clip", b.clip}, {"validation_images", b.validation},
          {"train_limit", b.train_limit}, {"log_every", b.log_every}, {"optimizer", "AdamW, cosine schedule"},
          {"data", "Fashion-MNIST padded to 32x32"}};
}

std::string summary_markdown(const Sweep& sweep, const StudyOptions& o, const Grid& g, const std::vector<Judged>& judged) {
  std::string md = text("# ", sweep.name, "\n\n", sweep.description, ".\n\nProduced by `", o.command, "`", o.quick ? " (quick budget)" : "",
                        ".\n\nBudget per point: ", budget_json(g.budget).dump(), "; ", g.seeds, " seed(s) from ", o.seed, ".\n");
  for (const auto& j : judged) {
    md += text("\n## ", j.id, ": ", to_string(j.outcome.verdict), "\n\n", j.outcome.detail, "\n\n", j.outcome.markdown);
    for (const auto& f : j.outcome.figures) md += text("\n![", f.title, "](", f.name, ".png)\n");
  }
  return md;
}

StudyOutput sweep_output(const Sweep& sweep, const StudyOptions& o, const Grid& g, StudyContext& ctx) {
  StudyOutput out;
  out.rows = run_points(sweep, g, o.seed, o.out, *ctx.progress);
  const auto judged = judge(sweep, out.rows, o, ctx);
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
  out.files.push_back({sweep.name + ".md", summary_markdown(sweep, o, g, judged)});
  out.config = {{"budget", budget_json(g.budget)}, {"seeds", g.seeds}, {"N", g.N}, {"verdicts", verdicts},
                {"command", o.command}, {"data_dir", g.data_dir}};
  if (!g.k.empty()) out.config["k"] = g.k;
  if (!g.activations.empty()) out.config["activations"] = g.activations;
  if (!g.h.empty()) out.config["h"] = g.h, out.config["alpha"] = g.alpha;
  return out;
}

void validate_grid(const Sweep& sweep, const Grid& g) {
  if (g.seeds < 1) throw std::invalid_argument(text("seeds must be at least 1 (got ", g.seeds, ")"));
  if (g.N.empty()) throw std::invalid_argument("N must list at least one sequence length");
  for (Index n : g.N) patch_for(n);
  const auto& b = g.budget;
  for (auto [value, name] : {std::pair{b.dim, "dim"}, {b.depth, "depth"}, {b.heads, "heads"}, {b.mlp, "mlp"},
                             {b.batch, "batch"}, {b.validation, "validation"}})
    if (value < 1) throw std::invalid_argument(text(name, " must be at least 1 (got ", value, ")"));
  if (b.train_limit < 0) throw std::invalid_argument(text("train-limit must be >= 0 (got ", b.train_limit, ")"));
  const Index images = b.train_limit > 0 ? std::min(b.train_limit, kFashionMnistTrain) : kFashionMnistTrain;
  if (b.validation >= images)
    throw std::invalid_argument(text("validation (", b.validation, ") must be smaller than the ", images,
                                     " training images (train-limit ", b.train_limit, ")"));
  if (b.batch > images - b.validation)
    throw std::invalid_argument(text("batch (", b.batch, ") exceeds the ", images - b.validation,
                                     " images left for training beside the validation set"));
  std::vector<std::string> keys;
  for (const auto& p : sweep.points(g, 1)) {
    p.config.validate();
    keys.push_back(point_key(sweep, g, p));
  }
  std::sort(keys.begin(), keys.end());
  if (std::adjacent_find(keys.begin(), keys.end()) != keys.end())
    throw std::invalid_argument("the grid lists a configuration twice (a repeated N, k, activation, h or alpha)");
  const auto& files = fashion_mnist_files();
  require_data_files(g.data_dir, {files.begin(), files.begin() + 2});  // the training split only
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

StudyDefinition training_sweep_study(const std::string& name) {
  const Sweep& sweep = find_sweep(name);
  auto grid = std::make_shared<Grid>(sweep.full);
  StudyDefinition s;
  s.name = sweep.name;
  s.description = sweep.description;
  s.ensemble_flags = false;
  s.monte_carlo = false;
  s.add_flags = [&sweep, grid](CLI::App& app) {
    auto& g = *grid;
    const auto has = [&](const char* f) { return std::find(sweep.grid_flags.begin(), sweep.grid_flags.end(), f) != sweep.grid_flags.end(); };
    app.add_option("--N", g.N, "sequence lengths (patches of the 32x32 image: powers of two, 8 = 8x16 patches)")
        ->delimiter(',')
        ->capture_default_str();
    if (has("k")) app.add_option("--k", g.k, "scales k of x^3/k")->delimiter(',')->capture_default_str();
    if (has("activation"))
      app.add_option("--activation", g.activations, "softmax, x^p, x^p/K, x^p/sqrtN, x^p*learned, h/L^a")
          ->delimiter(',')
          ->capture_default_str();
    if (has("h")) app.add_option("--h", g.h, "functions h of h(S)/L^alpha")->delimiter(',')->capture_default_str();
    if (has("alpha")) app.add_option("--alpha", g.alpha, "exponents alpha")->delimiter(',')->capture_default_str();
    app.add_option("--seeds", g.seeds, "training seeds per configuration (--seed, --seed + 1, ...)")->capture_default_str();
    app.add_option("--data-dir", g.data_dir, "folder of Fashion-MNIST's gzip IDX files")->capture_default_str();
    auto& b = g.budget;
    app.add_option("--steps", b.steps, "optimisation steps per point")->capture_default_str();
    app.add_option("--warmup", b.warmup, "linear warm-up steps")->capture_default_str();
    app.add_option("--batch", b.batch, "batch size")->capture_default_str();
    app.add_option("--lr", b.lr, "peak learning rate")->capture_default_str();
    app.add_option("--dim", b.dim, "embedding dimension D")->capture_default_str();
    app.add_option("--depth", b.depth, "blocks")->capture_default_str();
    app.add_option("--heads", b.heads, "attention heads")->capture_default_str();
    app.add_option("--mlp", b.mlp, "MLP hidden size")->capture_default_str();
    app.add_option("--validation", b.validation, "validation images split off the training set")->capture_default_str();
    app.add_option("--train-limit", b.train_limit, "use only the first K training images (0: all 60,000)")->capture_default_str();
  };
  s.validate = [&sweep, grid](const StudyOptions& o) {
    // --quick replaces the grid and budget except where the command line (or --config) set them.
    if (o.quick) {
      Grid q = sweep.quick;
      const auto keep = [&](const char* flag, auto& quick_value, const auto& given_value) {
        if (o.was_given(flag)) quick_value = given_value;
      };
      const Grid& f = *grid;
      keep("--N", q.N, f.N), keep("--k", q.k, f.k), keep("--activation", q.activations, f.activations);
      keep("--h", q.h, f.h), keep("--alpha", q.alpha, f.alpha), keep("--seeds", q.seeds, f.seeds);
      keep("--data-dir", q.data_dir, f.data_dir);
      Budget& b = q.budget;
      const Budget& fb = f.budget;
      keep("--steps", b.steps, fb.steps), keep("--warmup", b.warmup, fb.warmup), keep("--batch", b.batch, fb.batch);
      keep("--lr", b.lr, fb.lr), keep("--dim", b.dim, fb.dim), keep("--depth", b.depth, fb.depth);
      keep("--heads", b.heads, fb.heads), keep("--mlp", b.mlp, fb.mlp), keep("--validation", b.validation, fb.validation);
      keep("--train-limit", b.train_limit, fb.train_limit);
      *grid = q;
    }
    validate_grid(sweep, *grid);
  };
  s.run = [&sweep, grid](const StudyOptions& o, StudyContext& ctx) { return sweep_output(sweep, o, *grid, ctx); };
  return s;
}

std::vector<ResultRow> retrain_sweep(const std::string& name, const StudyOptions& options, StudyContext& ctx) {
  const Sweep& sweep = find_sweep(name);
  const Grid& g = options.quick ? sweep.quick : sweep.full;
  validate_grid(sweep, g);
  return run_points(sweep, g, options.seed, options.out, *ctx.progress);
}

}  // namespace attnlab::io
