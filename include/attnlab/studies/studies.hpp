#pragma once
// Every study by name: what each binary of studies/ runs, and what the Python module's run_study runs.
#include <attnlab/study/study.hpp>

#include <string>
#include <vector>

namespace attnlab::io {

const std::vector<std::string>& study_names();
// Throws std::invalid_argument naming the unknown study and the known ones.
StudyDefinition find_study(const std::string& name);

}  // namespace attnlab::io
