#pragma once
// Every study by name: what each binary of studies/ runs, and what the Python module's run_study runs.
#include <attnlab/study/study.hpp>

#include <string>
#include <vector>

namespace attnlab::studies {

const std::vector<std::string>& study_names();
// Throws std::invalid_argument naming the unknown study and the known ones.
study::StudyDefinition find_study(const std::string& name);

// claims_study of the SOFT pseudo-inverse claims (`patterns`), plus the traces of every --method on each input of
// soft_pinv_inputs (the --matrix, or each --tokens bottleneck for each --m, default min(49, n)): <name>_trace.csv (one
// row per iteration: residual and error against A, and against A + sI for the released method) and <name>_runs.csv
// (one row per run: alpha, the beta rule's n and whether it was met, iterations to --tolerance, κ₂, σ_min/σ₁, the rank,
// the final numbers, the status); with --save-iterate each final iterate as <name>_iterate_<method>_<input>_m<m>.csv,
// at full precision. On --matrix or --tokens-file without --claims the run is exploratory (no claim is checked):
// every method runs until --tolerance or --max-iterations (default 1000), a table of the answers goes to stderr and
// <name>.png (<name>_m<m>.png for several m) draws each method's residual per iteration.
study::StudyDefinition pinv_trace_study(std::string name, std::string description, std::vector<std::string> patterns);

// Any activation on rows of the user's (--rows R.csv, each row the argument x of phi(x)): activation_rows.csv holds
// each row's sum, norm and ||J||_F per --activation, values_<activation>.csv the values, one row per input row.
study::StudyDefinition activation_rows_study();
// An activation card for each --activation (registered or a formula) beside softmax: card.md, characterise.csv and one
// figure per quantity (norm growth over N with fitted exponents, saturation and values over logit scales), the largest
// row Jacobian a search finds, the row map's properties and a short paired-seed training readout.
study::StudyDefinition characterise_study();

}  // namespace attnlab::studies
