#pragma once
// What the RELU claim files share: the family's h and the two grids at initialisation, the sweep of every h over them,
// the exact law's moments, the Bonferroni quantile that many points are held to, and the constants' evidence, which
// the Gaussian-logit claims judge too.
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/norms/attention_norms.hpp>
#include <attnlab/theory/claims.hpp>
#include <attnlab/theory/logit_moments.hpp>
#include <attnlab/theory/verdicts.hpp>

#include <algorithm>
#include <cmath>
#include <map>

namespace attnlab::relu_claims {

// The RELU paper's h, as registered: a new h of the family is checked by every claim.
const std::vector<std::string>& relu_functions();

// "a, b, c"
std::string listed(const std::vector<std::string>& names);

// The h with E h(σZ) = 0 (odd ones, identity), by their closed forms: no exponent to fit to their means.
const std::vector<std::string>& zero_mean_functions();
bool has_zero_mean(const std::string& h);

// "At initialisation the elements of q and k are O(1)": q = xQ with σ_t = 1/√D, or qk-layernorm.
struct InitGrid {
  std::string name;
  double sigma_t;
  bool qk_layernorm;
};
std::vector<InitGrid> init_grids();
std::vector<Index> sizes(bool quick);
EnsembleSpec grid_ensemble(const InitGrid& g, Index N);

ActivationSpec scaled(const std::string& h, double alpha, bool qkln);
ActivationSpec poly_reference(bool qkln);
ActivationSpec softmax_reference(bool qkln);

// Every h at α = 1/2 and 1, POLY's x³/√N and softmax, on both grids, each N cached on its own.
std::vector<ResultRow> relu_sweep(const ClaimContext& ctx);

theory::EntryMoments exact_moments(const std::string& h, const InitGrid& g);

// The |z| each of `points` points is held to, so that the chance of any false alarm among them stays at
// family_false_alarm (Bonferroni).
double critical_z(const Thresholds& t, std::size_t points, std::int64_t trials);

// The z a point is held to when the family's false-alarm rate is x: a point at it lies outside the quantile the
// threshold sets for x below the rate and inside for x above it (family_false_alarm's crossings).
double z_at_false_alarm(double x, std::size_t points, std::int64_t trials);
extern const Threshold kFamilyFalseAlarm;

// Scales a row's estimate about zero (mean, SE and interval alike).
void scale_estimate(Estimate& e, double f);
// Moves a row's estimate to `mean` with its SE and interval shrunk by `precision` (more trials).
void move_estimate(Estimate& e, double mean, double precision);

// The claims' methods end with the ensemble and its grids, and the constants' with the exact law of one logit.
std::string grids_method();
std::string law_method();

// The constants' evidence (constants.cpp), which the Gaussian-logit claims (gaussian_logits.cpp) judge too.
struct ConstantPoint {
  ResultRow row;  // the Monte-Carlo estimate
  double exact;   // the exact expectation (NaN where there is none)
  double model;   // an approximation beside it: Gaussian logits, or softmax's N → ∞ limit
};

struct ConstantEvidence {
  std::string quantity;  // row_sum or frob2 (α = 1), or softmax's frob2 on Gaussian logits
  std::vector<ConstantPoint> points{};
  std::string limits{};  // the N → ∞ constants per h and grid
};

// Row sums (α = 1) and E‖ϕ‖_F² (α = 1) of every h on both grids beside their exact and Gaussian-logit values.
// α = 1/2 is the same sample times N^{1/2} (or N for frob2), so it adds no evidence.
ConstantEvidence constants(const std::vector<ResultRow>& rows, const std::string& quantity);

struct PointJudgement {
  Verdict verdict = Verdict::holds;
  double z_max = 0, worst_z = 0;
  std::size_t outside = 0, unjudged = 0;
  std::string worst_point;
  std::vector<ResultRow> rows;
};

// Each point's z = (MC − exact)/SE against the Bonferroni quantile; `model` names the approximation's column.
PointJudgement judge_exact(const std::vector<ConstantPoint>& points, const Thresholds& t, const std::string& model);

// A 5% error (5 SE off identity's zero) measured with 100 times the trials; or the exact value itself.
void contradict_points(std::vector<ConstantPoint>& points);
void support_points(std::vector<ConstantPoint>& points);
// Every point at its exact value, the last one z_at_false_alarm(x) standard errors above it.
Crossing<ConstantEvidence> false_alarm_crossing();

// Each part of the catalogue adds its claims, in catalogue order (relu_claims.cpp): the row sums' exponents and
// constant before the Frobenius norm's.
void register_row_sum_exponent_claims(ClaimRegistry& r);
void register_row_sum_constant_claims(ClaimRegistry& r);
void register_frob_exponent_claims(ClaimRegistry& r);
void register_frob_constant_claims(ClaimRegistry& r);
void register_gaussian_logit_claims(ClaimRegistry& r);

}  // namespace attnlab::relu_claims
