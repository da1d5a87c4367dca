#include "point_store.hpp"

#include <attnlab/core/rng.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/io/files.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace attnlab::sweeps {

namespace fs = std::filesystem;

PointStore::PointStore(fs::path dir) : dir_(std::move(dir)) { fs::create_directories(dir_); }

std::optional<io::PointResult> PointStore::load(const std::string& key) const {
  const auto path = file(key, ".json");
  return fs::exists(path) ? io::read_point_record(io::read_file(path), key) : std::nullopt;
}

int PointStore::try_lock(const std::string& key) const {
  const auto path = file(key, ".lock");
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error(text("cannot open ", path.string(), ": ", std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) == 0) return fd;
  const int error = errno;
  ::close(fd);
  if (error == EWOULDBLOCK) return -1;
  throw std::runtime_error(text("cannot lock ", path.string(), ": ", std::strerror(error)));
}

void PointStore::unlock(const std::string& key, int fd) const {
  fs::remove(file(key, ".lock"));
  ::close(fd);
}

void PointStore::store(const std::string& key, const io::PointResult& result) const {
  io::write_atomically(file(key, ".json"), io::point_record(key, result));
}

fs::path PointStore::file(const std::string& key, const char* suffix) const {
  char name[32];
  std::snprintf(name, sizeof name, "%016llx", static_cast<unsigned long long>(hash_string(key)));
  return dir_ / (std::string(name) + suffix);
}

}  // namespace attnlab::sweeps
