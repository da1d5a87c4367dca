#pragma once
// One row of a study's long-format table: a configuration × quantity with its estimate.
#include <attnlab/core/types.hpp>
#include <attnlab/mc/statistics.hpp>

#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnlab {

struct ResultRow {
  std::string study{}, quantity{}, activation{}, convention{}, precision{};
  Index N = 0, D = 0, d = 0;
  int p = 0;
  std::string k{};
  double sigma_x = std::numeric_limits<double>::quiet_NaN();
  double sigma_t = std::numeric_limits<double>::quiet_NaN();
  std::int64_t trials = 0;
  Estimate value{};
  std::vector<std::pair<std::string, std::string>> extra{};  // study-specific columns
};

// The value of an extra column, or "" when the row has none.
inline std::string extra_value(const ResultRow& r, const std::string& key) {
  for (const auto& [k, v] : r.extra)
    if (k == key) return v;
  return "";
}
// The value of an extra column, or nullopt when the row has none or it is empty.
std::optional<std::string> find_extra(const ResultRow& r, const std::string& key);
// The value of an extra column, or std::runtime_error naming the row and the column when it has none.
std::string required_extra(const ResultRow& r, const std::string& key);
// The number in an extra column, or std::runtime_error when it has none or it is not a number.
double extra_number(const ResultRow& r, const std::string& key);

// Memoises finished configurations so that a killed run resumes where it stopped.
class ResultCache {
 public:
  virtual ~ResultCache() = default;
  virtual bool find(const std::string& key, std::vector<ResultRow>& rows) = 0;
  virtual void store(const std::string& key, const std::vector<ResultRow>& rows) = 0;
};

// Returns the cached rows of `key`, or computes, stores and returns them.
template <class Compute>
std::vector<ResultRow> cached(ResultCache* cache, const std::string& key, Compute&& compute) {
  std::vector<ResultRow> rows;
  if (cache && cache->find(key, rows)) return rows;
  rows = compute();
  if (cache) cache->store(key, rows);
  return rows;
}

}  // namespace attnlab
