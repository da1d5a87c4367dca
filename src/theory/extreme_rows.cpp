#include <attnlab/core/csv_number.hpp>
#include <attnlab/core/rng.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/theory/extreme_rows.hpp>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace attnlab {
namespace {

const std::vector<double> kScales{1e-8, 1e-4, 0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 100, 1e4, 1e8};

VectorD gaussian_row(Index n, std::uint64_t seed, std::uint64_t what, std::uint32_t index) {
  const GaussianStream stream(seed, hash_words({hash_string("extreme-rows"), std::uint64_t(n), what}), index,
                              StreamTag::Search);
  VectorD x(n);
  for (Index j = 0; j < n; ++j) x[j] = stream.normal(std::uint64_t(j));
  return x;
}

// Hill climbing with an adaptive step from `start`; returns the best row and its value.
std::pair<VectorD, double> climb(const RowFunction& f, VectorD x, double step, int iterations,
                                 const GaussianStream& stream, int& evaluations) {
  const auto value_of = [&](const VectorD& v) {
    ++evaluations;
    const double y = f(v);
    return std::isfinite(y) ? y : -std::numeric_limits<double>::infinity();
  };
  double value = value_of(x);
  std::uint64_t e = 0;
  for (int it = 0; it < iterations; ++it) {
    VectorD trial = x;
    for (Index j = 0; j < x.size(); ++j) trial[j] += step * stream.normal(e++);
    const double v = value_of(trial);
    if (clearly_larger(v, value)) {
      x = std::move(trial), value = v, step *= 1.5;
    } else {
      step *= 0.97;
    }
  }
  return {x, value};
}

}  // namespace

bool clearly_larger(double candidate, double incumbent) {
  constexpr double kLastBits = 1e-9;
  if (!std::isfinite(incumbent)) return candidate > incumbent;
  return candidate > incumbent + kLastBits * std::abs(incumbent);
}

std::vector<ExtremeRow> extreme_rows(Index n, std::uint64_t seed, std::span<const double> anchors) {
  if (n < 1) throw std::invalid_argument(text("extreme rows: n must be at least 1 (got ", n, ")"));
  std::vector<ExtremeRow> rows;
  const auto add = [&](std::string family, VectorD x) { rows.push_back({std::move(family), std::move(x)}); };
  std::vector<Index> ties{1, 2, n / 2, n - 1};
  std::sort(ties.begin(), ties.end());
  ties.erase(std::unique(ties.begin(), ties.end()), ties.end());
  add("constant 0", VectorD::Zero(n));
  const VectorD noise = gaussian_row(n, seed, 0, 0);
  for (double s : kScales) {
    for (double sign : {1.0, -1.0}) add(text("constant ", sign * s), VectorD::Constant(n, sign * s));
    for (Index m : ties) {
      if (m < 1 || m >= n) continue;
      for (double sign : {1.0, -1.0}) {
        VectorD x = VectorD::Zero(n);
        x.head(m).setConstant(sign * s);
        add(text(m == 1 ? "one-hot" : text("top-", m, " tie"), " at ", sign * s), x);
      }
    }
    {
      VectorD x(n);
      for (Index j = 0; j < n; ++j) x[j] = j % 2 ? -s : s;
      add(text("alternating +-", s), x);
      add(text("two values 0 and ", s), (x.array() + s) / 2);
    }
    add(text("ramp -", s, "..", s), VectorD::LinSpaced(n, -s, s));
    add(text("well separated, spacing ", s), VectorD::LinSpaced(n, 0, s * double(n - 1)));
    {
      VectorD x(n);
      for (Index j = 0; j < n; ++j) x[j] = s * std::pow(2.0, -double(std::min<Index>(j, 1000)));
      add(text("geometric ladder from ", s), x);
    }
    for (int k : {2, 4}) {
      VectorD x(n);
      for (Index j = 0; j < n; ++j) x[j] = s * double(j % k) + 1e-3 * s * noise[j];
      add(text(k, " clusters ", s, " apart"), x);
    }
    add(text("gaussian at scale ", s), s * noise);
    for (int outliers : {1, 3}) {
      VectorD x = noise;
      for (int o = 0; o < outliers && o < n; ++o) x[o] = (o % 2 ? -10 : 10) * s;
      add(text(outliers, " outlier", outliers > 1 ? "s" : "", " of +-", 10 * s, " in N(0,1)"), x);
    }
  }
  for (double a : anchors) {
    add(text("every entry at ", sig(a)), VectorD::Constant(n, a));
    VectorD straddle(n), half = noise, one = noise, all_but_one = VectorD::Constant(n, a);
    for (Index j = 0; j < n; ++j) straddle[j] = a + (j % 2 ? -1e-6 : 1e-6);
    half.head((n + 1) / 2).setConstant(a);
    one[0] = a;
    add(text("entries at ", sig(a), " +- 1e-6"), straddle);
    add(text("half the entries at ", sig(a), ", the rest N(0,1)"), half);
    add(text("one entry at ", sig(a), ", the rest N(0,1)"), one);
    for (double s : {0.1, 1.0, 10.0}) {
      all_but_one[0] = a + s;
      add(text("all entries at ", sig(a), " but one at +", s), all_but_one);
    }
  }
  for (std::size_t i = 0; i < anchors.size(); ++i)
    for (std::size_t k = i + 1; k < anchors.size(); ++k) {
      VectorD x = VectorD::Constant(n, anchors[k]);
      x.head((n + 1) / 2).setConstant(anchors[i]);
      add(text("half the entries at ", sig(anchors[i]), ", half at ", sig(anchors[k])), x);
    }
  return rows;
}

