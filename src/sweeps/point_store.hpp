#pragma once
// A sweep's finished points on disk, shared by every process running the sweep: <dir>/<key hash>.json once a point
// is finished, and <key hash>.lock, on which the process training it holds an exclusive flock (the kernel releases
// it when that process dies).
#include <attnlab/io/sweep_point.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace attnlab::sweeps {

class PointStore {
 public:
  explicit PointStore(std::filesystem::path dir);

  std::optional<io::PointResult> load(const std::string& key) const;
  // The lock of the point, or -1 when another live process holds it.
  int try_lock(const std::string& key) const;
  // Releases a lock; every holder checks for the finished point first, so removing the file is always safe.
  void unlock(const std::string& key, int fd) const;
  void store(const std::string& key, const io::PointResult& result) const;

 private:
  std::filesystem::path file(const std::string& key, const char* suffix) const;

  std::filesystem::path dir_;
};

}  // namespace attnlab::sweeps
