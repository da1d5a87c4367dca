#pragma once
// Numbers in CSV cells, read strictly.
#include <exception>
#include <string>

namespace attnlab {

// True when the whole cell (blanks around it allowed) is one number, stored in `value`.
inline bool parse_number(const std::string& cell, double& value) {
  std::size_t used = 0;
  try {
    value = std::stod(cell, &used);
  } catch (const std::exception&) {
    return false;
  }
  return used > 0 && cell.find_first_not_of(" \t\r", used) == std::string::npos;
}

}  // namespace attnlab