RowSearch search_rows(Index n, const RowFunction& objective, std::uint64_t seed, const SearchBudget& budget,
                      std::span<const double> anchors) {
  RowSearch result;
  const auto consider = [&](const VectorD& x, double v, const std::string& family) {
    if (std::isfinite(v) && clearly_larger(v, result.best)) result.best = v, result.logits = x, result.family = family;
  };
  std::vector<std::pair<double, std::size_t>> ranked;
  const auto library = extreme_rows(n, seed, anchors);
  for (std::size_t i = 0; i < library.size(); ++i) {
    ++result.evaluations;
    const double v = objective(library[i].logits);
    consider(library[i].logits, v, library[i].family);
    if (std::isfinite(v)) ranked.push_back({v, i});
  }
  std::stable_sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const std::uint64_t key = hash_words({hash_string("row-search"), std::uint64_t(n)});
  for (int p = 0; p < budget.polished && p < int(ranked.size()); ++p) {
    const auto& start = library[ranked[std::size_t(p)].second];
    const double step = 0.1 * std::max(start.logits.cwiseAbs().maxCoeff(), 1e-8);
    const GaussianStream stream(seed, key, std::uint32_t(budget.restarts + p), StreamTag::Search);
    const auto [x, v] = climb(objective, start.logits, step, budget.iterations, stream, result.evaluations);
    consider(x, v, "polished " + start.family);
  }
  for (int r = 0; r < budget.restarts; ++r) {
    const GaussianStream stream(seed, key, std::uint32_t(r), StreamTag::Search);
    const double scale = std::pow(10.0, r % 4 - 1);  // starts at logit scales 0.1 … 100
    const VectorD start = scale * gaussian_row(n, seed, 1, std::uint32_t(r));
    const auto [x, v] = climb(objective, start, scale, budget.iterations, stream, result.evaluations);
    consider(x, v, text("hill climbing from scale ", scale));
  }
  return result;
}

std::string logits_line(const VectorD& logits) {
  std::string line;
  for (Index j = 0; j < logits.size(); ++j) line += (j ? "," : "") + sig(logits[j], 17);
  return line;
}

std::vector<VectorD> parse_logits_rows(const std::string& csv, const std::string& what, Index min_entries) {
  std::vector<VectorD> rows;
  for (const auto& row : parse_number_rows(csv, what, std::size_t(std::max<Index>(min_entries, 1))))
    rows.push_back(Eigen::Map<const VectorD>(row.data(), Index(row.size())));
  return rows;
}

}  // namespace attnlab
