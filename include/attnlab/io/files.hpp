#pragma once
// Atomic file output: write to a temporary name in the same folder, fsync, rename; and records that carry their own
// checksum, so that state read back after a crash or from a damaged disk is verified before it is trusted.
#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <string>

namespace attnlab::io {

// The whole file as bytes (empty when it cannot be read).
std::string read_file(const std::filesystem::path& path);
void write_atomically(const std::filesystem::path& path, const std::string& content);
// Removes the temporaries write_atomically left under `dir` (recursively) when a process was killed while writing:
// those of processes no longer alive. A rerun calls it, so that a killed run leaves nothing behind once resumed.
void remove_stale_temporaries(const std::filesystem::path& dir);
// The text of a user's CSV file of numbers; std::invalid_argument "<what>: …" when it cannot be read or is too large to
// hold once parsed.
std::string read_numbers_file(const std::filesystem::path& file, const std::string& what);

// `record` (a JSON object) with "checksum": a hash of its other fields as written.
nlohmann::json sealed(nlohmann::json record);
// True when `record` carries the checksum of its other fields: false for a truncated, bit-flipped or unsealed one.
bool intact(const nlohmann::json& record);

// An integer field of a record read back: a JSON integer within T's range, else std::out_of_range (nlohmann converts
// a float such as -2e21 to an integer with undefined behaviour, and narrows a large integer silently).
template <class T>
T integer_field(const nlohmann::json& field) {
  if (field.is_number_unsigned()) {
    const auto v = field.get<std::uint64_t>();
    if (v <= std::uint64_t(std::numeric_limits<T>::max())) return T(v);
  } else if (field.is_number_integer()) {
    const auto v = field.get<std::int64_t>();
    if (v >= std::int64_t(std::numeric_limits<T>::min()) &&
        (v < 0 || std::uint64_t(v) <= std::uint64_t(std::numeric_limits<T>::max())))
      return T(v);
  }
  throw std::out_of_range("record: an integer field holds " + field.dump());
}

// Creates `dir` if needed and proves it writable; throws std::invalid_argument naming --out.
void ensure_writable_directory(const std::filesystem::path& dir);

}  // namespace attnlab::io
