#pragma once
// Adversarial search over one row of logits, for the claims that hold "for every row": a library of
// structured extreme rows, then random restarts and a local optimiser, each within a stated budget.
// The best row is returned with the family that reached it, so that a verdict can save and replay it.
#include <attnlab/core/types.hpp>

#include <cstdint>
#include <functional>
#include <limits>
#include <span>
#include <string>
#include <vector>

namespace attnlab {

struct ExtremeRow {
  std::string family;
  VectorD logits;
};

// Rows of length n: degenerate (constant, one-hot, m-way ties at a gap, two repeated values), structured
// (ramps, alternating signs, a geometric ladder), clustered and well-separated levels, each at scales from
// 1e-8 to 1e8, Gaussian rows with one or a few outliers, rows whose entries all sit at one of `anchors` (a
// function's zeros, poles or extrema) or straddle it by ±1e-6, and rows split between two anchors.
// Deterministic in (n, seed).
std::vector<ExtremeRow> extreme_rows(Index n, std::uint64_t seed, std::span<const double> anchors = {});

struct SearchBudget {
  int restarts = 8;       // random Gaussian starts, at scales 0.1, 1, 10, 100 in turn
  int iterations = 1500;  // adaptive hill-climbing steps per start
  int polished = 4;       // the best library rows also refined by hill climbing from where they are
};

struct RowSearch {
  double best = -std::numeric_limits<double>::infinity();
  VectorD logits;
  std::string family;  // the library family, "polished <family>" or "hill climbing from scale s"
  int evaluations = 0;
};

// The largest objective over the library and the searches; non-finite values are skipped (an objective that
// wants to reward a blow-up returns a large finite number). Deterministic in (n, seed, budget).
using RowFunction = std::function<double(const VectorD& logits)>;
RowSearch search_rows(Index n, const RowFunction& objective, std::uint64_t seed, const SearchBudget& budget,
                      std::span<const double> anchors = {});

// Whether `candidate` beats `incumbent` by more than a relative 1e-9: values that differ in their last bits only
// (vector libm, FMA contraction, the -march a build chose) are ties, and a tie keeps the earlier candidate, so the
// order of a search, never the CPU's rounding, decides which input wins.
bool clearly_larger(double candidate, double incumbent);

// The first element of [first, last) that no later one is clearly larger than, by `value` (last when empty).
template <class It, class Value>
It first_largest(It first, It last, Value value) {
  It best = first;
  for (It it = first; it != last; ++it)
    if (clearly_larger(value(*it), value(*best))) best = it;
  return best;
}

// A row as one CSV line with 17 significant digits (read back exactly by parse_logits_line).
std::string logits_line(const VectorD& logits);

// Rows of logits from CSV text, one row per line (blank lines skipped): parse_number_rows as vectors.
std::vector<VectorD> parse_logits_rows(const std::string& csv, const std::string& what, Index min_entries = 1);

}  // namespace attnlab
