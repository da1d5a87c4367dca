// The constants of the RELU weights' row sums and Frobenius norm, E h(S) and E h(S)² under the exact law of the
// logits: the claims of the family that can fail, each Monte-Carlo point held to its closed form.
#include "sweep.hpp"

namespace attnlab::relu_claims {
namespace {

theory::EntryMoments gaussian_model(const std::string& h, const InitGrid& g) {
  const auto m = theory::gaussian_moments(find_activation(h).fn,
                                          std::sqrt(theory::logit_variance(grid_ensemble(g, 1), g.qk_layernorm)));
  return {m, m};
}

// "relu/N^1 grid init N=64", "softmax sd 2 N=64"
std::string point_name(const ResultRow& r) {
  const auto grid = extra_value(r, "grid"), sd = extra_value(r, "logit_sd");
  return text(r.activation, grid.empty() ? "" : " grid " + grid, sd.empty() ? "" : " sd " + sd, " N=", r.N);
}

// The headline point: relu on the init grid at the largest N.
const ConstantPoint* headline(const std::vector<ConstantPoint>& points) {
  const ConstantPoint* best = nullptr;
  for (const auto& p : points)
    if (extra_value(p.row, "grid") == "init" && p.row.activation.rfind("relu/", 0) == 0 &&
        (!best || p.row.N > best->row.N))
      best = &p;
  return best ? best : points.empty() ? nullptr : &points.back();
}

ClaimOutcome constant_outcome(const ConstantEvidence& e, const PointJudgement& j, const std::string& what) {
  ClaimOutcome out{.verdict = j.verdict, .evidence = j.rows};
  if (const auto* h = headline(e.points))
    out.measured = h->row.value.mean, out.claimed = h->exact, out.ci_lo = h->row.value.ci_lo,
    out.ci_hi = h->row.value.ci_hi;
  out.detail = text(what, " against the exact law of the logits at ", e.points.size(),
                    " points: ", e.points.size() - j.outside - j.unjudged, " within ", sig(j.z_max, 3),
                    " SE (largest |z| ", sig(std::abs(j.worst_z), 3), " at ", j.worst_point, ")",
                    j.unjudged ? text(", ", j.unjudged, " not judged (non-finite or no spread)") : "",
                    e.limits.empty() ? "" : " | N -> infinity constants:", e.limits);
  return out;
}

Figure constant_figure(const ConstantEvidence& e, const std::string& name, const std::string& title) {
  Figure fig{.name = name,
             .title = title,
             .xlabel = "N (sequence length, tokens)",
             .ylabel = "Monte-Carlo / exact, 95% CI",
             .logx = true};
  for (const auto& h : relu_functions()) {
    if (has_zero_mean(h) && e.quantity == "row_sum") continue;  // exact 0: its z is in the table
    Series s{.label = h};
    for (const auto& p : e.points)
      if (extra_value(p.row, "grid") == "init" && p.row.activation == scaled(h, 1.0, false).label()) {
        s.x.push_back(double(p.row.N));
        s.y.push_back(p.row.value.mean / p.exact);
        s.lo.push_back(p.row.value.ci_lo / p.exact);
        s.hi.push_back(p.row.value.ci_hi / p.exact);
      }
    fig.series.push_back(s);
  }
  return fig;
}

ClaimRules<ConstantEvidence> constant_rules(std::string quantity, std::string name, std::string what,
                                            std::string title) {
  return {.measure = [quantity](const ClaimContext& ctx) { return constants(relu_sweep(ctx), quantity); },
          .judge =
              [name, what, title](const ConstantEvidence& e, const Thresholds& t) {
                auto out = constant_outcome(e, judge_exact(e.points, t, "gaussian_logit"), what);
                out.figures.push_back(constant_figure(e, name, title));
                return out;
              },
          .contradict = [](ConstantEvidence& e) { contradict_points(e.points); },
          .support = [](ConstantEvidence& e) { support_points(e.points); },
          .crossings = {false_alarm_crossing()}};
}

}  // namespace

ConstantEvidence constants(const std::vector<ResultRow>& rows, const std::string& quantity) {
  ConstantEvidence e{.quantity = quantity};
  for (const auto& g : init_grids())
    for (const auto& h : relu_functions()) {
      const auto exact = exact_moments(h, g), model = gaussian_model(h, g);
      const auto pick = [&](const theory::EntryMoments& m, double N) {
        const auto level = theory::weight_levels(m, N, 1.0);
        return quantity == "row_sum" ? level.row_sum : level.frob2;
      };
      const auto c = select_curve(rows, quantity, scaled(h, 1.0, g.qk_layernorm).label(), g.name);
      for (const auto& r : c.rows) e.points.push_back({r, pick(exact, double(r.N)), pick(model, double(r.N))});
      const double limit = quantity == "row_sum" ? theory::weight_limits(exact).row_sum
                                                 : theory::weight_limits(exact).frob2;
      e.limits += text(" ", g.name, "/", h, " ", sig(limit), ";");
    }
  return e;
}

PointJudgement judge_exact(const std::vector<ConstantPoint>& points, const Thresholds& t, const std::string& model) {
  PointJudgement j;
  std::int64_t trials = 0;
  for (const auto& p : points) trials = std::max<std::int64_t>(trials, p.row.trials);
  j.z_max = critical_z(t, points.size(), trials);
  for (const auto& p : points) {
    const auto& mc = p.row.value;
    j.rows.push_back(p.row);
    j.rows.back().extra.push_back({"exact", p.exact});
    j.rows.back().extra.push_back({model, p.model});
    if (!mc.finite() || !(mc.se > 0)) {  // non-finite trials, or no spread to measure z by: kept, not judged
      ++j.unjudged;
      j.verdict = worst(j.verdict, Verdict::inconclusive);
      continue;
    }
    const double z = (mc.mean - p.exact) / mc.se;
    j.rows.back().extra.push_back({"z_exact", sig(z, 3)});
    if (std::abs(z) > j.z_max) ++j.outside, j.verdict = worst(j.verdict, Verdict::inexact);
    if (std::abs(z) >= std::abs(j.worst_z)) j.worst_z = z, j.worst_point = point_name(p.row);
  }
  return j;
}

void contradict_points(std::vector<ConstantPoint>& points) {
  for (auto& p : points) move_estimate(p.row.value, p.exact == 0 ? 5 * p.row.value.se : 1.05 * p.exact, 10);
}
void support_points(std::vector<ConstantPoint>& points) {
  for (auto& p : points) move_estimate(p.row.value, p.exact, 1);
}

Crossing<ConstantEvidence> false_alarm_crossing() {
  return {&kFamilyFalseAlarm, "the last point at the quantile of a false-alarm rate x", Verdict::inexact,
          Verdict::holds, [](ConstantEvidence& e, double x) {
            support_points(e.points);
            std::int64_t trials = 0;
            for (const auto& p : e.points) trials = std::max<std::int64_t>(trials, p.row.trials);
            auto& last = e.points.back().row.value;
            move_estimate(last, last.mean + z_at_false_alarm(x, e.points.size(), trials) * last.se, 1);
          }};
}

void register_row_sum_constant_claims(ClaimRegistry& r) {
  const std::string grids = grids_method(), law = law_method();
  r.add(make_claim<ConstantEvidence>(
      {.id = "relu.row_sum_constant",
       .source = "RELU §3 (softmax's row sums are 1); constant derived",
       .statement = "at alpha = 1 the mean row sum of h(S)/N is ((N-1) E h(S_12) + E h(S_11))/N -> E h(S), not 1",
       .method = "Monte-Carlo row sums per h, grid and N against the closed forms (Gaussian-scale-mixture and Beta "
                 "laws, theory/logit_moments.hpp), z per point with a Bonferroni quantile." +
                 grids + law},
      constant_rules("row_sum", "relu_row_sum_constant", "row sums",
                     "row sums of h(S)/N: Monte-Carlo / exact (grid init)")));
}

void register_frob_constant_claims(ClaimRegistry& r) {
  const std::string grids = grids_method(), law = law_method();
  r.add(make_claim<ConstantEvidence>(
      {.id = "relu.frob_constant",
       .source = "RELU + POLY; constant derived",
       .statement = "at alpha = 1, E||h(S)/N||_F^2 = ((N-1) E h(S_12)^2 + E h(S_11)^2)/N -> E h(S)^2",
       .method = "Monte-Carlo E||phi||_F^2 per h, grid and N against the closed forms, z per point with a "
                 "Bonferroni quantile (alpha = 1/2 is the same sample times N)." +
                 grids + law},
      constant_rules("frob2", "relu_frob_constant", "E||h(S)/N||_F^2",
                     "E||h(S)/N||_F^2: Monte-Carlo / exact (grid init)")));
}

}  // namespace attnlab::relu_claims
