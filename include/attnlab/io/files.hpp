#pragma once
// Atomic file output: write to a temporary name in the same folder, fsync, rename.
#include <filesystem>
#include <string>

namespace attnlab::io {

// The whole file as bytes (empty when it cannot be read).
std::string read_file(const std::filesystem::path& path);
void write_atomically(const std::filesystem::path& path, const std::string& content);

// Creates `dir` if needed and proves it writable; throws std::invalid_argument naming --out.
void ensure_writable_directory(const std::filesystem::path& dir);

}  // namespace attnlab::io
