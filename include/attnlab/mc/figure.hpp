#pragma once
// A plot as data: studies and claims describe figures, the io layer draws them.
#include <string>
#include <vector>

namespace attnlab {

struct Series {
  std::string label;
  std::vector<double> x, y;
  std::vector<double> lo, hi;  // optional error bars (same size as y, or empty)
  bool line_only = false;      // a reference curve rather than measured points
};

struct Figure {
  std::string name;  // file stem: <name>.png
  std::string title, xlabel, ylabel;
  bool logx = false, logy = false;
  std::vector<Series> series;
};

}  // namespace attnlab
