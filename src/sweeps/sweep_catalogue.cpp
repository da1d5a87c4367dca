#include "sweep_catalogue.hpp"

#include <attnlab/core/text.hpp>
#include <attnlab/theory/training_rows.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

namespace attnlab::sweeps {
namespace {

using namespace training_rows;

// The table's names: softmax (or any registered name without constants: a row-normalised one, uniform, off), x^p
// (p = 1 as x), x^p/K with K a number or sqrtN, x^p*learned (a trained scale starting at 1/sqrtN), h/L or h/L^a for
// h(S)/N^a; or a formula, expr:... or rowexpr:....
ActivationSpec table_activation(const std::string& s) {
  const auto bad = [&] {
    return std::invalid_argument(
        text("activation: '", s,
             "' is not softmax, uniform, off, x^p, x^p/K, x^p/sqrtN, x^p*learned or h/L^a (e.g. relu/L)"));
  };
  if (s.starts_with("x")) {
    std::size_t at = 1;
    ActivationSpec a{.name = "poly", .p = 1, .k = KScale{}, .convention = Convention::inside};
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
  if (s.starts_with("expr:") || s.starts_with("rowexpr:")) return ActivationSpec::parse(s);  // its own one-line refusal
  try {
    auto a = ActivationSpec::parse(s);
    if (find_activation(a.name).uses_p || find_activation(a.name).uses_alpha) throw bad();
    return a;
  } catch (const std::invalid_argument&) {
    throw bad();
  }
}

ActivationSpec control_activation(const std::string& name) {
  try {
    return table_activation(name);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(text("controls: ", e.what()));
  }
}

train::TrainConfig base_config(const Grid& g, Index N, const ActivationSpec& activation, std::uint64_t seed) {
  auto c = g.run.config;
  fit_sequence_length(c.model, N, g.run.data);
  c.model.activation = activation;
  c.warmup = std::min(c.warmup, c.steps);
  c.seed = seed;
  return c;
}

std::vector<std::uint64_t> seeds(const Grid& g, std::uint64_t first) {
  std::vector<std::uint64_t> s;
  for (int i = 0; i < g.seeds; ++i) s.push_back(first + std::uint64_t(i));
  return s;
}

Point alpha_point(const Grid& g, Index N, const std::string& h, double alpha, std::uint64_t seed) {
  auto spec = ActivationSpec::parse(h);
  spec.alpha = alpha;
  return {base_config(g, N, spec, seed), {{column::h, h}, {column::alpha, alpha}}};
}

// k = 10^x as the grids write it: a refined k that falls on the grid is the grid's point (the same key).
// 10^log10_k to 4 significant digits: the k a grid or its refinement trains (a round number in the point's key).
KScale k_at(double log10_k) {
  const int shift = 3 - int(std::floor(log10_k));
  const double ten = std::pow(10.0, std::abs(shift));  // exact for the |shift| <= 22 of any k a grid holds
  const double k = std::pow(10.0, log10_k);
  return {false, shift >= 0 ? std::round(k * ten) / ten : std::round(k / ten) * ten};
}

std::vector<KScale> log_grid(double lo, double hi, int points) {
  std::vector<KScale> grid;
  for (int i = 0; i < points; ++i)
    grid.push_back(k_at(std::log10(lo) + (std::log10(hi) - std::log10(lo)) * i / (points - 1)));
  return grid;
}

// Rows written before the init column were trained under timm's init.
std::string init_of(const ResultRow& r) {
  const auto init = extra_value(r, column::init);
  return init.empty() ? "timm" : init;
}

// The second stage of a sweep: around the best grid value x of each curve (by the seed-mean validation accuracy of
// the first stage's rows, all inits), the points at x + each offset, with seeds --seed … --seed + refine_seeds − 1.
// The same seeds give the same initialisation and data order at every x (paired); the first stage's points recur
// with the same keys and are not trained again. `curve` names a row's curve (without its init), `x_of` reads its
// coordinate, and `point` builds the point at a coordinate from one of the curve's rows (none where it returns
// nothing).
std::vector<Point> refine_around_best(
    const Grid& g, std::uint64_t seed, const std::vector<ResultRow>& rows, const std::vector<double>& offsets,
    const std::function<std::string(const ResultRow&)>& curve, const std::function<double(const ResultRow&)>& x_of,
    const std::function<std::optional<Point>(const ResultRow&, double x, std::uint64_t seed)>& point) {
  struct Curve {
    const ResultRow* example = nullptr;
    std::map<double, std::pair<double, int>> by_x;  // x → (Σ accuracy, seeds)
  };
  std::map<std::string, Curve> curves;
  for (const auto& r : rows)
    if (r.quantity == quantity::val_accuracy && extra_value(r, column::control).empty()) {
      auto& c = curves[text(init_of(r), "|", curve(r))];
      c.example = &r;
      auto& sum = c.by_x[x_of(r)];
      sum.first += r.value.mean, ++sum.second;
    }
  Grid refined = g;
  refined.seeds = g.refine_seeds;
  std::vector<Point> points;
  for (const auto& [name, c] : curves) {
    const auto best = std::max_element(c.by_x.begin(), c.by_x.end(), [](const auto& a, const auto& b) {
      return a.second.first / a.second.second < b.second.first / b.second.second;
    });
    const auto init = train::parse_qk_init(init_of(*c.example));
    for (double offset : offsets)
      for (std::uint64_t s : seeds(refined, seed))
        if (auto p = point(*c.example, best->first + offset, s)) {
          p->config.model.qk_init = init;
          points.push_back(std::move(*p));
        }
  }
  return points;
}

std::vector<Point> refine_k(const Grid& g, std::uint64_t seed, const std::vector<ResultRow>& rows) {
  return refine_around_best(
      g, seed, rows, {-0.5, -0.25, 0.0, 0.25, 0.5}, [](const ResultRow& r) { return text(r.N, "|", r.p); },
      [](const ResultRow& r) { return std::log10(required_k(r).resolve(r.N)); },
      [&g](const ResultRow& r, double log10_k, std::uint64_t s) -> std::optional<Point> {
        return Point{base_config(g, r.N, {"poly", r.p, k_at(log10_k), Convention::inside}, s), {}};
      });
}

// α a half and a whole grid step either side of the best (α ≥ 0: the activation's domain).
std::vector<Point> refine_alpha(const Grid& g, std::uint64_t seed, const std::vector<ResultRow>& rows) {
  return refine_around_best(
      g, seed, rows, {-0.25, -0.125, 0.0, 0.125, 0.25},
      [](const ResultRow& r) { return text(r.N, "|", extra_value(r, column::h)); },
      [](const ResultRow& r) { return extra_number(r, column::alpha); },
      [&g](const ResultRow& r, double a, std::uint64_t s) -> std::optional<Point> {
        if (a < 0) return std::nullopt;
        return alpha_point(g, r.N, extra_value(r, column::h), a, s);
      });
}

// Every point's run: the D 32, depth 2 model, 3,600 AdamW steps (about 4 epochs) on Fashion-MNIST with 2,000 validation
// images, the budget the learning curves of results/learning_curves chose; with --quick a D 16 model for 4 steps on
// 600 images.
TrainRun sweep_run(bool quick) {
  TrainRun r;
  auto& c = r.config;
  if (quick) {
    c.model.dim = 16, c.model.depth = 2, c.model.heads = 2, c.model.mlp_hidden = 32;
    c.batch = 16, c.steps = 4, c.warmup = 1, c.log_every = 2;
    r.data.validation = 100, r.data.train_limit = 600;
  } else {
    c.model.dim = 32, c.model.depth = 2, c.model.heads = 2, c.model.mlp_hidden = 128;
    c.batch = 64, c.steps = 3600, c.warmup = 100, c.log_every = 10;
    r.data.validation = 2000, r.data.train_limit = 0;
  }
  c.lr = 2e-3, c.min_lr = 1e-5, c.weight_decay = 0.05, c.clip = 1.0;
  return r;
}

}  // namespace

std::pair<Index, Index> patch_for(Index N) {
  if (N < 2 || N > 1024 || (N & (N - 1)) != 0)
    throw std::invalid_argument(
        text("N must be a power of two from 2 to 1024 (patches of the 32x32 image; got ", N, ")"));
  int e = 0;
  while ((Index{1} << e) < N) ++e;
  return {32 >> ((e + 1) / 2), 32 >> (e / 2)};
}

void fit_sequence_length(train::VitConfig& model, Index N, const TrainData& data) {
  if (data.name == "recall") return fit_recall_tokens(model, N);
  std::tie(model.patch_h, model.patch_w) = patch_for(N);
  fit_model_to_data(model, data);
}

const std::vector<Sweep>& sweeps() {
  static const std::vector<Sweep> all = [] {
    std::vector<Sweep> s;
    Sweep k{training_rows::sweep::k,
            "x^p/k attention trained over a log grid of k at several N (POLY Fig 1: x^3; REPOLY §5.1.2: x)"};
    k.full = {.N = {8, 16, 64, 256},
              .powers = {3},
              .inits = {"timm", "unit"},
              .seeds = 2,
              .refine_seeds = 5,
              .run = sweep_run(false)};
    // A decade grid over the paper's 1e-3..1e3 and two decades below (at timm's init the logits are ~0.03, so x³ ~
    // 1e-5 and short runs at small N were best at or under 1e-3); the refinement adds half and quarter decades.
    k.full.k = log_grid(1e-5, 1e3, 9);
    k.full.controls = {"softmax", "uniform", "off"};
    k.quick = {.N = {8, 16},
               .k = {{false, 0.1}, {false, 1}, {false, 10}},
               .powers = {3},
               .seeds = 2,
               .refine_seeds = 3,
               .run = sweep_run(true)};
    // ViT-Tiny's (issue 15 item 4): POLY's Fig 1 model at N in {8, 16} under timm's init, one epoch (900 steps, the
    // budget of its training_norms: a point costs 4.1 min on one thread at N = 8, 7.5 min at N = 16). Its quick grid
    // has no second stage, as a ViT-Tiny step costs more (the small model's quick grid tests the refinement).
    Grid tiny_k = k.full, tiny_k_quick = k.quick;
    tiny_k.N = {8, 16}, tiny_k.inits = {"timm"}, tiny_k.run.config.steps = 900;
    tiny_k_quick.k = {{false, 1}, {false, 10}}, tiny_k_quick.refine_seeds = 0;
    for (auto* g : {&tiny_k, &tiny_k_quick}) set_preset_shape(g->run.config.model, model::vit_tiny);
    k.presets = {{model::vit_tiny, tiny_k, tiny_k_quick}};
    k.grid_flags = {"N", "k", "p", "refine-seeds"};
    k.refine = refine_k;
    k.refine_points = "k at and a quarter and a half decade either side of each curve's best grid k";
    k.points = [](const Grid& g, std::uint64_t seed) {
      std::vector<Point> points;
      for (std::uint64_t s : seeds(g, seed))
        for (Index n : g.N)
          for (int p : g.powers)
            for (const auto& kv : g.k)
              points.push_back({base_config(g, n, {"poly", p, kv, Convention::inside}, s), {}});
      return points;
    };
    s.push_back(k);

    Sweep table{training_rows::sweep::activation_table,
                "accuracy of every activation of POLY Table 1/2/5, REPOLY Table 5 and RELU Fig 2/3 at N = 64 and 256"};
    table.full = {.N = {64, 256}, .seeds = 3, .run = sweep_run(false)};
    table.full.activations = {"softmax",     "x^3/sqrtN",   "x^3",       "x/sqrtN",   "x",           "x^2/sqrtN",
                              "x^4/sqrtN",   "x^5/sqrtN",   "x^6/sqrtN", "x*learned", "x^2*learned", "x^3*learned",
                              "x^4*learned", "x^5*learned", "relu/L",    "relu/L^0",  "elu/L^0",     "gelu/L^0",
                              "tanh/L^0",    "exp/L^0",     "relu2/L",   "gelu/L",    "softplus/L",  "identity/L",
                              "relu+qkln/L", "relu2+qkln/L"};
    table.full.controls = {"uniform", "off"};
    table.quick = {.N = {16},
                   .activations = {"softmax", "x^3/sqrtN", "x^3", "x/sqrtN", "x", "x^4/sqrtN", "x^3*learned"},
                   .seeds = 1,
                   .run = sweep_run(true)};
    table.grid_flags = {"N", "activation"};
    table.points = [](const Grid& g, std::uint64_t seed) {
      std::vector<Point> points;
      for (std::uint64_t s : seeds(g, seed))
        for (Index n : g.N)
          for (const auto& a : g.activations) points.push_back({base_config(g, n, table_activation(a), s), {}});
      return points;
    };
    s.push_back(table);

    Sweep norms{
        training_rows::sweep::norms,
        "per-layer attention norms through training for softmax, x^3/sqrtN, x^3, x/sqrtN and x (POLY Fig 2/3, REPOLY Fig "
        "2-5)"};
    // Issue 15's campaign: every N under both regimes, about 4 epochs (the learning curves' budget).
    norms.full = {.N = {8, 16, 64, 256},
                  .activations = {"softmax", "x^3/sqrtN", "x^3", "x/sqrtN", "x"},
                  .inits = {"timm", "unit"},
                  .seeds = 4,
                  .run = sweep_run(false)};
    norms.full.run.config.model.depth = 6, norms.full.run.config.steps = 3600, norms.full.run.config.warmup = 40;
    norms.full.controls = {"uniform", "off"};  // with the grid's softmax: the task's dynamic range
    norms.quick = {.N = {16}, .activations = {"softmax", "x^3/sqrtN", "x^3"}, .seeds = 1, .run = sweep_run(true)};
    norms.quick.run.config.model.depth = 3;
    // ViT-Tiny's (issue 15 item 4): POLY's Fig 2 model at N in {16, 64} under timm's init, one epoch (900 steps: its
    // N = 64 point costs 35 min on one thread here, the 4-epoch budget 2.3 h).
    Grid tiny_full = norms.full, tiny_quick = norms.quick;
    tiny_full.N = {16, 64}, tiny_full.inits = {"timm"}, tiny_full.seeds = 1, tiny_full.run.config.steps = 900;
    for (auto* g : {&tiny_full, &tiny_quick}) set_preset_shape(g->run.config.model, model::vit_tiny);
    norms.presets = {{model::vit_tiny, tiny_full, tiny_quick}};
    norms.grid_flags = {"N", "activation"};
    norms.norms = true;
    norms.points = table.points;
    s.push_back(norms);

    Sweep alpha{training_rows::sweep::alpha,
                "L^-alpha h attention over alpha in [0, 2] for five h at two N (RELU Fig 2)"};
    alpha.full = {.N = {16, 64},
                  .h = {"relu", "relu2", "gelu", "softplus", "identity"},
                  .alpha = {0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2},
                  .seeds = 2,
                  .run = sweep_run(false)};
    alpha.quick = {.N = {8, 16}, .h = {"relu", "identity"}, .alpha = {0, 1, 2}, .seeds = 2, .run = sweep_run(true)};
    alpha.full.refine_seeds = 5;
    alpha.full.controls = {"softmax", "uniform", "off"};
    alpha.grid_flags = {"N", "h", "alpha", "refine-seeds"};
    alpha.points = [](const Grid& g, std::uint64_t seed) {
      std::vector<Point> points;
      for (std::uint64_t s : seeds(g, seed))
        for (Index n : g.N)
          for (const auto& h : g.h)
            for (double a : g.alpha) points.push_back(alpha_point(g, n, h, a, s));
      return points;
    };
    alpha.refine = refine_alpha;
    alpha.refine_points = "alpha at and an eighth and a quarter either side of each curve's best grid alpha";
    s.push_back(alpha);

    Sweep periodic{training_rows::sweep::periodic_table,
                   "accuracy of PERIODIC's functions with and without prenormalisation over model depth (PERIODIC "
                   "Table 2)"};
    // demo.py's definitions (the paper's experiments ran it: "a simply designed demo"), prenorm at its placement; the
    // paper's own are --activation sin2max,sinsoftmax,...,+prenorm.
    periodic.full = {
        .N = {64},
        .activations = {"softmax", "softmax+prenorm-released", "sin2max-shifted", "sin2max-shifted+prenorm-released",
                        "sinsoftmax-released", "sinsoftmax-released+prenorm-released", "sirenmax",
                        "sirenmax+prenorm-released", "cosmax", "cosmax+prenorm-released", "sin2max-released",
                        "sinmax-constant", "sinmax-constant+prenorm-released"},
        .depths = {1, 2, 4, 8},
        .controls = {"uniform", "off"},
        .seeds = 3,
        .run = sweep_run(false)};
    periodic.quick = {.N = {16},
                      .activations = {"softmax", "sinsoftmax-released", "cosmax"},
                      .depths = {1, 2},
                      .seeds = 2,
                      .run = sweep_run(true)};
    periodic.grid_flags = {"N", "activation", "depths"};
    periodic.points = table.points;
    s.push_back(periodic);

    Sweep saturation{
        training_rows::sweep::periodic_saturation,
        "saturated share and logit kurtosis through training, softmax against PERIODIC's two best (Fig 6)"};
    saturation.full = {.N = {64},
                       .activations = {"softmax", "sin2max-shifted", "sinsoftmax-released"},
                       .controls = {"uniform", "off"},
                       .seeds = 3,
                       .run = sweep_run(false)};
    saturation.quick = {
        .N = {16}, .activations = {"softmax", "sinsoftmax-released"}, .seeds = 2, .run = sweep_run(true)};
    saturation.grid_flags = {"N", "activation"};
    saturation.norms = true;
    saturation.points = table.points;
    s.push_back(saturation);
    return s;
  }();
  return all;
}

const Sweep& find_sweep(const std::string& name) {
  for (const auto& s : sweeps())
    if (s.name == name) return s;
  throw std::logic_error("unknown training sweep " + name);
}

std::vector<Point> grid_points(const Sweep& sweep, const Grid& g, std::uint64_t seed) {
  auto points = sweep.points(g, seed);
  for (std::uint64_t s : seeds(g, seed))
    for (Index n : g.N)
      for (const auto& a : g.controls)
        points.push_back({base_config(g, n, control_activation(a), s), {{column::control, "yes"}}});
  const auto depths = g.depths.empty() ? std::vector<Index>{g.run.config.model.depth} : g.depths;
  std::vector<Point> all;
  for (const auto& init : g.inits)
    for (Index depth : depths)
      for (auto p : points) {
        p.config.model.qk_init = train::parse_qk_init(init);
        p.config.model.depth = depth;
        all.push_back(std::move(p));
      }
  return all;
}

std::vector<Index> norm_layers(Index depth) {
  std::vector<Index> layers;
  const Index first = std::max<Index>(1, depth / 6), middle = std::max(first + 1, 7 * depth / 12);
  for (Index l : {first, middle, depth})
    if (l <= depth && (layers.empty() || layers.back() < l)) layers.push_back(l);
  return layers;
}

std::string preset_of(const train::VitConfig& model) {
  auto tiny = model;
  set_preset_shape(tiny, training_rows::model::vit_tiny);
  const bool is_tiny = model.dim == tiny.dim && model.depth == tiny.depth && model.heads == tiny.heads &&
                       model.mlp_hidden == tiny.mlp_hidden;
  return is_tiny ? training_rows::model::vit_tiny : "";
}

std::string point_key(const Sweep& sweep, const Grid& g, const Point& p) {
  return text(sweep.name, "|", run_key({.config = p.config, .data = g.run.data}), ":norms=", sweep.norms);
}

}  // namespace attnlab::sweeps
