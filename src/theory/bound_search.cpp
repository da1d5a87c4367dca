#include <attnlab/core/rng.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/theory/bound_search.hpp>

#include <cmath>

namespace attnlab {

RowSearchResult maximise_row(Index n, const RowObjective& objective, std::uint64_t seed, int restarts,
                             int iterations) {
  RowSearchResult result;
  result.best = -std::numeric_limits<double>::infinity();
  const auto consider = [&](const VectorD& a, const std::string& family) {
    const double v = objective(a);
    if (v > result.best) result = {v, a, family};
  };
  // m equal top logits, the rest `gap` below: covers one-hot and two-way ties.
  for (Index m = 1; m <= n; ++m)
    for (double gap : {0.0, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 100.0}) {
      VectorD a = VectorD::Zero(n);
      a.head(m).setConstant(gap);
      consider(a, text("top-", m, " gap ", gap));
    }
  const std::uint64_t key = hash_words({hash_string("row-search"), static_cast<std::uint64_t>(n)});
  for (int r = 0; r < restarts; ++r) {
    const GaussianStream stream(seed, key, static_cast<std::uint32_t>(r), StreamTag::Search);
    std::uint64_t e = 0;
    const double scale = std::pow(10.0, r % 4 - 1);  // starts at logit scales 0.1 … 100
    VectorD a(n);
    for (Index j = 0; j < n; ++j) a[j] = scale * stream.normal(e++);
    double value = objective(a), step = scale;
    for (int it = 0; it < iterations; ++it) {
      VectorD trial = a;
      for (Index j = 0; j < n; ++j) trial[j] += step * stream.normal(e++);
      const double v = objective(trial);
      if (v > value) {
        a = trial, value = v, step *= 1.5;
      } else {
        step *= 0.97;
      }
    }
    consider(a, text("hill climbing from scale ", scale));
  }
  return result;
}

}  // namespace attnlab
