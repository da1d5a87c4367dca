#pragma once
// What the machine offers, for refusing work that cannot fit before allocating it.
#include <attnlab/core/text.hpp>

#include <unistd.h>

#include <filesystem>
#include <stdexcept>
#include <string>

namespace attnlab {

inline double physical_memory_bytes() { return double(::sysconf(_SC_PHYS_PAGES)) * double(::sysconf(_SC_PAGE_SIZE)); }

// A CSV of numbers becomes 8 bytes per number from at least 2 in the file ("1,"): a file larger than a quarter of the
// memory cannot be held once parsed, and is refused before it is read (std::invalid_argument naming `what`).
inline void refuse_numbers_file_too_large(const std::filesystem::path& file, const std::string& what) {
  std::error_code ec;
  const auto bytes = std::filesystem::file_size(file, ec);
  if (ec) return;  // unreadable: the reader says so
  const double memory = physical_memory_bytes();
  if (4 * double(bytes) > memory)
    throw std::invalid_argument(text(what, ": '", file.string(), "' holds ", sig(double(bytes) / 1e9, 3),
                                     " GB of text, up to ", sig(4 * double(bytes) / 1e9, 3),
                                     " GB once parsed: more than this machine's ", sig(memory / 1e9, 3), " GB"));
}

}  // namespace attnlab
