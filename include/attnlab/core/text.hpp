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

}  // namespace attnlab
