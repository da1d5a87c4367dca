#include <attnlab/attention/row_map.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/io/files.hpp>
#include <attnlab/studies/studies.hpp>
#include <attnlab/theory/extreme_rows.hpp>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <limits>
#include <memory>
#include <stdexcept>

namespace attnlab::studies {

namespace {

struct RowsInput {
  std::string file;
  std::vector<std::string> activations{"softmax"};
  std::vector<std::string> params{};
  int p = 3;
  std::string k = "sqrtN";
  double alpha = 1.0;
  std::vector<VectorD> rows{};
  std::vector<ActivationSpec> specs{};
};

// "sirenmax+prenorm" → "sirenmax+prenorm", "x^3/sqrtN" → "x_3_sqrtN": a file name that says which activation.
std::string file_stem(const std::string& s) {
  std::string stem;
  for (char c : s) stem += std::isalnum(static_cast<unsigned char>(c)) || c == '+' || c == '-' || c == '.' ? c : '_';
  return stem;
}

ResultRow row_result(const std::string& quantity, const ActivationSpec& spec, Index row, Index n, double value) {
  const double none = std::numeric_limits<double>::quiet_NaN();
  ResultRow r{.study = "activation_rows", .quantity = quantity, .activation = spec.label(), .N = n, .trials = 1};
  r.value = {.count = std::isfinite(value) ? 1 : 0,
             .nonfinite = std::isfinite(value) ? 0 : 1,
             .mean = value,
             .se = none,
             .ci_lo = none,
             .ci_hi = none};
  r.extra.push_back({"row", row + 1});
  return r;
}

}  // namespace

study::StudyDefinition activation_rows_study() {
  study::StudyDefinition study{.name = "activation_rows",
                               .description =
                                   "any activation evaluated on rows of your own (CSV in): each row's values, "
                                   "their sum and norm, and the Frobenius norm of its Jacobian",
                               .ensemble_flags = false,
                               .monte_carlo = false};
  auto input = std::make_shared<RowsInput>();
  study.add_flags = [input](CLI::App& app, bool) {
    std::string names;
    for (const auto& info : activation_registry()) names += (names.empty() ? "" : ", ") + info.name;
    app.add_option("--rows", input->file,
                   "rows as CSV, one row of at least 2 numbers per line: each is the activation's argument x of "
                   "phi(x) (no 1/sqrt(d) is applied), N its length")
        ->required();
    study::add_activation_flags(
        app, input->activations,
        "activations by name, each optionally followed by +prenorm or +prenorm-released: " + names, &input->params);
    app.add_option("--p", input->p, "the power of x^p/k activations")->capture_default_str();
    app.add_option("--k", input->k, "the scale k of x^p/k activations: a number or sqrtN (N: the row's length)")
        ->capture_default_str();
    app.add_option("--alpha", input->alpha, "the exponent of h(x)/N^alpha activations (>= 0)")->capture_default_str();
  };
  study.validate = [input](const study::StudyOptions&) {
    input->rows = parse_logits_rows(io::read_numbers_file(input->file, "rows"), "rows", 2);
    if (!(input->alpha >= 0) || !std::isfinite(input->alpha))
      throw std::invalid_argument(text("alpha must be a finite number >= 0 (got ", input->alpha, ")"));
    input->specs.clear();
    FormulaParameters values;
    for (const auto& assignment : input->params) parse_formula_parameter(assignment, values);
    for (const auto& name : input->activations) {
      if (std::count(input->activations.begin(), input->activations.end(), name) > 1)
        throw std::invalid_argument(text("activation: '", name, "' is given twice"));
      auto spec = ActivationSpec::parse(name);
      if (spec.transforms.qk_layernorm)
        throw std::invalid_argument(text("activation: '", name, "': +qkln normalises q and k, not rows of logits"));
      spec.p = input->p;
      spec.k = KScale::parse(input->k);
      spec.alpha = input->alpha;
      if (spec.formula) spec.params = values;
      for (const auto& row : input->rows) spec.validate(row.size(), 1);
      input->specs.push_back(spec);
    }
  };
  study.run = [input](const study::StudyOptions&, study::StudyContext& ctx) {
    study::StudyOutput out;
    const auto progress = ctx.progress->task("rows");
    for (std::size_t a = 0; a < input->specs.size(); ++a) {
      const auto& spec = input->specs[a];
      std::string values;
      for (std::size_t i = 0; i < input->rows.size(); ++i) {
        const auto& x = input->rows[i];
        const Index n = x.size();
        VectorD y(n);
        RowJacobian J;
        row_forward(spec.resolve(n, 1), x.data(), n, y.data(), &J);
        out.rows.push_back(row_result("sum", spec, Index(i), n, y.sum()));
        out.rows.push_back(row_result("norm", spec, Index(i), n, y.norm()));
        out.rows.push_back(row_result("jac_frob", spec, Index(i), n, std::sqrt(J.frob2())));
        values += logits_line(y) + "\n";
        if (progress)
          progress(std::uint32_t(a * input->rows.size() + i + 1),
                   std::uint32_t(input->specs.size() * input->rows.size()));
      }
      out.files.push_back({"values_" + file_stem(input->activations[a]) + ".csv", values});
    }
    out.config["rows_file"] = input->file;
    out.config["activations"] = input->activations;
    return out;
  };
  return study;
}

}  // namespace attnlab::studies
