#pragma once
// Training a sweep's points: each loaded from the point store, trained here under its lock, or waited for while
// another process (or MPI rank) trains it.
#include "sweep_catalogue.hpp"

#include <attnlab/io/progress.hpp>
#include <attnlab/mc/result.hpp>

#include <cstdint>
#include <filesystem>
#include <vector>

namespace attnlab::io {

// Every point's rows in grid order, with points under <out>/.partial/<sweep>/.
std::vector<ResultRow> run_points(const Sweep& sweep, const Grid& g, std::uint64_t seed, const std::filesystem::path& out,
                                  ProgressBar& progress_bar);

}  // namespace attnlab::io
