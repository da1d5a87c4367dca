#pragma once
// Training a sweep's points: each loaded from the point store, trained here under its lock, or waited for while
// another process (or MPI rank) trains it.
#include "sweep_catalogue.hpp"

#include <attnlab/io/progress.hpp>
#include <attnlab/mc/result.hpp>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace attnlab::sweeps {

// Where a sweep's finished points live: <out>/points/<sweep>/, beside the outputs, so that the points of results/
// are committed with it and a sweep continues from a fresh clone where it stopped.
std::filesystem::path point_dir(const std::filesystem::path& out, const std::string& sweep);

struct SweepRows {
  std::vector<ResultRow> rows;
  std::size_t points = 0;    // the grid's and its refinement's
  std::size_t left_out = 0;  // of those, not finished yet (Grid::finished_only)
};

// The rows of every point of the sweep, with points under point_dir(out, sweep): the grid's points in grid order,
// then those its refinement chooses from their rows (none twice).
SweepRows run_sweep(const Sweep& sweep, const Grid& g, std::uint64_t seed, const std::filesystem::path& out,
                    io::ProgressBar& progress_bar);

}  // namespace attnlab::sweeps
