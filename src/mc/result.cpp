#include <attnlab/core/text.hpp>
#include <attnlab/mc/result.hpp>

#include <cstdlib>
#include <stdexcept>

namespace attnlab {

std::optional<std::string> find_extra(const ResultRow& r, const std::string& key) {
  for (const auto& [k, v] : r.extra)
    if (k == key && !v.empty()) return v;
  return std::nullopt;
}

std::string required_extra(const ResultRow& r, const std::string& key) {
  const auto v = find_extra(r, key);
  if (!v) throw std::runtime_error(text("training results: a ", r.quantity, " row of ", r.activation, " has no ", key));
  return *v;
}

double extra_number(const ResultRow& r, const std::string& key) {
  const auto v = required_extra(r, key);
  char* end = nullptr;
  const double x = std::strtod(v.c_str(), &end);
  if (end != v.c_str() + v.size())
    throw std::runtime_error(text("training results: ", key, " '", v, "' of a ", r.quantity, " row is not a number"));
  return x;
}

}  // namespace attnlab
