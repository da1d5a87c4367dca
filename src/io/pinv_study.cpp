#include <attnlab/core/text.hpp>
#include <attnlab/io/study.hpp>
#include <attnlab/io/table.hpp>
#include <attnlab/soft/pinv.hpp>

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

namespace attnlab::io {

namespace {

struct TraceOptions {
  std::vector<std::string> methods{"svd", "newton", "newton-beta", "released", "released-beta", "nystromformer"};
  bool float32_shift = false;
  double rank_tolerance = 0;
  bool save_iterate = false;
};

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

PinvOptions options_for(PinvMethod method, const SoftOptions& soft, const TraceOptions& trace) {
  const bool newton = method == PinvMethod::newton || method == PinvMethod::newton_beta;
  return {.method = method,
          .max_iterations = newton ? soft.max_iterations : 0,
          .tolerance = soft.tolerance,
          .float32_shift = trace.float32_shift,
          .rank_tolerance = trace.rank_tolerance};
}

}  // namespace

StudyDefinition pinv_trace_study(std::string name, std::string description, std::vector<std::string> patterns) {
  auto trace = std::make_shared<TraceOptions>();
  const auto write_traces = [trace, name](const ClaimContext& ctx, StudyOutput& out) {
    std::string steps = "input,m,method,iteration,alpha,shift,residual,residual_shifted,error,error_shifted\n";
    std::string runs =
        "input,m,method,alpha,shift,iterations,converged,diverged,beta_halvings,beta_rule_met,beta_rule_excess,"
        "reference_rank,residual,residual_shifted,error,error_shifted,status\n";
    for (const auto& input : soft_pinv_inputs(ctx, {49})) {
      for (const auto& method_name : trace->methods) {
        const PinvMethod method = parse_pinv_method(method_name);
        const auto r = pseudo_inverse(input.A, options_for(method, ctx.soft, *trace));
        const std::string head = text(csv_field(input.label), ",", input.m, ",", method_name, ",");
        for (const auto& s : r.trace)
          steps += head + text(s.iteration, ",", exact(r.alpha), ",", exact(r.shift), ",", exact(s.residual), ",",
                               exact(s.residual_shifted), ",", exact(s.error), ",", exact(s.error_shifted), "\n");
        const PinvStep last = r.trace.empty() ? PinvStep{} : r.trace.back();
        const bool rule = r.beta_halvings >= 0;
        runs += head + text(exact(r.alpha), ",", exact(r.shift), ",", r.iterations, ",", r.converged ? "true" : "false",
                            ",", r.diverged ? "true" : "false", ",", rule ? text(r.beta_halvings) : "", ",",
                            rule ? (r.beta_rule_met ? "true" : "false") : "", ",", exact(r.beta_rule_excess), ",",
                            r.reference_rank, ",", exact(last.residual), ",", exact(last.residual_shifted), ",",
                            exact(last.error), ",", exact(last.error_shifted), ",", csv_field(r.status), "\n");
        if (trace->save_iterate)
          out.files.push_back({text(name, "_iterate_", method_name, "_", input.label, "_m", input.m, ".csv"),
                               matrix_csv(r.inverse)});
      }
    }
    out.files.push_back({name + "_trace.csv", steps});
    out.files.push_back({name + "_runs.csv", runs});
    out.config["pinv_trace"] = {{"methods", trace->methods},
                                {"float32_shift", trace->float32_shift},
                                {"rank_tolerance", trace->rank_tolerance},
                                {"save_iterate", trace->save_iterate}};
  };
  auto study = claims_study(std::move(name), std::move(description), std::move(patterns), true, false, write_traces);
  study.add_flags = [claim_flags = study.add_flags, trace](CLI::App& app) {
    claim_flags(app);
    app.add_option("--method", trace->methods,
                   "pseudo-inverses to trace: svd, newton, newton-beta, released, released-beta, nystromformer (newton "
                   "and newton-beta run up to --max-iterations until --tolerance; released and released-beta their 20 "
                   "iterations, nystromformer its 6)")
        ->delimiter(',')
        ->capture_default_str();
    app.add_flag("--float32-shift", trace->float32_shift,
                 "released: shift by 0.01f = 0.009999999776482582, what the released code's float32 identity adds, "
                 "instead of 0.01");
    app.add_option("--rank-tolerance", trace->rank_tolerance,
                   "the reference pseudo-inverse drops singular values <= this x sigma_1 (0: max(rows, cols) x eps)")
        ->capture_default_str();
    app.add_flag("--save-iterate", trace->save_iterate,
                 "also write each run's final iterate as <study>_iterate_<method>_<input>_m<m>.csv");
  };
  study.validate = [claim_validate = study.validate, trace](const StudyOptions& o) {
    claim_validate(o);
    if (trace->methods.empty()) throw std::invalid_argument("method must list at least one pseudo-inverse");
    for (const auto& m : trace->methods) parse_pinv_method(m);
    if (!(trace->rank_tolerance >= 0) || !std::isfinite(trace->rank_tolerance))
      throw std::invalid_argument(text("rank-tolerance must be a finite number >= 0 (got ", trace->rank_tolerance, ")"));
  };
  return study;
}

}  // namespace attnlab::io
