#pragma once
// What every fuzz target shares. A target defines LLVMFuzzerTestOneInput, which hands its bytes to one parser and
// aborts on anything but a result that keeps the parser's promises or a documented one-line error, and fuzz_seeds,
// valid inputs made by the library's own writers (replay.cpp writes them with --write-seeds).
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);
std::vector<std::string> fuzz_seeds();

namespace attnlab::fuzz {

// A broken promise: the input that led here is the bug's reproducer.
[[noreturn]] inline void fail(const std::string& what) {
  std::fprintf(stderr, "fuzz: %s\n", what.c_str());
  std::abort();
}
inline void expect(bool holds, const std::string& what) {
  if (!holds) fail(what);
}

// Runs `parse`; the parsers' documented errors are std::invalid_argument and std::runtime_error with a one-line
// message. Any other exception escapes to libFuzzer, which reports it as a crash.
template <class Parse>
void parse_or_reject(Parse&& parse) {
  const auto one_line = [](const std::exception& e) {
    const std::string message = e.what();
    expect(!message.empty() && message.find('\n') == std::string::npos && message.size() < 1000,
           "error message is not one short line: " + message);
  };
  try {
    parse();
  } catch (const std::invalid_argument& e) {
    one_line(e);
  } catch (const std::runtime_error& e) {
    one_line(e);
  }
}

// An in-memory file holding given bytes, for parsers that take a path.
class MemoryFile {
 public:
  MemoryFile() : fd_(::memfd_create("attnlab-fuzz", 0)) { expect(fd_ >= 0, "memfd_create failed"); }
  ~MemoryFile() { ::close(fd_); }
  MemoryFile(const MemoryFile&) = delete;
  MemoryFile& operator=(const MemoryFile&) = delete;
  std::string path(const std::string& bytes) const {
    expect(::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, bytes.data(), bytes.size(), 0) == ssize_t(bytes.size()),
           "cannot write the memory file");
    return "/proc/self/fd/" + std::to_string(fd_);
  }

 private:
  int fd_;
};

inline std::string bytes_of(const std::uint8_t* data, std::size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// Two inputs from one: a 4-byte little-endian length of the first (cut to what is there), the first, the second.
inline std::pair<std::string, std::string> split(const std::string& bytes) {
  if (bytes.size() < 4) return {};
  std::size_t first = 0;
  for (int i = 3; i >= 0; --i) first = first << 8 | std::uint8_t(bytes[std::size_t(i)]);
  first = std::min(first, bytes.size() - 4);
  return {bytes.substr(4, first), bytes.substr(4 + first)};
}
inline std::string joined(const std::string& first, const std::string& second) {
  std::string out;
  for (int i = 0; i < 4; ++i) out += char(first.size() >> (8 * i) & 0xff);
  return out + first + second;
}

}  // namespace attnlab::fuzz
