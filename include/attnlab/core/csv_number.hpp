#pragma once
// Numbers in CSV cells and files of them, read strictly.
#include <exception>
#include <string>
#include <vector>

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

// The rows of finite numbers of a CSV text (blank lines skipped; rows may differ in length). A cell that is empty, not
// a number or not finite, a line ending in a comma, a row of fewer than min_entries numbers, or no row at all throws
// std::invalid_argument "<what>: …" naming the row (among the non-blank lines) and the line.
std::vector<std::vector<double>> parse_number_rows(const std::string& csv, const std::string& what,
                                                   std::size_t min_entries = 1);

}  // namespace attnlab
