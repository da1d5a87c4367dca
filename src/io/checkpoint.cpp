#include <attnlab/core/text.hpp>
#include <attnlab/io/checkpoint.hpp>
#include <attnlab/io/files.hpp>
#include <attnlab/io/table.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <stdexcept>

namespace attnlab::io {

JsonlCheckpoint::JsonlCheckpoint(std::filesystem::path file, std::string version)
    : file_(std::move(file)), version_(std::move(version)) {
  std::ifstream in(file_);
  std::string line;
  while (std::getline(in, line)) {
    try {
      const auto j = nlohmann::json::parse(line);
      if (!intact(j) || j.at("version") != version_) continue;  // damaged, or another build's: recomputed
      std::vector<ResultRow> rows;
      for (const auto& r : j.at("rows")) rows.push_back(row_from_json(r));
      const auto key = j.at("key").get<std::string>();
      done_[key] = std::move(rows);
      from_disk_[key] = true;
    } catch (const std::exception&) {
      // A line torn by a kill: that configuration is recomputed.
    }
  }
}

bool JsonlCheckpoint::find(const std::string& key, std::vector<ResultRow>& rows) {
  std::lock_guard lock(mutex_);
  const auto it = done_.find(key);
  if (it == done_.end()) return false;
  rows = it->second;
  if (auto d = from_disk_.find(key); d != from_disk_.end() && d->second) d->second = false, ++resumed_;
  return true;
}

void JsonlCheckpoint::store(const std::string& key, const std::vector<ResultRow>& rows) {
  std::lock_guard lock(mutex_);
  nlohmann::json j{{"version", version_}, {"key", key}, {"rows", nlohmann::json::array()}};
  for (const auto& r : rows) j["rows"].push_back(to_json(r));
  const std::string line = sealed(std::move(j)).dump() + "\n";
  std::filesystem::create_directories(file_.parent_path());
  const int fd = ::open(file_.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  const bool written = fd >= 0 && ::write(fd, line.data(), line.size()) == static_cast<ssize_t>(line.size()) &&
                       ::fsync(fd) == 0;
  if (fd >= 0) ::close(fd);
  if (!written) throw std::runtime_error(text("cannot append to checkpoint ", file_.string()));
  done_[key] = rows;
}

void JsonlCheckpoint::remove() {
  std::error_code ec;
  std::filesystem::remove(file_, ec);
  if (std::filesystem::is_empty(file_.parent_path(), ec)) std::filesystem::remove(file_.parent_path(), ec);
}

}  // namespace attnlab::io
