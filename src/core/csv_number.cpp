#include <attnlab/core/csv_number.hpp>
#include <attnlab/core/text.hpp>

#include <cmath>
#include <sstream>
#include <stdexcept>

namespace attnlab {

std::vector<std::vector<double>> parse_number_rows(const std::string& csv, const std::string& what,
                                                   std::size_t min_entries) {
  std::vector<std::vector<double>> rows;
  std::istringstream in(csv);
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = text("row ", rows.size() + 1, " (line ", line_number, ")");
    std::vector<double> row;
    std::istringstream cells(line);
    for (std::string cell; std::getline(cells, cell, ',');) {
      double v = 0;
      if (!parse_number(cell, v))
        throw std::invalid_argument(text(what, ": '", excerpt(cell), "' in ", where, " is not a number"));
      if (!std::isfinite(v))
        throw std::invalid_argument(text(what, ": '", excerpt(cell), "' in ", where, " is non-finite"));
      row.push_back(v);
    }
    if (line[line.find_last_not_of(" \t\r")] == ',')  // getline drops a trailing empty cell
      throw std::invalid_argument(text(what, ": ", where, " ends with an empty cell"));
    if (row.size() < min_entries)
      throw std::invalid_argument(
          text(what, ": ", where, " has ", row.size(), " entries, a row needs at least ", min_entries));
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw std::invalid_argument(text(what, ": empty (no rows of numbers)"));
  return rows;
}

}  // namespace attnlab
