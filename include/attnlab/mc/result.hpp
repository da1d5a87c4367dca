#pragma once
// One row of a study's long-format table: a configuration × quantity with its estimate.
#include <attnlab/attention/activation.hpp>
#include <attnlab/core/types.hpp>
#include <attnlab/mc/statistics.hpp>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace attnlab {

// The value of a study-specific column: a number as the study computed it (an integer stays one), or text (a label,
// a status). A number is printed by `str()` only where it is written, and read back by `number()` without parsing.
class Cell {
 public:
  Cell() = default;
  Cell(std::string text) : value_(std::move(text)) {}
  Cell(const char* text) : value_(std::string(text)) {}
  template <class T>
  requires std::is_integral_v<T> Cell(T integer) : value_(static_cast<std::int64_t>(integer)) {}
  template <class T>
  requires std::is_floating_point_v<T> Cell(T number) : value_(static_cast<double>(number)) {}

  bool is_number() const { return !std::holds_alternative<std::string>(value_); }
  bool empty() const { return !is_number() && std::get<std::string>(value_).empty(); }
  double number() const;    // std::logic_error on text
  std::string str() const;  // as the CSV and the tables print it
  // A CSV cell: a number when it is one and prints back as the same text (so reading and writing keep its bytes).
  static Cell read(const std::string& text);
  friend bool operator==(const Cell&, const Cell&) = default;

 private:
  std::variant<std::string, double, std::int64_t> value_{};
};

using ExtraColumns = std::vector<std::pair<std::string, Cell>>;

struct ResultRow {
  std::string study{}, quantity{}, activation{}, convention{}, precision{};
  Index N = 0, D = 0, d = 0;
  int p = 0;
  std::optional<KScale> k{};  // the k of x^p/k; none for every other activation
  double sigma_x = std::numeric_limits<double>::quiet_NaN();
  double sigma_t = std::numeric_limits<double>::quiet_NaN();
  std::int64_t trials = 0;
  Estimate value{};
  ExtraColumns extra{};  // study-specific columns
};

// The printed value of an extra column, or "" when the row has none.
std::string extra_value(const ResultRow& r, const std::string& key);
// The value of an extra column, or nullopt when the row has none or it is empty.
std::optional<std::string> find_extra(const ResultRow& r, const std::string& key);
// The value of an extra column, or std::runtime_error naming the row and the column when it has none.
std::string required_extra(const ResultRow& r, const std::string& key);
// The row's k, or std::runtime_error naming the row when it has none.
KScale required_k(const ResultRow& r);
// The number in an extra column, or std::runtime_error when it has none or holds text.
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
