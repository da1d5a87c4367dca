#pragma once
// Adversarial search for the largest value of a function of one row of logits: random-restart
// hill climbing with an adaptive step, plus structured families (m equal top logits with a gap).
#include <attnlab/core/types.hpp>

#include <cstdint>
#include <functional>
#include <string>

namespace attnlab {

struct RowSearchResult {
  double best = 0;
  VectorD logits;
  std::string family;  // the input family that reached `best`
};

using RowObjective = std::function<double(const VectorD& logits)>;

RowSearchResult maximise_row(Index n, const RowObjective& objective, std::uint64_t seed, int restarts = 8,
                             int iterations = 1500);

}  // namespace attnlab
