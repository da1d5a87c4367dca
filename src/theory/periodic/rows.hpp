#pragma once
// What the PERIODIC claims share: the definitions judged (the paper's and demo.py's), the rows of logits they run
// on, the measured columns of the property table, and the worst cases they keep.
#include <attnlab/attention/row_map.hpp>
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/theory/claims.hpp>
#include <attnlab/theory/extreme_rows.hpp>
#include <attnlab/theory/verdicts.hpp>

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <map>

namespace attnlab::periodic_claims {

inline constexpr double kPi = 3.14159265358979324;

// demo.py's run(): d_model = 512 over 8 heads, so the released definitions use c = 1/sqrt(64).
inline constexpr Index kReleasedHeadDim = 64;

inline constexpr Index kRowLength = 64;

inline const std::vector<double> kScales{0.1, 0.3, 1, 3, 10, 30};

inline const Threshold kUnstableRows{
    "periodic_unstable_rows", 1e-3,
    "not in the paper, whose table is qualitative: a property holds at a logit scale when at most 1 row in 1000 "
    "misbehaves"};

inline const Threshold kSaturatedEntry{
    "periodic_saturated_entry", 0.01,
    "the paper's 'gradient close to 0' as a number: an entry is saturated when n|ds_j/dx_j| < 0.01, a hundredth of "
    "a uniform softmax row's n s(1 - s) ~ 1"};

inline const Threshold kSaturatedShare{
    "periodic_saturated_share", 0.1,
    "not in the paper: 'no saturation area' at a logit scale when at most 10% of the entries are saturated"};

inline const Threshold kSoftmaxSaturates{
    "periodic_softmax_saturates", 0.5,
    "paper §1: 'a part of the input stuck in the saturation area'; read as: more than half of softmax's entries "
    "saturated at the largest logit scale; 'a part' leaves shares from 0.2 to 0.9 open (x0.4..x1.8), not a share of 1, "
    "which no row of distinct logits reaches",
    0.4, 1.8};

bool is_released(const std::string& name);

// demo.py's definitions read the logit scale c = 1/sqrt(d); the paper's do not (resolved at d = 1).
Activation definition(const std::string& name);

std::string definition_note(const std::string& name);

MatrixD gaussian_rows(const ClaimContext& ctx, const std::string& what, Index rows, Index n, double scale);

Index row_count(const ClaimContext& ctx);

SearchBudget search_budget(const ClaimContext& ctx);

std::string budget_note(const ClaimContext& ctx);

struct RowResult {
  VectorD y;
  RowJacobian J;
};

RowResult forward(const Activation& a, const VectorD& x);

// The activation's own argument z of a prenormed row (the input softmax sees), for saturation in z.
VectorD prenormed(const Activation& a, const VectorD& x);

// Order statistics of a sample, so that the judge can ask for the share below any threshold: all values up
// to kKept of them, else kKept evenly spaced order statistics (the share is then known to 1/kKept).
struct Sample {
  static constexpr std::size_t kKept = 4097;
  std::vector<double> sorted;
  std::size_t count = 0;

