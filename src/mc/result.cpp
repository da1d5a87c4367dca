#include <attnlab/core/text.hpp>
#include <attnlab/mc/result.hpp>

#include <charconv>
#include <stdexcept>

namespace attnlab {

double Cell::number() const {
  if (const auto* x = std::get_if<double>(&value_)) return *x;
  if (const auto* n = std::get_if<std::int64_t>(&value_)) return double(*n);
  throw std::logic_error(text("the cell '", std::get<std::string>(value_), "' holds text, not a number"));
}

std::string Cell::str() const {
  return std::visit([](const auto& v) { return text(v); }, value_);
}

Cell Cell::read(const std::string& text) {
  const char* end = text.data() + text.size();
  std::int64_t n = 0;
  if (auto [ptr, ec] = std::from_chars(text.data(), end, n); ec == std::errc{} && ptr == end && Cell(n).str() == text)
    return n;
  double x = 0;
  if (auto [ptr, ec] = std::from_chars(text.data(), end, x); ec == std::errc{} && ptr == end && Cell(x).str() == text)
    return x;
  return text;
}

namespace {

const Cell* find_cell(const ResultRow& r, const std::string& key) {
  for (const auto& [k, v] : r.extra)
    if (k == key) return &v;
  return nullptr;
}

std::runtime_error missing(const ResultRow& r, const std::string& key) {
  return std::runtime_error(text("a ", r.quantity, " row of ", r.activation, " has no ", key));
}

}  // namespace

std::string extra_value(const ResultRow& r, const std::string& key) {
  const Cell* cell = find_cell(r, key);
  return cell ? cell->str() : "";
}

std::optional<std::string> find_extra(const ResultRow& r, const std::string& key) {
  const Cell* cell = find_cell(r, key);
  if (!cell || cell->empty()) return std::nullopt;
  return cell->str();
}

std::string required_extra(const ResultRow& r, const std::string& key) {
  const auto v = find_extra(r, key);
  if (!v) throw missing(r, key);
  return *v;
}

KScale required_k(const ResultRow& r) {
  if (!r.k) throw missing(r, "k");
  return *r.k;
}

double extra_number(const ResultRow& r, const std::string& key) {
  const Cell* cell = find_cell(r, key);
  if (!cell || cell->empty()) throw missing(r, key);
  if (!cell->is_number())
    throw std::runtime_error(text(key, " '", cell->str(), "' of a ", r.quantity, " row is not a number"));
  return cell->number();
}

}  // namespace attnlab
