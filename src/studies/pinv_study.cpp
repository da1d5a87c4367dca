#include <attnlab/core/distributed.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/io/table.hpp>
#include <attnlab/soft/pinv.hpp>
#include <attnlab/soft/spectral.hpp>
#include <attnlab/studies/studies.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <memory>
#include <stdexcept>

namespace attnlab::studies {

namespace {

// The study's methods: the library's, and the released one with the 0.01f shift as a method of its own.
const std::vector<std::string> kMethods{"svd",          "newton",        "newton-beta",  "released",
                                        "released-f32", "released-beta", "nystromformer"};

// Without --max-iterations, an exploratory run runs every method this far. Algorithm 2 needs k with
// (1 − 2/κ₂²)^(2^k) ≤ tolerance, about 2 log2 κ₂ + 3 (110 for κ₂ = 1/ε), and an unmet β rule's 64 halvings add 64.
constexpr int kExploratoryCap = 1000;

struct TraceOptions {
  std::vector<std::string> methods = kMethods;
  double rank_tolerance = 0;
  bool save_iterate = false;
  bool max_iterations_given = false;
};

struct TracedMethod {
  PinvMethod method;
  bool float32_shift;
};

TracedMethod traced_method(const std::string& name) {
  if (std::find(kMethods.begin(), kMethods.end(), name) == kMethods.end())
    throw std::invalid_argument(
        text("method must be svd, newton, newton-beta, released, released-f32, released-beta or "
             "nystromformer (got '",
             name, "')"));
  if (name == "released-f32") return {PinvMethod::released, true};
  return {parse_pinv_method(name), false};
}

// Shortest text that reads back to the same double; NaN ("no such number") as an empty field.
std::string exact(double v) {
  if (std::isnan(v)) return "";
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.17g", v);
  return buffer;
}

std::string matrix_csv(const MatrixD& M) {
  std::string csv;
  for (Index i = 0; i < M.rows(); ++i) {
    for (Index j = 0; j < M.cols(); ++j) csv += (j ? "," : "") + exact(M(i, j));
    csv += "\n";
  }
  return csv;
}

// What the user's input is, in words with its real size (every label, title and table says it).
struct InputShape {
  bool matrix = false;  // the user's --matrix (no tokens), else a bottleneck of n tokens
  Index n = 0, m = 0;
  std::string words;
};

InputShape shape_of(const ClaimContext& ctx, const SoftMatrix& input) {
  if (ctx.soft.matrix.size() > 0)
    return {.matrix = true, .m = input.m, .words = text("your ", input.m, " x ", input.m, " matrix")};
  const bool file = ctx.soft.file_tokens.size() > 0;
  return {.n = ctx.soft.n,
          .m = input.m,
          .words = text("m = ", input.m, " landmarks of ", file ? "your " : "", "n = ", ctx.soft.n, " ",
                        file ? "tokens" : input.label + " tokens")};
}

// κ₂(A) = σ₁/σ_min, σ_min/σ₁, the rank under the reference's cutoff and ‖A†‖₂ (relative errors divide by it).
struct Conditioning {
  double kappa = 0, sigma_ratio = 0, rank_tolerance = 0, pinv_norm = 0;
  Index rank = 0;
};

Conditioning conditioning(const MatrixD& A, double rank_tolerance) {
  const VectorD s = singular_values(A);
  const auto reference = rank_revealing_pinv(A, rank_tolerance);
  return {.kappa = s(0) / s(s.size() - 1),
          .sigma_ratio = s(s.size() - 1) / s(0),
          .rank_tolerance = rank_tolerance > 0
                                ? rank_tolerance
                                : double(std::max(A.rows(), A.cols())) * std::numeric_limits<double>::epsilon(),
          .pinv_norm = spectral_norm_svd(reference.pinv),
          .rank = reference.rank};
}

// The first traced iteration whose `residual` is ≤ tolerance; -1 when none is.
int first_within(const std::vector<PinvStep>& trace, double tolerance, double PinvStep::*residual) {
  for (const auto& step : trace)
    if (step.*residual <= tolerance) return step.iteration;
  return -1;
}

// "how many iterations to reach the tolerance", in words: the count, or why there is none (`brief`: for a legend).
std::string to_tolerance(const PinvResult& r, int reached, int cap, bool dense, bool brief) {
  if (dense) return brief ? "dense SVD" : reached >= 0 ? "0 (dense reference)" : "not reached (dense reference)";
  if (reached >= 0) return text(reached, brief ? " iterations" : "");
  if (r.diverged) return text("diverged at ", r.iterations);
  if (r.converged && r.shift != 0)
    return brief ? text("inverts A + ", sig(r.shift, 3), " I")
                 : text("not reached: converged on A + ", sig(r.shift, 3), " I in ", r.iterations);
  return text("not reached in ", std::max(r.iterations, cap));
}

// Log-scale points of one trace: residuals that are not finite and > 0 cannot be drawn.
Series residual_series(const std::string& label, const std::vector<PinvStep>& trace) {
  Series s{.label = label};
  for (const auto& step : trace)
    if (std::isfinite(step.residual) && step.residual > 0) s.x.push_back(step.iteration), s.y.push_back(step.residual);
  return s;
}

PinvOptions options_for(const TracedMethod& m, const SoftOptions& soft, const TraceOptions& trace, bool exploratory) {
  const bool newton = m.method == PinvMethod::newton || m.method == PinvMethod::newton_beta;
  const int cap = exploratory ? (trace.max_iterations_given ? soft.max_iterations : kExploratoryCap)
                              : (newton ? soft.max_iterations : 0);
  return {.method = m.method,
          .max_iterations = cap,
          .tolerance = soft.tolerance,
          .float32_shift = m.float32_shift,
          .rank_tolerance = trace.rank_tolerance,
          .released_stop_at_tolerance = exploratory};
}

}  // namespace

study::StudyDefinition pinv_trace_study(std::string name, std::string description, std::vector<std::string> patterns) {
  auto trace = std::make_shared<TraceOptions>();
  const auto write_traces = [trace, name](const ClaimContext& ctx, study::StudyOutput& out) {
    // An exploratory run (a user's --matrix or --tokens-file, no --claims) asks how many iterations each method needs:
    // every method runs to --tolerance (the released ones too), the answers go to a table on stderr and a figure.
    const bool exploratory = out.config.value("exploratory", false);
    const int exploratory_cap = trace->max_iterations_given ? ctx.soft.max_iterations : kExploratoryCap;
    const double tolerance = ctx.soft.tolerance;
    std::string steps =
        "input,n,m,method,iteration,alpha,shift,residual,residual_shifted,error,relative_error,"
        "error_shifted\n";
    std::string runs =
        "input,n,m,method,alpha,shift,iterations,max_iterations,converged,diverged,tolerance,iterations_to_tolerance,"
        "iterations_to_tolerance_shifted,outcome,kappa_2,sigma_min_over_sigma_1,reference_rank,rank_tolerance,"
        "beta_halvings,beta_rule_met,beta_rule_excess,residual,residual_shifted,error,relative_error,error_shifted,"
        "status\n";
    const auto inputs = soft_pinv_inputs(ctx, {std::min<Index>(49, ctx.soft.n)});  // --tokens-file may hold fewer
    for (const auto& input : inputs) {
      const InputShape shape = shape_of(ctx, input);
      const Conditioning c = conditioning(input.A, trace->rank_tolerance);
      Figure figure{.name = text(name, inputs.size() > 1 ? text("_m", input.m) : ""),
                    .title = text(name, " on ", shape.words, ", kappa_2 = ", sig(c.kappa, 4)),
                    .xlabel = "iteration k",
                    .ylabel = "||A X_k A - A||_2 / ||A||_2",
                    .logy = true};
      std::string table = text(name, ": ", shape.words, ": kappa_2 = ", sig(c.kappa, 4),
                               ", sigma_min/sigma_1 = ", sig(c.sigma_ratio, 4), ", numerical rank ", c.rank,
                               " (singular values above ", sig(c.rank_tolerance, 3), " sigma_1)\n");
      char line[200];
      std::snprintf(line, sizeof line, "  %-14s %-44s %-11s %s\n", "method",
                    text("iterations to ", sig(tolerance, 3)).c_str(), "residual", "rel. error");
      table += line;
      int last_iteration = 0;
      std::string left_out;  // warnings, printed after the table
      for (const auto& method_name : trace->methods) {
        const TracedMethod method = traced_method(method_name);
        const PinvOptions options = options_for(method, ctx.soft, *trace, exploratory);
        const auto r = pseudo_inverse(input.A, options);
        const bool dense = method.method == PinvMethod::svd;
        const int reached = first_within(r.trace, tolerance, &PinvStep::residual);
        const int reached_shifted = r.shift != 0 ? first_within(r.trace, tolerance, &PinvStep::residual_shifted) : -1;
        const int cap = options.max_iterations > 0 ? options.max_iterations : r.iterations;
        const std::string answer = to_tolerance(r, reached, cap, dense, false);
        const std::string outcome = reached >= 0 ? "reached" : r.diverged ? "diverged" : "not_reached";
        const std::string head = text(io::csv_field(input.label), ",", shape.matrix ? "" : text(shape.n), ",", input.m,
                                      ",", method_name, ",");
        for (const auto& s : r.trace)
          steps += head + text(s.iteration, ",", exact(r.alpha), ",", exact(r.shift), ",", exact(s.residual), ",",
                               exact(s.residual_shifted), ",", exact(s.error), ",", exact(s.error / c.pinv_norm), ",",
                               exact(s.error_shifted), "\n");
        // A run that diverged before its first step has no numbers (empty fields, "-" in the table).
        const PinvStep last = r.trace.empty() ? PinvStep{.residual = PinvStep::none, .error = PinvStep::none}
                                              : r.trace.back();
        const bool rule = r.beta_halvings >= 0;
        runs += head + text(exact(r.alpha), ",", exact(r.shift), ",", r.iterations, ",", dense ? "" : text(cap), ",",
                            r.converged ? "true" : "false", ",", r.diverged ? "true" : "false", ",", exact(tolerance),
                            ",", reached >= 0 ? text(reached) : "", ",",
                            reached_shifted >= 0 ? text(reached_shifted) : "", ",", outcome, ",", exact(c.kappa), ",",
                            exact(c.sigma_ratio), ",", c.rank, ",", exact(c.rank_tolerance), ",",
                            rule ? text(r.beta_halvings) : "", ",", rule ? (r.beta_rule_met ? "true" : "false") : "",
                            ",", exact(r.beta_rule_excess), ",", exact(last.residual), ",",
                            exact(last.residual_shifted), ",", exact(last.error), ",", exact(last.error / c.pinv_norm),
                            ",", exact(last.error_shifted), ",", io::csv_field(r.status), "\n");
        if (trace->save_iterate)
          out.files.push_back(
              {text(name, "_iterate_", method_name, "_", input.label, "_m", input.m, ".csv"), matrix_csv(r.inverse)});
        if (!exploratory) continue;
        const auto number = [](double v) { return std::isnan(v) ? std::string("-") : sig(v, 3); };
        std::snprintf(line, sizeof line, "  %-14s %-44s %-11s %s\n", method_name.c_str(), answer.c_str(),
                      number(last.residual).c_str(), number(last.error / c.pinv_norm).c_str());
        table += line;
        auto series = residual_series(text(method_name, ": ", to_tolerance(r, reached, cap, dense, true)), r.trace);
        if (series.x.empty()) {
          const bool zero = std::any_of(r.trace.begin(), r.trace.end(),
                                        [](const PinvStep& step) { return step.residual == 0; });
          left_out += text(name, ": warning: ", method_name, " left out of ", figure.name, ".png: ",
                           zero ? "its residual is exactly 0, which a log scale cannot show"
                                : text("no finite residual (", r.status, ")"),
                           "\n");
          continue;
        }
        last_iteration = std::max(last_iteration, int(series.x.back()));
        figure.series.push_back(std::move(series));
      }
      if (!exploratory) continue;
      if (tolerance > 0)
        figure.series.push_back({.label = text("tolerance ", sig(tolerance, 3)),
                                 .x = {0.0, double(std::max(last_iteration, 1))},
                                 .y = {tolerance, tolerance}});
      out.figures.push_back(std::move(figure));
      out.summary += table;
      if (distributed::root()) std::fputs(left_out.c_str(), stderr);
    }
    out.files.push_back({name + "_trace.csv", steps});
    out.files.push_back({name + "_runs.csv", runs});
    out.config["pinv_trace"] = {{"methods", trace->methods},
                                {"rank_tolerance", trace->rank_tolerance},
                                {"save_iterate", trace->save_iterate},
                                {"max_iterations", exploratory ? exploratory_cap : ctx.soft.max_iterations},
                                {"tolerance", tolerance}};
  };
  auto study = study::claims_study({.name = std::move(name),
                                    .description = std::move(description),
                                    .patterns = std::move(patterns),
                                    .soft_flags = true,
                                    .exploratory_on_user_input = true,
                                    .extend = write_traces});
  study.add_flags = [claim_flags = study.add_flags, trace](CLI::App& app, bool quick) {
    claim_flags(app, quick);
    for (const char* input : {"--matrix", "--tokens-file"}) {
      auto* option = app.get_option(input);
      option->description(
          option->get_description() +
          "; without --claims an exploratory run: every --method's iterations to --tolerance, no verdicts");
    }
    app.get_option("--tolerance")
        ->description(
            "Newton-Schulz stopping residual (>= 0); in an exploratory run, the ||A X A - A||_2/||A||_2 that "
            "every method is asked to reach");
    app.get_option("--max-iterations")
        ->description(text("iteration cap: the claims' Newton-Schulz runs, and the traces of newton and newton-beta "
                           "(default 200); in an exploratory run (--matrix or --tokens-file without --claims) every "
                           "method's trace (default ",
                           kExploratoryCap, ")"));
    app.add_option("--method", trace->methods,
                   "pseudo-inverses to trace: svd, newton, newton-beta, released, released-f32 (the released one "
                   "shifted by 0.01f = 0.009999999776482582, what its float32 identity adds), released-beta, "
                   "nystromformer. In an exploratory run each runs until --tolerance or --max-iterations; "
                   "otherwise newton and newton-beta run until --tolerance, the released ones their 20 iterations and "
                   "nystromformer its 6")
        ->delimiter(',')
        ->capture_default_str();
    app.add_option("--rank-tolerance", trace->rank_tolerance,
                   "the reference pseudo-inverse drops singular values <= this x sigma_1 (0: max(rows, cols) x eps)")
        ->capture_default_str();
    app.add_flag("--save-iterate", trace->save_iterate,
                 "also write each run's final iterate as <study>_iterate_<method>_<input>_m<m>.csv");
  };
  study.validate = [claim_validate = study.validate, trace](const study::StudyOptions& o) {
    claim_validate(o);
    if (trace->methods.empty()) throw std::invalid_argument("method must list at least one pseudo-inverse");
    for (const auto& m : trace->methods) traced_method(m);
    if (!(trace->rank_tolerance >= 0) || !std::isfinite(trace->rank_tolerance))
      throw std::invalid_argument(
          text("rank-tolerance must be a finite number >= 0 (got ", trace->rank_tolerance, ")"));
    trace->max_iterations_given = o.was_given("--max-iterations");
  };
  return study;
}

}  // namespace attnlab::studies