  static Sample of(std::vector<double> values) {
    for (auto& v : values)
      if (!std::isfinite(v)) v = HUGE_VAL;  // a non-finite value is above every threshold
    std::sort(values.begin(), values.end());
    Sample s{{}, values.size()};
    if (values.size() <= kKept) {
      s.sorted = std::move(values);
    } else {
      for (std::size_t k = 0; k < kKept; ++k) s.sorted.push_back(values[k * (values.size() - 1) / (kKept - 1)]);
    }
    return s;
  }
  // `size` entries, a share `share` of them at `value` and the others at `rest` (the share exact to 1/size): the
  // falsify crossings' sample at a threshold's edge.
  static Sample with_share(double share, double value, double rest, std::size_t size = 100000) {
    const auto k = std::size_t(std::llround(share * double(size)));
    Sample s{std::vector<double>(size, rest), size};
    std::fill_n(s.sorted.begin(), k, value);
    std::sort(s.sorted.begin(), s.sorted.end());
    return s;
  }
  double share_below(double tau) const {
    return double(std::lower_bound(sorted.begin(), sorted.end(), tau) - sorted.begin()) / double(sorted.size());
  }
  double share_above(double tau) const {
    return double(sorted.end() - std::upper_bound(sorted.begin(), sorted.end(), tau)) / double(sorted.size());
  }
  double median() const { return sorted[sorted.size() / 2]; }
  double max() const { return sorted.back(); }
};

ResultRow evidence_row(const std::string& quantity, const std::string& activation, Index n, double value,
                       ExtraColumns extra = {});

// One input and what a claim's quantity came to on it; `logits` replays it with --logits-file.
struct Case {
  std::string input;
  double value;
  VectorD logits;
};

// The worst input as worst_inputs/<id>.csv beside the report, and how to replay it.
void save_worst(ClaimOutcome& out, const std::string& id, const Case& c);

// The largest value of `f` over the given rows, or over Gaussian rows at every scale (n = 64) and an
// adversarial search at each of `sizes`; each case with the row that reached it.
std::vector<Case> worst_cases(const ClaimContext& ctx, const std::string& what, const RowFunction& f,
                              const std::vector<Index>& sizes, std::span<const double> anchors = {});

inline const Case& largest(const std::vector<Case>& cases) {
  return *first_largest(cases.begin(), cases.end(), [](const Case& c) { return c.value; });
}

// One function's measured columns; every threshold is applied by the judge.
struct FunctionStats {
  std::string name;
  std::vector<double> value_unstable{};  // per scale: share of rows with a score outside [0, 1] or not finite
  std::vector<Sample> frob{};            // per scale: ||ds/dx||_F of every row
  std::vector<Sample> diagonal{};        // per scale: n|ds_j/dx_j| of every entry
  std::vector<Sample> xi_diagonal{};     // per scale: its x_j-related part (xi_related_diagonal); empty with prenorm
  double zero_median = 0;                // median n|ds_1/dx_1| at x_1 = 0 among N(0,1) neighbours
  PowerLawFit submerged{};               // sup over x_1 of s_1 against n
  Series submerged_curve{};
};

// The x_j-related part of n|ds_j/dx_j| (PERIODIC §3: "when judging the gradient-related properties ... we only consider
// aspects related to x_i"): ds_j/dx_j = g'(x_j) C/(g(x_j) + C)^2 with the others' sum C = sum_(l != j) g(x_l) replaced
// by a background B = (n - 1) median |g| over every entry of X, so that no other entry (one near a sirenmax pole)
// decides entry j's gradient; |g|, since the median of a g of both signs (cos at large scales) is 0, no background at
// all. Empty for a transformed (prenormed) or elementwise activation, which the reading leaves as it is.
std::vector<double> xi_related_diagonal(const Activation& a, const MatrixD& X);

void measure_scales(const ClaimContext& ctx, const Activation& a, FunctionStats& st);

// The paper's table (§3, without prenorm), columns in the order of `kColumns`.
inline const std::array<const char*, 5> kColumns{"value stability", "gradient stability", "no saturation area",
                                                 "zero-region gradient good", "info not submerged"};

inline const std::map<std::string, std::array<std::string, 5>> kPaperTable{
    {"softmax", {"✓", "✓", "✘/✓", "✓", "✓"}},       {"sinmax-constant", {"✘", "✓", "✓", "✓", "✘"}},
    {"cosmax", {"✘/✓", "✘/✓", "✓", "✘", "✓"}},      {"sin2max", {"✓", "✓", "✓", "✘", "✓"}},
    {"sin2max-shifted", {"✓", "✓", "✓", "✓", "✓"}}, {"sinsoftmax", {"✓", "✓", "✓", "✓", "✓"}},
    {"sirenmax", {"✓", "✘/✓", "✓", "✓", "✓"}}};

// The paper's row a definition is judged against: demo.py's `<name>-released` is the paper's <name> (its sin_2_max
// subtracts the pi/4 that it adds, but before the 1/sqrt(d); sin_softmax is SinSoftmax).
std::string paper_row(const std::string& name);

// The functions of the paper's table as registered, in the registry's order: softmax and each PERIODIC g with a row in
// kPaperTable; with `released`, each replaced by its demo.py definition (`<name>-released`) where one is registered.
std::vector<std::string> table_functions(bool released);

// softmax and demo.py's definitions where they differ from the paper's, in the registry's order.
std::vector<std::string> released_functions();

// Each part of the catalogue adds its claims, in catalogue order (periodic_claims.cpp).
void register_softmax_gradient_claims(ClaimRegistry& r);
void register_property_table_claims(ClaimRegistry& r);
void register_value_stability_claims(ClaimRegistry& r);
void register_sinsoftmax_ratio_claims(ClaimRegistry& r);
void register_saturation_claims(ClaimRegistry& r);
void register_cosmax_claims(ClaimRegistry& r);

}  // namespace attnlab::periodic_claims
