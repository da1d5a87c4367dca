#include <attnlab/core/rng.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/io/files.hpp>
#include <attnlab/io/table.hpp>
#include <attnlab/io/training_sweep.hpp>
#include <attnlab/theory/claims.hpp>
#include <attnlab/train/trainer.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>
#include <thread>

namespace attnlab::io {
namespace {

namespace fs = std::filesystem;

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
  std::vector<std::string> claims;  // judged from its rows
  Grid full{}, quick{};
  std::vector<std::string> grid_flags{};  // of "N", "k", "activation", "h", "alpha"
  bool norms = false;                     // keep per-layer norms along training (layers at 1/6, 1/2 and the end)
  std::function<std::vector<Point>(const Grid&, std::uint64_t seed)> points{};
};

// The patch that cuts the 32×32 image into N patches: a 2^⌈e/2⌉ × 2^⌊e/2⌋ grid for N = 2^e
// (N = 256, 64, 16, 8 → 2×2, 4×4, 8×8, 8×16).
std::pair<Index, Index> patch_for(Index N) {
  int e = 0;
  while ((Index{1} << e) < N) ++e;
  if ((Index{1} << e) != N || N < 2 || N > 1024)
    throw std::invalid_argument(text("N must be a power of two from 2 to 1024 (patches of the 32x32 image; got ", N, ")"));
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
    Sweep k{"k_sweep", "x^3/k attention trained over a log grid of k at several N (POLY Fig 1)", {"poly.k_vs_N"}};
    k.full.N = {8, 16, 64, 256};
    // The paper's 1e-3..1e3 and two decades below: at timm's init the logits are ~0.03, so x³ ~ 1e-5 and the
    // best k of short runs at small N lies at or under 1e-3.
    k.full.k = log_grid(1e-5, 1e3, 17);
    k.quick = {{8, 16}, {"0.1", "1", "10"}, {}, {}, {}, 1, quick_budget()};
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

    Sweep table{"activation_table", "accuracy of every activation of POLY Table 1/2/5 at N = 64 and 256",
                {"poly.table1", "poly.scales_table", "poly.high_p"}};
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

    Sweep norms{"training_norms", "per-layer attention norms through training for softmax, x^3/sqrtN and x^3 (POLY Fig 2/3)",
                {"poly.train_norms", "poly.iid_at_init"}};
    norms.full.N = {64};
    norms.full.activations = {"softmax", "x^3/sqrtN", "x^3"};
    norms.full.budget.depth = 6, norms.full.budget.steps = 400, norms.full.budget.warmup = 40;
    norms.quick = {{16}, {}, {"softmax", "x^3/sqrtN", "x^3"}, {}, {}, 1, quick_budget()};
    norms.quick.budget.depth = 3;
    norms.grid_flags = {"N", "activation"};
    norms.norms = true;
    norms.points = table.points;
    s.push_back(norms);

    Sweep alpha{"alpha_sweep", "L^-alpha h attention over alpha in [0, 2] for five h at two N (RELU Fig 2)",
                {"relu.alpha_sweep"}};
    alpha.full.N = {16, 64};
    alpha.full.h = {"relu", "relu2", "gelu", "softplus", "identity"};
    alpha.full.alpha = {0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2};
    alpha.quick = {{8, 16}, {}, {}, {"relu", "identity"}, {0, 1, 2}, 1, quick_budget()};
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

ResultRow point_row(const Sweep& sweep, const Grid& g, const Point& p, const std::string& quantity, double value) {
  const auto& c = p.config;
  ResultRow r;
  r.study = sweep.name;
  r.quantity = quantity;
  r.activation = c.model.activation.label();
  r.N = c.model.patches(), r.D = c.model.dim, r.d = c.model.head_dim();
  if (find_activation(c.model.activation.name).uses_p) r.p = c.model.activation.p, r.k = c.model.activation.k.str();
  r.trials = 1;
  r.value = estimate(std::vector<double>{value});
  r.extra = {{"seed", text(c.seed)}, {"validation", text(g.budget.validation)}, {"steps", text(c.steps)}};
  r.extra.insert(r.extra.end(), p.labels.begin(), p.labels.end());
  return r;
}

// Trains one point. A run whose loss or gradient turns non-finite stops there; it is evaluated with its last
// finite parameters and its rows carry the step in diverged_at.
std::vector<ResultRow> train_point(const Sweep& sweep, const Grid& g, const Point& p, const train::Dataset& data) {
  auto [train_part, validation] = train::split(data, g.budget.validation, p.config.seed);
  train::Trainer trainer(p.config, std::move(train_part), std::move(validation));
  std::string diverged;
  while (!trainer.done()) {
    try {
      trainer.train_step();
    } catch (const std::runtime_error&) {
      diverged = text(trainer.step());
      break;
    }
  }
  const auto eval = trainer.evaluate();
  const double train_loss = trainer.records().empty() ? std::nan("") : trainer.records().back().loss;
  std::vector<ResultRow> rows;
  for (const auto& [q, v] : {std::pair{"val_accuracy", eval.accuracy}, {"val_loss", eval.loss}, {"train_loss", train_loss}})
    rows.push_back(point_row(sweep, g, p, q, v));
  if (sweep.norms)
    for (const auto& rec : trainer.records())
      for (Index l : norm_layers(p.config.model.depth)) {
        if (rec.norms.empty()) continue;
        const auto& n = rec.norms[std::size_t(l - 1)];
        for (const auto& [q, v] : {std::pair{"phi_fro", n.phi}, {"jacobian_fro", n.jacobian}}) {
          auto r = point_row(sweep, g, p, q, v);
          r.extra.push_back({"step", text(rec.step)});
          r.extra.push_back({"layer", text(l)});
          r.extra.push_back({"weight_std", text(train::kInitWeightStd)});
          rows.push_back(std::move(r));
        }
      }
  for (auto& r : rows) r.extra.push_back({"diverged_at", diverged});
  return rows;
}

std::string host_name() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// A point's files: <key hash>.json when finished, <key hash>.claim ("host pid") while a process trains it.
class PointStore {
 public:
  explicit PointStore(fs::path dir) : dir_(std::move(dir)), host_(host_name()) { fs::create_directories(dir_); }

  bool load(const std::string& key, std::vector<ResultRow>& rows) const {
    const auto path = file(key, ".json");
    if (!fs::exists(path)) return false;
    try {
      const auto j = nlohmann::json::parse(read_file(path));
      if (j.at("key") != key) return false;
      rows.clear();
      for (const auto& r : j.at("rows")) rows.push_back(row_from_json(r));
      return true;
    } catch (const nlohmann::json::exception&) {
      return false;  // written by another version: trained again
    }
  }
  void store(const std::string& key, const std::vector<ResultRow>& rows) const {
    nlohmann::json j{{"key", key}, {"rows", nlohmann::json::array()}};
    for (const auto& r : rows) j["rows"].push_back(to_json(r));
    write_atomically(file(key, ".json"), j.dump() + "\n");
    fs::remove(file(key, ".claim"));
  }
  // True when this process now owns the point; false when a live process on this host does.
  bool claim(const std::string& key) const {
    const auto path = file(key, ".claim");
    for (int attempt = 0; attempt < 2; ++attempt) {
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
      if (fd >= 0) {
        const std::string owner = text(host_, " ", ::getpid(), "\n");
        const bool ok = ::write(fd, owner.data(), owner.size()) == ssize_t(owner.size());
        ::close(fd);
        if (!ok) throw std::runtime_error(text("cannot write ", path.string()));
        return true;
      }
      if (errno != EEXIST) throw std::runtime_error(text("cannot create ", path.string(), ": ", std::strerror(errno)));
      if (owned_by_live_process(path)) return false;
      fs::remove(path);  // its process died: take the point over
    }
    return false;
  }

 private:
  fs::path file(const std::string& key, const char* suffix) const {
    char name[32];
    std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(hash_string(key)));
    return dir_ / (std::string(name) + suffix);
  }
  bool owned_by_live_process(const fs::path& path) const {
    std::istringstream in(read_file(path));
    std::string host;
    long pid = 0;
    if (!(in >> host >> pid)) {  // being written right now, or left empty by a process killed while writing it
      std::error_code ec;
      const auto age = fs::file_time_type::clock::now() - fs::last_write_time(path, ec);
      return !ec && age < std::chrono::seconds(10);
    }
    if (host != host_) return true;         // another machine's: never taken over
    return pid != ::getpid() && (::kill(pid_t(pid), 0) == 0 || errno == EPERM);
  }

  fs::path dir_;
  std::string host_;
};

// Every point's rows in grid order: loaded, trained here, or waited for while other processes train them.
std::vector<ResultRow> run_points(const Sweep& sweep, const Grid& g, std::uint64_t seed, const fs::path& out,
                                  ProgressBar& progress_bar) {
  const auto points = sweep.points(g, seed);
  PointStore store(out / ".partial" / sweep.name);
  std::unique_ptr<train::Dataset> data;  // loaded on the first point trained here
  std::vector<std::vector<ResultRow>> rows(points.size());
  std::vector<bool> done(points.size(), false);
  std::size_t finished = 0, trained = 0;
  const auto progress = progress_bar.task(text(sweep.name, " points"));
  while (finished < points.size()) {
    bool waiting = false;
    for (std::size_t i = 0; i < points.size(); ++i) {
      if (done[i]) continue;
      const auto key = point_key(sweep, g, points[i]);
      if (!store.load(key, rows[i])) {
        if (!store.claim(key)) {
          waiting = true;
          continue;
        }
        if (!data) {
          data = std::make_unique<train::Dataset>(train::pad(train::load_fashion_mnist(g.data_dir, true), 32, 32));
          if (g.budget.train_limit > 0 && g.budget.train_limit < data->size()) {
            data->labels.resize(std::size_t(g.budget.train_limit));
            data->pixels.resize(std::size_t(g.budget.train_limit * data->image_size()));
          }
        }
        rows[i] = train_point(sweep, g, points[i], *data);
        store.store(key, rows[i]);
        ++trained;
      }
      done[i] = true;
      ++finished;
      if (progress) progress(std::uint32_t(finished), std::uint32_t(points.size()));
    }
    if (waiting && finished < points.size()) std::this_thread::sleep_for(std::chrono::seconds(2));
  }
  std::fprintf(stderr, "%s: trained %zu of %zu points here (the others by earlier runs or other processes)\n",
               sweep.name.c_str(), trained, points.size());
  std::vector<ResultRow> all;
  for (auto& r : rows) all.insert(all.end(), r.begin(), r.end());
  return all;
}

struct Judged {
  std::string id;
  ClaimOutcome outcome;
};

std::vector<Judged> judge(const Sweep& sweep, const std::vector<ResultRow>& rows, const StudyOptions& o, StudyContext& ctx) {
  ClaimContext claims{o.seed, o.quick, 0, ctx.cache, [&](const std::string& label) { return ctx.progress->task(label); }};
  claims.training_rows = [&](const std::string& name) { return name == sweep.name ? rows : std::vector<ResultRow>{}; };
  std::vector<Judged> judged;
  for (const auto& id : sweep.claims) judged.push_back({id, claim_registry().find(id).check(claims)});
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
  for (const auto& file : {"train-images-idx3-ubyte.gz", "train-labels-idx1-ubyte.gz"})
    if (!fs::is_regular_file(fs::path(g.data_dir) / file))
      throw std::invalid_argument(text("data-dir: ", (fs::path(g.data_dir) / file).string(),
                                       " does not exist (scripts/install-deps installs dataset-fashion-mnist)"));
  const auto& b = g.budget;
  for (auto [value, name] : {std::pair{b.dim, "dim"}, {b.depth, "depth"}, {b.heads, "heads"}, {b.mlp, "mlp"},
                             {b.batch, "batch"}, {b.validation, "validation"}})
    if (value < 1) throw std::invalid_argument(text(name, " must be at least 1 (got ", value, ")"));
  if (b.train_limit < 0) throw std::invalid_argument(text("train-limit must be >= 0 (got ", b.train_limit, ")"));
  if (b.train_limit > 0 && b.validation >= b.train_limit)
    throw std::invalid_argument(text("validation (", b.validation, ") must be smaller than train-limit (", b.train_limit, ")"));
  for (const auto& p : sweep.points(g, 1)) p.config.validate();
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
  auto given = std::make_shared<std::vector<std::string>>();  // flags set on the command line
  StudyDefinition s;
  s.name = sweep.name;
  s.description = sweep.description;
  s.ensemble_flags = false;
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
  return run_points(sweep, g, options.seed, options.out, *ctx.progress);
}

}  // namespace attnlab::io
