#pragma once
// Figures drawn with gnuplot's pngcairo terminal. A missing gnuplot is a warning, not an error.
#include <attnlab/mc/figure.hpp>

#include <filesystem>
#include <string>

namespace attnlab::io {

// Writes <dir>/<figure.name>.png atomically; returns false (and says why in `warning`) when
// gnuplot is unavailable or fails.
bool draw_png(const Figure& figure, const std::filesystem::path& dir, std::string& warning);

}  // namespace attnlab::io
