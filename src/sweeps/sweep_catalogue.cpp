#include "sweep_catalogue.hpp"

#include <attnlab/core/text.hpp>
#include <attnlab/theory/training_rows.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attnlab::io {
namespace {

using namespace training_rows;

// The table's names: softmax (or any registered row-normalised name), x^p (p = 1 as x), x^p/K with K a number
// or sqrtN, x^p*learned (a trained scale starting at 1/sqrtN), h/L or h/L^a for h(S)/N^a.
ActivationSpec table_activation(const std::string& s) {
  const auto bad = [&] {
    return std::invalid_argument(
        text("activation: '", s, "' is not softmax, x^p, x^p/K, x^p/sqrtN, x^p*learned or h/L^a (e.g. relu/L)"));
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
  try {
    auto a = ActivationSpec::parse(s);
    if (find_activation(a.name).uses_p || find_activation(a.name).uses_alpha) throw bad();
    return a;
  } catch (const std::invalid_argument&) {
    throw bad();
  }
}

train::TrainConfig base_config(const Grid& g, Index N, const ActivationSpec& activation, std::uint64_t seed) {
  auto c = g.run.config;
  std::tie(c.model.patch_h, c.model.patch_w) = patch_for(N);
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

std::vector<std::string> log_grid(double lo, double hi, int points) {
  std::vector<std::string> grid;
  for (int i = 0; i < points; ++i)
    grid.push_back(sig(std::pow(10, std::log10(lo) + (std::log10(hi) - std::log10(lo)) * i / (points - 1)), 4));
  return grid;
}

// Every point's run: the D 32, depth 2 model, 160 AdamW steps on Fashion-MNIST with 2,000 validation images; with
// --quick a D 16 model for 4 steps on 600 images.
TrainRun sweep_run(bool quick) {
  TrainRun r;
  auto& c = r.config;
  if (quick) {
    c.model.dim = 16, c.model.depth = 2, c.model.heads = 2, c.model.mlp_hidden = 32;
    c.batch = 16, c.steps = 4, c.warmup = 1, c.log_every = 2;
    r.data.validation = 100, r.data.train_limit = 600;
  } else {
    c.model.dim = 32, c.model.depth = 2, c.model.heads = 2, c.model.mlp_hidden = 128;
    c.batch = 64, c.steps = 160, c.warmup = 16, c.log_every = 10;
    r.data.validation = 2000, r.data.train_limit = 0;
  }
  c.lr = 2e-3, c.min_lr = 1e-5, c.weight_decay = 0.05, c.clip = 1.0;
  return r;
}

}  // namespace

std::pair<Index, Index> patch_for(Index N) {
  if (N < 2 || N > 1024 || (N & (N - 1)) != 0)
    throw std::invalid_argument(text("N must be a power of two from 2 to 1024 (patches of the 32x32 image; got ", N, ")"));
  int e = 0;
  while ((Index{1} << e) < N) ++e;
  return {32 >> ((e + 1) / 2), 32 >> (e / 2)};
}

const std::vector<Sweep>& sweeps() {
  static const std::vector<Sweep> all = [] {
    std::vector<Sweep> s;
    Sweep k{training_rows::sweep::k, "x^3/k attention trained over a log grid of k at several N (POLY Fig 1)"};
    k.full = {.N = {8, 16, 64, 256}, .seeds = 2, .run = sweep_run(false)};
    // The paper's 1e-3..1e3 and two decades below: at timm's init the logits are ~0.03, so x³ ~ 1e-5 and the
    // best k of short runs at small N lies at or under 1e-3.
    k.full.k = log_grid(1e-5, 1e3, 17);
    k.quick = {.N = {8, 16}, .k = {"0.1", "1", "10"}, .seeds = 2, .run = sweep_run(true)};
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

    Sweep table{training_rows::sweep::activation_table, "accuracy of every activation of POLY Table 1/2/5 at N = 64 and 256"};
    table.full = {.N = {64, 256}, .seeds = 3, .run = sweep_run(false)};
    table.full.activations = {"softmax",   "x^3/sqrtN", "x^3",       "x/sqrtN",   "x",          "x^2/sqrtN",
                              "x^4/sqrtN", "x^5/sqrtN", "x^6/sqrtN", "x*learned", "x^2*learned", "x^3*learned",
                              "x^4*learned", "x^5*learned", "relu/L"};
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

    Sweep norms{training_rows::sweep::norms, "per-layer attention norms through training for softmax, x^3/sqrtN and x^3 (POLY Fig 2/3)"};
    norms.full = {.N = {64}, .activations = {"softmax", "x^3/sqrtN", "x^3"}, .seeds = 2, .run = sweep_run(false)};
    norms.full.run.config.model.depth = 6, norms.full.run.config.steps = 400, norms.full.run.config.warmup = 40;
    norms.quick = {.N = {16}, .activations = {"softmax", "x^3/sqrtN", "x^3"}, .seeds = 1, .run = sweep_run(true)};
    norms.quick.run.config.model.depth = 3;
    norms.grid_flags = {"N", "activation"};
    norms.norms = true;
    norms.points = table.points;
    s.push_back(norms);

    Sweep alpha{training_rows::sweep::alpha, "L^-alpha h attention over alpha in [0, 2] for five h at two N (RELU Fig 2)"};
    alpha.full = {.N = {16, 64},
                  .h = {"relu", "relu2", "gelu", "softplus", "identity"},
                  .alpha = {0, 0.25, 0.5, 0.75, 1, 1.25, 1.5, 1.75, 2},
                  .seeds = 2,
                  .run = sweep_run(false)};
    alpha.quick = {.N = {8, 16}, .h = {"relu", "identity"}, .alpha = {0, 1, 2}, .seeds = 2, .run = sweep_run(true)};
    alpha.grid_flags = {"N", "h", "alpha"};
    alpha.points = [](const Grid& g, std::uint64_t seed) {
      std::vector<Point> points;
      for (std::uint64_t s : seeds(g, seed))
        for (Index n : g.N)
          for (const auto& h : g.h)
            for (double a : g.alpha) {
              auto spec = ActivationSpec::parse(h);
              spec.alpha = a;
              points.push_back({base_config(g, n, spec, s), {{column::h, h}, {column::alpha, text(a)}}});
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

std::vector<Point> grid_points(const Sweep& sweep, const Grid& g, std::uint64_t seed) {
  const auto points = sweep.points(g, seed);
  std::vector<Point> all;
  for (const auto& init : g.inits)
    for (auto p : points) {
      p.config.model.qk_init = train::parse_qk_init(init);
      all.push_back(std::move(p));
    }
  return all;
}

std::vector<Index> norm_layers(Index depth) {
  std::vector<Index> layers;
  for (Index l : {std::max<Index>(1, (depth + 3) / 6), std::max<Index>(1, (depth + 1) / 2), depth})
    if (layers.empty() || layers.back() != l) layers.push_back(l);
  return layers;
}

std::string point_key(const Sweep& sweep, const Grid& g, const Point& p) {
  return text(sweep.name, "|", run_key({.config = p.config, .data = g.run.data}), ":norms=", sweep.norms);
}

}  // namespace attnlab::io
