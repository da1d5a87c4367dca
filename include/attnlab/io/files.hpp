#pragma once
// Atomic file output: write to a temporary name in the same folder, fsync, rename; and records that carry their own
// checksum, so that state read back after a crash or from a damaged disk is verified before it is trusted.
#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>

namespace attnlab::io {

// The whole file as bytes (empty when it cannot be read).
std::string read_file(const std::filesystem::path& path);
void write_atomically(const std::filesystem::path& path, const std::string& content);

// `record` (a JSON object) with "checksum": a hash of its other fields as written.
nlohmann::json sealed(nlohmann::json record);
// True when `record` carries the checksum of its other fields: false for a truncated, bit-flipped or unsealed one.
bool intact(const nlohmann::json& record);

// Creates `dir` if needed and proves it writable; throws std::invalid_argument naming --out.
void ensure_writable_directory(const std::filesystem::path& dir);

}  // namespace attnlab::io
