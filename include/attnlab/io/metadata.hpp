#pragma once
// What a run records next to its results: resolved config, seed, version, build and machine.
#include <nlohmann/json.hpp>

#include <string>

namespace attnlab::io {

// "<sha>" or "<sha> (dirty)": the commit the binary was built from.
std::string git_description();

nlohmann::json run_metadata(const std::string& study, const nlohmann::json& resolved_config, double wall_seconds);

}  // namespace attnlab::io
