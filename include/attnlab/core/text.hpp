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

// Bytes from a file, fit to quote in a one-line error: control and non-ASCII bytes as \xNN, cut after `max` characters.
inline std::string excerpt(const std::string& bytes, std::size_t max = 40) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  std::size_t i = 0;
  for (; i < bytes.size() && out.size() < max; ++i) {
    const auto c = static_cast<unsigned char>(bytes[i]);
    if (c >= 0x20 && c < 0x7f) out += char(c);
    else out += std::string("\\x") + hex[c >> 4] + hex[c & 15];
  }
  return i < bytes.size() ? out + "..." : out;
}

}  // namespace attnlab
