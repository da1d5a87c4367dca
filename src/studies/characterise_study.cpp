// characterise: an activation card. For each activation (registered or a formula) beside softmax, composed of the
// engines the claims use: the norm sweep over N with fitted exponents (run_sweep), the largest row Jacobian an
// adversarial search finds (search_rows), saturation and values over logit scales and the row-map properties
// (row_forward on Gaussian rows), and a short paired-seed training readout (train::Trainer).
#include <attnlab/attention/row_map.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/mc/statistics.hpp>
#include <attnlab/mc/sweep.hpp>
#include <attnlab/studies/studies.hpp>
#include <attnlab/sweeps/train_run.hpp>
#include <attnlab/theory/extreme_rows.hpp>
#include <attnlab/theory/moments.hpp>
#include <attnlab/train/trainer.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>

namespace attnlab::studies {
namespace {

// The PERIODIC paper's "gradient close to 0" as the periodic claims read it: n|∂ϕ_j/∂x_j| below a hundredth.
constexpr double kSaturatedEntry = 0.01;
constexpr Index kRowLength = 64, kRows = 64;
const std::vector<double> kLogitScales{0.1, 0.3, 1, 3, 10, 30, 100};
const std::vector<Index> kSearchLengths{8, 64};

struct CardSettings {
  long train_steps = 300;
  int train_seeds = 2;
  std::vector<std::string> tasks{"fashion-mnist", "recall"};
  SearchBudget search{.restarts = 4, .iterations = 300, .polished = 2};
};

ResultRow card_row(const std::string& quantity, const ActivationSpec& a, Index N, const Estimate& value,
                   ExtraColumns extra = {}) {
  return {.study = "characterise",
          .quantity = quantity,
          .activation = a.label(),
          .N = N,
          .trials = value.count,
          .value = value,
          .extra = std::move(extra)};
}

Estimate single(double v) { return estimate(std::vector<double>{v}); }

// Gaussian rows of the activation's argument at one scale, the same rows for every activation.
std::vector<VectorD> gaussian_rows(std::uint64_t seed, double scale) {
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal;
  std::vector<VectorD> rows(kRows, VectorD(kRowLength));
  for (auto& r : rows)
    for (auto& v : r) v = scale * normal(rng);
  return rows;
}

// Saturated share, the largest |ϕ| and the share of non-finite values over the rows at each scale; at scale 1 also
// the row map's properties: positive share, zero share, the largest |Σϕ − 1|.
void row_properties(const ActivationSpec& spec, std::uint64_t seed, std::vector<ResultRow>& rows) {
  const auto act = spec.resolve(kRowLength, 1);
  for (double scale : kLogitScales) {
    double saturated = 0, largest = 0, nonfinite = 0, positive = 0, zero = 0, row_sum_error = 0;
    VectorD y(kRowLength);
    RowJacobian J;
    for (const auto& x : gaussian_rows(seed, scale)) {
      row_forward(act, x.data(), kRowLength, y.data(), &J);
      const VectorD diagonal = J.diagonal();
      for (Index j = 0; j < kRowLength; ++j) {
        saturated += kRowLength * std::abs(diagonal[j]) < kSaturatedEntry;
        nonfinite += !std::isfinite(y[j]);
        positive += y[j] >= 0;
        zero += y[j] == 0;
        if (std::isfinite(y[j])) largest = std::max(largest, std::abs(y[j]));
      }
      row_sum_error = std::max(row_sum_error, std::abs(y.sum() - 1));
    }
    const double entries = double(kRows * kRowLength);
    const ExtraColumns at{{"logit_scale", scale}};
    rows.push_back(card_row("saturated_share", spec, kRowLength, single(saturated / entries), at));
    rows.push_back(card_row("max_abs_value", spec, kRowLength, single(largest), at));
    rows.push_back(card_row("nonfinite_share", spec, kRowLength, single(nonfinite / entries), at));
    if (scale != 1) continue;
    rows.push_back(card_row("positive_share", spec, kRowLength, single(positive / entries), at));
    rows.push_back(card_row("zero_share", spec, kRowLength, single(zero / entries), at));
    rows.push_back(card_row("max_row_sum_error", spec, kRowLength, single(row_sum_error), at));
  }
}

// The largest ‖∂ϕ/∂x‖_F/√n over rows of length n that the claims' adversarial search finds.
void adversarial_jacobian(const ActivationSpec& spec, std::uint64_t seed, const SearchBudget& budget,
                          std::vector<ResultRow>& rows) {
  for (Index n : kSearchLengths) {
    const auto act = spec.resolve(n, 1);
    const auto objective = [&](const VectorD& x) {
      VectorD y(n);
      RowJacobian J;
      row_forward(act, x.data(), n, y.data(), &J);
      return std::sqrt(J.frob2() / double(n));
    };
    const auto found = search_rows(n, objective, seed, budget);
    rows.push_back(card_row("max_jac_over_sqrtN", spec, n, single(found.best), {{"found_by", found.family}}));
  }
}

// Test accuracy after a short run per seed; the seeds are shared by every activation (paired with softmax's).
std::vector<double> accuracies(const ActivationSpec& spec, const std::string& task, const CardSettings& s,
                               std::uint64_t seed) {
  sweeps::TrainRun run;
  run.data.name = task;
  run.data.train_limit = task == "recall" ? 0 : 20000;
  run.data.test_limit = 2000;
  run.data.validation = 500;
  auto& c = run.config;
  sweeps::set_preset_shape(c.model, "micro");
  std::tie(c.model.patch_h, c.model.patch_w) = std::pair{8, 8};  // N = 16
  c.model.activation = spec;
  c.steps = s.train_steps, c.warmup = s.train_steps / 10, c.batch = 32, c.log_every = s.train_steps;
  sweeps::fit_model_to_data(c.model, run.data);
  std::vector<double> out;
  for (int i = 0; i < s.train_seeds; ++i) {
    c.seed = seed + std::uint64_t(i);
    const auto data = sweeps::load_splits(run.data, c.model, c.seed);
    train::Trainer trainer(c, data.train, data.validation);
    while (!trainer.done()) trainer.train_step();
    out.push_back(trainer.evaluate(data.test).accuracy);
  }
  return out;
}

// "0.52 [0.48, 0.56]"
std::string with_interval(const Estimate& e) {
  if (e.count == 0) return "n/a";
  if (!(e.ci_hi > e.ci_lo) || !std::isfinite(e.ci_hi - e.ci_lo)) return sig(e.mean, 3);  // one value: no interval
  return text(sig(e.mean, 3), " [", sig(e.ci_lo, 3), ", ", sig(e.ci_hi, 3), "]");
}

// A table's header separator: "|---|---|".
std::string separator(std::size_t columns) {
  std::string out = "|";
  for (std::size_t i = 0; i < columns; ++i) out += "---|";
  return out + "\n";
}

const ResultRow* find_row(const std::vector<ResultRow>& rows, const std::string& quantity, const std::string& label,
                          Index N = -1, const std::string& scale = "") {
  for (const auto& r : rows)
    if (r.quantity == quantity && r.activation == label && (N < 0 || r.N == N) &&
        (scale.empty() || extra_value(r, "logit_scale") == scale))
      return &r;
  return nullptr;
}

std::string cell(const std::vector<ResultRow>& rows, const std::string& quantity, const std::string& label,
                 Index N = -1, const std::string& scale = "") {
  const auto* r = find_row(rows, quantity, label, N, scale);
  return r ? with_interval(r->value) : "n/a";
}

// The card: one table per question, each activation a row and softmax the first.
std::string card_markdown(const std::vector<ResultRow>& rows, const std::vector<ActivationSpec>& specs,
                          const std::vector<Figure>& figures, const CardSettings& s) {
  std::string md = "# Activation card\n\nEach activation beside softmax (generated by `characterise`).\n\n";
  // ‖ rather than |: a pipe would end a table's cell
  md +=
      "## Growth with N (exponent a of E‖·‖_F ~ N^a, 95% interval; with 1/√N: a − 1/2)\n\n"
      "| activation | ‖ϕ‖_F | ‖∂ϕ/∂S‖_F | ‖∂ϕ/∂Q‖_F | ‖ϕ‖_F/√N |\n" +
      separator(5);
  for (const auto& a : specs) {
    const auto* f = find_row(rows, "frob_exponent", a.label());
    md += text("| ", a.label(), " | ", cell(rows, "frob_exponent", a.label()), " | ",
               cell(rows, "jac_exponent", a.label()), " | ", cell(rows, "qgrad_exponent", a.label()), " | ",
               f ? sig(f->value.mean - 0.5, 3) : "n/a", " |\n");
  }
  md += "\n## Largest ‖∂ϕ/∂x‖_F/√n over rows of length n (adversarial search)\n\n| activation |";
  for (Index n : kSearchLengths) md += text(" n = ", n, " |");
  md += "\n" + separator(1 + kSearchLengths.size());
  for (const auto& a : specs) {
    md += "| " + a.label() + " |";
    for (Index n : kSearchLengths) md += " " + cell(rows, "max_jac_over_sqrtN", a.label(), n) + " |";
    md += "\n";
  }
  md += text("\n## Saturation (share of entries with n·abs(∂ϕ_j/∂x_j) < ", kSaturatedEntry,
             ") and values over logit scales\n\n");
  md += "| activation | quantity |";
  for (double c : kLogitScales) md += text(" x", c, " |");
  md += "\n" + separator(2 + kLogitScales.size());
  for (const auto& a : specs)
    for (const char* q : {"saturated_share", "max_abs_value", "nonfinite_share"}) {
      md += text("| ", a.label(), " | ", q, " |");
      for (double c : kLogitScales) md += " " + cell(rows, q, a.label(), kRowLength, text(c)) + " |";
      md += "\n";
    }
  md += text("\n## Row map at unit logit scale (", kRows, " Gaussian rows of ", kRowLength, ")\n\n",
             "| activation | positive share | zero share (sparsity) | max abs(row sum − 1) |\n", separator(4));
  for (const auto& a : specs)
    md += text("| ", a.label(), " | ", cell(rows, "positive_share", a.label()), " | ",
               cell(rows, "zero_share", a.label()), " | ", cell(rows, "max_row_sum_error", a.label()), " |\n");
  if (!s.tasks.empty()) {
    md += text("\n## Trainability (micro ViT, N = 16, ", s.train_steps, " steps, ", s.train_seeds,
               " seeds paired with softmax's: test accuracy and its difference from softmax)\n\n| activation |");
    for (const auto& t : s.tasks) md += " " + t + " | vs softmax |";
    md += "\n" + separator(1 + 2 * s.tasks.size());
    for (const auto& a : specs) {
      md += "| " + a.label() + " |";
      for (const auto& t : s.tasks)
        md += " " + cell(rows, "accuracy_" + t, a.label()) + " | " + cell(rows, "accuracy_gap_" + t, a.label()) + " |";
      md += "\n";
    }
  }
  md += "\n## Figures\n\n";
  for (const auto& f : figures) md += text("![", f.title, "](", f.name, ".png)\n");
  return md;
}

// One line per activation: the answers a reader wants first.
std::string summary_table(const std::vector<ResultRow>& rows, const std::vector<ActivationSpec>& specs,
                          const CardSettings& s) {
  std::string out = "activation card (exponents of N; max Jacobian/sqrt(n) at n = 64; saturated share at x10";
  out += s.tasks.empty() ? ")\n" : "; accuracy gap vs softmax)\n";
  for (const auto& a : specs) {
    out += text("  ", a.label(), ": frob ", cell(rows, "frob_exponent", a.label()), ", jac ",
                cell(rows, "jac_exponent", a.label()), ", qgrad ", cell(rows, "qgrad_exponent", a.label()),
                "; max jac ", cell(rows, "max_jac_over_sqrtN", a.label(), 64), "; saturated ",
                cell(rows, "saturated_share", a.label(), kRowLength, "10"));
    for (const auto& t : s.tasks) out += text("; ", t, " ", cell(rows, "accuracy_gap_" + t, a.label()));
    out += "\n";
  }
  return out + "card.md has the tables and figures\n";
}

Figure scale_figure(const std::vector<ResultRow>& rows, const std::vector<ActivationSpec>& specs, const std::string& q,
                    const std::string& title, bool logy) {
  Figure f{
      .name = "characterise_" + q, .title = title, .xlabel = "logit scale", .ylabel = q, .logx = true, .logy = logy};
  for (const auto& a : specs) {
    Series s{.label = a.label()};
    for (double c : kLogitScales)
      if (const auto* r = find_row(rows, q, a.label(), kRowLength, text(c)); r && (!logy || r->value.mean > 0))
        s.x.push_back(c), s.y.push_back(r->value.mean);
    f.series.push_back(std::move(s));
  }
  return f;
}

}  // namespace

study::StudyDefinition characterise_study() {
  study::GridSweep grid = study::poly_grid({"frob", "frob2", "jac", "jac2", "qgrad", "qgrad2"},
                                           {"frob", "jac", "qgrad"});
  grid.defaults.N = {16, 32, 64, 128, 256};
  grid.defaults.D = {32};
  grid.defaults.d = {32};
  grid.defaults.activations = {"softmax"};
  grid.quick_defaults = grid.defaults;
  grid.quick_defaults.N = {8, 16, 32};
  grid.quick_defaults.D = {8};
  grid.quick_defaults.d = {8};
  study::StudyDefinition study{.name = "characterise",
                               .description =
                                   "an activation card: norm growth over N, the largest Jacobian, saturation, "
                                   "row-map properties and a short training readout, each beside softmax",
                               .defaults = grid.defaults,
                               .quick_defaults = grid.quick_defaults};
  auto settings = std::make_shared<CardSettings>();
  study.add_flags = [settings](CLI::App& app, bool quick) {
    *settings = CardSettings{};
    if (quick)
      settings->train_steps = 10, settings->train_seeds = 1, settings->tasks = {"recall"},
      settings->search = {.restarts = 1, .iterations = 50, .polished = 1};
    app.add_option("--train-steps", settings->train_steps, "training steps of each readout run")->capture_default_str();
    app.add_option("--train-seeds", settings->train_seeds, "seeds of the readout, paired with softmax's")
        ->capture_default_str();
    app.add_option("--tasks", settings->tasks, "the readout's tasks: fashion-mnist, recall (none: no training)")
        ->delimiter(',')
        ->capture_default_str();
  };
  study.validate = [settings](const study::StudyOptions& o) {
    for (const auto& a : o.activation_specs())
      if (find_activation(a.name).family == ActivationFamily::control)
        throw std::invalid_argument(
            text("activation: '", a.name, "' ignores the logits: its Jacobians are 0, no growth to fit"));
    if (settings->tasks == std::vector<std::string>{"none"}) settings->tasks.clear();
    if (settings->train_steps < 1)
      throw std::invalid_argument(text("train-steps must be at least 1 (got ", settings->train_steps, ")"));
    if (settings->train_seeds < 1)
      throw std::invalid_argument(text("train-seeds must be at least 1 (got ", settings->train_seeds, ")"));
    for (const auto& t : settings->tasks) {
      if (t != "fashion-mnist" && t != "recall")
        throw std::invalid_argument(text("tasks: '", t, "' is not fashion-mnist or recall"));
      if (t == "fashion-mnist") sweeps::require_data_files(sweeps::TrainData{}.dir, train::kFashionMnistFiles);
    }
  };
  study.run = [settings, grid](const study::StudyOptions& o, study::StudyContext& ctx) {
    // softmax first: every readout is paired with its run
    auto specs = o.activation_specs();
    const auto plain_softmax = [](const ActivationSpec& a) {
      return a.name == "softmax" && a.transforms == Transforms{};
    };
    if (std::none_of(specs.begin(), specs.end(), plain_softmax))
      specs.insert(specs.begin(), ActivationSpec::parse("softmax"));
    std::stable_partition(specs.begin(), specs.end(), plain_softmax);
    const auto trials = study::claim_context(o, ctx).trials_or(32, 8);
    auto sweep = run_sweep({.study = "characterise",
                            .ensembles = o.ensembles(),
                            .activations = specs,
                            .quantities = grid.quantities,
                            .fitted = grid.fitted,
                            .seed = o.seed,
                            .trials = trials,
                            .exact_mean = o.plain_means ? ExactMean{} : theory::squared_norm_exact},
                           ctx.cache, [&](const std::string& label) { return ctx.progress->task(label); });
    study::StudyOutput out{.rows = std::move(sweep.rows), .figures = std::move(sweep.figures)};
    const auto progress = ctx.progress->task("rows, search and training");
    const auto& s = *settings;
    std::map<std::string, std::vector<double>> softmax_accuracy;
    for (std::size_t i = 0; i < specs.size(); ++i) {
      const auto& a = specs[i];
      row_properties(a, o.seed, out.rows);
      adversarial_jacobian(a, o.seed, s.search, out.rows);
      for (const auto& task : s.tasks) {
        const auto acc = accuracies(a, task, s, o.seed);
        if (plain_softmax(a)) softmax_accuracy[task] = acc;
        out.rows.push_back(card_row("accuracy_" + task, a, 16, estimate(acc)));
        std::vector<double> gap(acc.size());
        for (std::size_t k = 0; k < acc.size(); ++k) gap[k] = acc[k] - softmax_accuracy[task][k];
        out.rows.push_back(card_row("accuracy_gap_" + task, a, 16, estimate(gap)));
      }
      if (progress) progress(std::uint32_t(i + 1), std::uint32_t(specs.size()));
    }
    out.figures.push_back(
        scale_figure(out.rows, specs, "saturated_share", "share of saturated entries over logit scales", false));
    out.figures.push_back(scale_figure(out.rows, specs, "max_abs_value", "largest |phi| over logit scales", true));
    out.files.push_back({"card.md", card_markdown(out.rows, specs, out.figures, s)});
    std::vector<std::string> labels;
    for (const auto& a : specs) labels.push_back(a.label());
    out.config = {{"N", o.N},
                  {"D", o.D},
                  {"d", o.d},
                  {"activations", labels},
                  {"trials", trials},
                  {"train_steps", s.train_steps},
                  {"train_seeds", s.train_seeds},
                  {"tasks", s.tasks},
                  {"row_length", kRowLength},
                  {"rows", kRows},
                  {"logit_scales", kLogitScales}};
    out.summary = summary_table(out.rows, specs, s);
    return out;
  };
  return study;
}

}  // namespace attnlab::studies
