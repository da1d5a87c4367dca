#pragma once
// String building without <format> (not in GCC 12): text(a, b, c) streams its arguments.
#include <sstream>
#include <string>

namespace attnlab {

template <class... Args>
std::string text(const Args&... args) {
  std::ostringstream out;
  out.precision(10);
  (out << ... << args);
  return out.str();
}

// A number with `digits` significant digits, for human-readable summaries.
inline std::string sig(double v, int digits = 4) {
  std::ostringstream out;
  out.precision(digits);
  out << v;
  return out.str();
}

}  // namespace attnlab
