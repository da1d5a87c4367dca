#pragma once
// A plot as data: studies and claims describe figures, the io layer draws them.
#include <string>
#include <utility>
#include <vector>

namespace attnlab {

struct Series {
  std::string label;
  std::vector<double> x{}, y{};
  std::vector<double> lo{}, hi{};  // optional error bars (same size as y, or empty)
  bool connect = true;         // join the points (a curve) or leave them apart (categories)
};

struct Figure {
  std::string name;  // file stem: <name>.png
  std::string title{}, xlabel{}, ylabel{};
  bool logx = false, logy = false;
  std::vector<Series> series{};
  std::vector<std::pair<double, std::string>> xtics{};  // named ticks instead of numbers
};

}  // namespace attnlab
