#pragma once
// What an ensemble sweep study and a claims study exploring its grid share.
#include <attnlab/study/study.hpp>

#include <string>

namespace attnlab::study {

// Whether a flag that sets the swept grid (--N, --activation, ...) was given: a claims study then explores it.
bool grid_flag_given(const StudyOptions& o);
// The sweep of `grid` over the options' ensembles and activations: rows, figures, the fitted table as summary.
StudyOutput sweep_output(const std::string& name, const GridSweep& grid, const StudyOptions& o, StudyContext& ctx);

}  // namespace attnlab::study
