#pragma once
// A plot as data: studies and claims describe figures, the io layer draws them.
#include <attnlab/mc/statistics.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace attnlab {

// Okabe and Ito's colour-blind-safe palette without its yellow, which is faint on white: series take them in turn.
inline constexpr const char* kSeriesColours[] = {"#0072B2", "#D55E00", "#009E73", "#CC79A7",
                                                 "#E69F00", "#56B4E9", "#000000"};

// A power law c x^a fitted to a series: drawn as a line through its points, exponent and interval in the legend.
struct SeriesFit {
  PowerLawFit law;
  double x_lo = 0, x_hi = 0;  // the x it was fitted over; both 0: all of the series'
};

struct Series {
  std::string label;
  std::vector<double> x{}, y{};
  std::vector<double> lo{}, hi{};  // optional error bars (same size as y, or empty)
  bool connect = true;             // join the points (a curve) or leave them apart (categories)
  std::optional<SeriesFit> fit{};
  std::string colour{};  // "#rrggbb"; empty: the next colour of the palette
  bool x_bars = false;   // lo and hi bound x, not y (the rows of a dot plot)
  bool reference =
      false;  // a guide, not data: a dashed grey line without points, its colour not taken from the palette
};

// Text placed on a figure: x as a fraction of the plot's width (1: its right edge), y in data units.
struct FigureLabel {
  double x = 0, y = 0;
  std::string text;
  std::string colour{};
  bool bold = false;
};

struct Figure {
  std::string name;  // file stem: <name>.png
  std::string title{}, xlabel{}, ylabel{};
  bool logx = false, logy = false;
  std::vector<Series> series{};
  std::vector<std::pair<double, std::string>> xtics{};  // named ticks instead of numbers
  std::vector<std::pair<double, std::string>> ytics{};  // named rows, the first drawn at the top
  std::vector<double> xlines{}, ylines{};               // reference lines at these x (vertical) and y (horizontal)
  std::vector<FigureLabel> labels{};
  int width = 960, height = 640;  // pixels of the plot; the legend below it adds its own rows
  int right_margin = 0;           // characters kept right of the plot for labels there (0: gnuplot's own)
};

}  // namespace attnlab
