#pragma once
// Figures drawn with gnuplot's pngcairo terminal. A missing gnuplot is a warning, not an error.
#include <attnlab/mc/figure.hpp>

#include <filesystem>
#include <string>

namespace attnlab::io {

// What gnuplot is given for a figure: the script, and the data file it reads (`data_file`) with one block
// per series (x y lo hi), then one per fitted line. Axis ranges are the data's own (the points, and their
// bars unless these reach far past them), padded a little; a figure with no finite point to draw says so.
struct GnuplotInput {
  std::string script, data;
};
GnuplotInput gnuplot_input(const Figure& figure, const std::string& data_file, const std::string& png_file);

// Writes <dir>/<figure.name>.png atomically; returns false (and says why in `warning`) when
// gnuplot is unavailable or fails.
bool draw_png(const Figure& figure, const std::filesystem::path& dir, std::string& warning);

}  // namespace attnlab::io
