#pragma once
// A study's TOML config file: its keys are the study's flag names, its values their arguments.
#include <CLI/CLI.hpp>

#include <string>
#include <vector>

namespace attnlab::io {

// The arguments `file` adds to `argv` for the options of `app`: "--key=value" (a flag's value true or false) for every
// key not given on the command line; an array joins its items with commas. A missing or malformed file, an unknown
// key or a value of another type (a table, a date) throws std::invalid_argument "config: …".
std::vector<std::string> config_arguments(const std::string& file, const CLI::App& app,
                                          const std::vector<std::string>& argv);

// The longest error a flag's value makes, as run_study reports CLI11's (which quotes the value whole, a config file's
// list or string too): excerpt(what, kMaxFlagError).
constexpr std::size_t kMaxFlagError = 300;

}  // namespace attnlab::io
