#include <attnlab/core/machine.hpp>
#include <attnlab/core/rng.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/io/files.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

namespace attnlab::io {

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string read_numbers_file(const std::filesystem::path& file, const std::string& what) {
  if (!std::filesystem::is_regular_file(file))
    throw std::invalid_argument(text(what, ": cannot read '", file.string(), "'"));
  refuse_numbers_file_too_large(file, what);
  return read_file(file);
}

void write_atomically(const std::filesystem::path& path, const std::string& content) {
  if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path());
  const auto tmp = path.string() + text(".tmp.", ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error(text("cannot write ", path.string(), ": ", std::strerror(errno)));
  std::size_t written = 0;
  while (written < content.size()) {
    const auto n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw std::runtime_error(text("cannot write ", path.string(), ": ", std::strerror(error)));
    }
    written += static_cast<std::size_t>(n);
  }
  // A full disk may only show here; the previous file stays until the new one is complete.
  const int synced = ::fsync(fd) == 0 ? 0 : errno;
  const int closed = ::close(fd) == 0 ? 0 : errno;
  if (synced != 0 || closed != 0) {
    const int error = synced != 0 ? synced : closed;
    ::unlink(tmp.c_str());
    throw std::runtime_error(text("cannot write ", path.string(), ": ", std::strerror(error)));
  }
  std::filesystem::rename(tmp, path);
}

void remove_stale_temporaries(const std::filesystem::path& dir) {
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(dir, ec); !ec && it != std::filesystem::end(it);
       it.increment(ec)) {
    const auto name = it->path().filename().string();
    const auto at = name.rfind(".tmp.");
    if (at == std::string::npos || !it->is_regular_file(ec)) continue;
    char* end = nullptr;
    const long pid = std::strtol(name.c_str() + at + 5, &end, 10);
    // Another live process (a second run sharing a sweep) may be writing its own; kill(pid, 0) fails only for the dead.
    if (pid > 0 && *end == '\0' && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH)
      std::filesystem::remove(it->path(), ec);
  }
}

namespace {

// The checksum of a record's fields other than "checksum", over their canonical dump (sorted keys, shortest
// round-trip numbers: the same bytes after a write and a read).
std::string checksum_of(nlohmann::json record) {
  record.erase("checksum");
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(hash_string(record.dump())));
  return hex;
}

}  // namespace

nlohmann::json sealed(nlohmann::json record) {
  record["checksum"] = checksum_of(record);
  return record;
}

bool intact(const nlohmann::json& record) {
  if (!record.is_object()) return false;
  const auto it = record.find("checksum");
  return it != record.end() && it->is_string() && *it == checksum_of(record);
}

void ensure_writable_directory(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw std::invalid_argument(text("--out: cannot create directory '", dir.string(), "': ", ec.message()));
  if (!std::filesystem::is_directory(dir))
    throw std::invalid_argument(text("--out: '", dir.string(), "' is not a directory"));
  if (::access(dir.c_str(), W_OK) != 0)
    throw std::invalid_argument(text("--out: directory '", dir.string(), "' is not writable: ", std::strerror(errno)));
}

}  // namespace attnlab::io
