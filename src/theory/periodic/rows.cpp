// The rows of logits the PERIODIC claims run on and the columns of the property table measured on them.
#include "rows.hpp"

namespace attnlab::periodic_claims {

bool is_released(const std::string& name) { return name.find("-released") != std::string::npos; }

Activation definition(const std::string& name) {
  return ActivationSpec::parse(name).resolve(2, is_released(name) ? kReleasedHeadDim : 1);
}

std::string definition_note(const std::string& name) {
  return is_released(name) ? text(name, " (demo.py's definition, d = ", kReleasedHeadDim, ")")
                           : text(name, " (the paper's definition)");
}

MatrixD gaussian_rows(const ClaimContext& ctx, const std::string& what, Index rows, Index n, double scale) {
  MatrixD X(rows, n);
  fill_gaussian(X, GaussianStream(ctx.seed, hash_words({hash_string(what), std::uint64_t(n)}), 0, StreamTag::Logits),
                scale);
  return X;
}

Index row_count(const ClaimContext& ctx) { return ctx.sized(2000, 200); }

SearchBudget search_budget(const ClaimContext& ctx) {
  return ctx.sized(SearchBudget{.restarts = 8, .iterations = 1500, .polished = 4},
                   SearchBudget{.restarts = 2, .iterations = 300, .polished = 2});
}

std::string budget_note(const ClaimContext& ctx) {
  const auto b = search_budget(ctx);
  return text("library of extreme rows, ", b.polished, " of them polished and ", b.restarts, " random restarts, ",
              b.iterations, " hill-climbing steps each");
}

RowResult forward(const Activation& a, const VectorD& x) {
  RowResult r{VectorD(x.size()), {}};
  row_forward(a, x.data(), x.size(), r.y.data(), &r.J);
  return r;
}

VectorD prenormed(const Activation& a, const VectorD& x) {
  const Index n = x.size();
  const double gain = a.transforms.prenorm_before_scaling ? logit_scale(a) : 1.0, mean = x.mean();
  const double var = (x.array() - mean).square().sum() / double(n - 1);
  return gain * (x.array() - mean) / std::sqrt(var + gain * gain * a.transforms.prenorm_eps);
}

ResultRow evidence_row(const std::string& quantity, const std::string& activation, Index n, double value,
                       ExtraColumns extra) {
  ResultRow r{.study = "verify", .quantity = quantity, .activation = activation, .N = n};
  r.value = estimate(std::vector<double>{value});
  r.extra = std::move(extra);
  return r;
}

void save_worst(ClaimOutcome& out, const std::string& id, const Case& c) {
  if (c.logits.size() == 0) return;
  const auto file = text("worst_inputs/", id, ".csv");
  out.files.push_back({file, logits_line(c.logits) + "\n"});
  out.markdown += text("Worst input (", c.input, ", n = ", c.logits.size(), ") saved as `", file,
                       "`; replay it with\n\n```\nbuild/studies/periodic_properties --claims ", id,
                       " --logits-file OUT/", file, "\n```\n");
}

std::vector<Case> worst_cases(const ClaimContext& ctx, const std::string& what, const RowFunction& f,
                              const std::vector<Index>& sizes, std::span<const double> anchors) {
  std::vector<Case> cases;
  if (!ctx.logits.empty()) {
    for (std::size_t i = 0; i < ctx.logits.size(); ++i)
      cases.push_back({text("--logits-file line ", i + 1), f(ctx.logits[i]), ctx.logits[i]});
    return cases;
  }
  for (double scale : kScales) {
    const MatrixD X = gaussian_rows(ctx, what, row_count(ctx), kRowLength, scale);
    Case worst{text("Gaussian rows at scale ", scale), -HUGE_VAL, {}};
    for (Index i = 0; i < X.rows(); ++i) {
      const VectorD x = X.row(i).transpose();
      const double v = f(x);
      if (std::isfinite(v) && clearly_larger(v, worst.value)) worst.value = v, worst.logits = x;
    }
    cases.push_back(worst);
  }
  for (Index n : sizes) {
    const auto found = search_rows(n, f, ctx.seed, search_budget(ctx), anchors);
    cases.push_back(
        {text("search at n = ", n, " over a ", budget_note(ctx), ": ", found.family), found.best, found.logits});
  }
  return cases;
}

std::vector<double> xi_related_diagonal(const Activation& a, const MatrixD& X) {
  const auto* row = std::get_if<RowActivation>(&a.fn);
  if (!row || a.transforms.prenorm) return {};
  const RowConstants k{.logit_scale = row->logit_scale};
  MatrixD g(X.rows(), X.cols()), dg(X.rows(), X.cols());
  for (Index i = 0; i < X.rows(); ++i)
    for (Index j = 0; j < X.cols(); ++j) evaluate_row(row->fn, X(i, j), k, g(i, j), dg(i, j));
  std::vector<double> all(g.size());
  for (Index i = 0; i < g.size(); ++i) all[std::size_t(i)] = std::abs(g.data()[i]);
  std::nth_element(all.begin(), all.begin() + all.size() / 2, all.end());
  const double n = double(X.cols()), background = (n - 1) * all[all.size() / 2];
  std::vector<double> diagonal;
  for (Index i = 0; i < g.size(); ++i) {
    const double sum = g.data()[i] + background;
    diagonal.push_back(n * std::abs(dg.data()[i]) * background / (sum * sum));
  }
  return diagonal;
}

void measure_scales(const ClaimContext& ctx, const Activation& a, FunctionStats& st) {
  for (double scale : kScales) {
    const MatrixD X = gaussian_rows(ctx, "periodic-table", row_count(ctx), kRowLength, scale);
    double unstable = 0;
    std::vector<double> norms, diagonal;
    for (Index i = 0; i < X.rows(); ++i) {
      const auto r = forward(a, X.row(i).transpose());
      unstable += !r.y.allFinite() || r.y.minCoeff() < 0 || r.y.maxCoeff() > 1;
      norms.push_back(std::sqrt(r.J.frob2()));
      for (double v : r.J.diagonal()) diagonal.push_back(double(kRowLength) * std::abs(v));
    }
    st.value_unstable.push_back(unstable / double(X.rows()));
    st.frob.push_back(Sample::of(std::move(norms)));
    st.diagonal.push_back(Sample::of(std::move(diagonal)));
    if (auto xi = xi_related_diagonal(a, X); !xi.empty()) st.xi_diagonal.push_back(Sample::of(std::move(xi)));
  }
}

std::string paper_row(const std::string& name) {
  constexpr std::string_view suffix = "-released";
  if (find_activation(name).family != ActivationFamily::periodic_released) return name;
  return name.substr(0, name.size() - suffix.size());
}

std::vector<std::string> table_functions(bool released) {
  const auto demo = activation_names(ActivationFamily::periodic_released);
  std::vector<std::string> names;
  for (const auto& info : activation_registry()) {
    const bool periodic = info.family == ActivationFamily::softmax || info.family == ActivationFamily::periodic;
    if (!periodic || !kPaperTable.contains(info.name)) continue;
    const auto released_name = info.name + "-released";
    names.push_back(released && std::ranges::find(demo, released_name) != demo.end() ? released_name : info.name);
  }
  return names;
}

std::vector<std::string> released_functions() {
  auto names = activation_names(ActivationFamily::softmax);
  for (const auto& name : activation_names(ActivationFamily::periodic_released)) names.push_back(name);
  return names;
}

}  // namespace attnlab::periodic_claims
