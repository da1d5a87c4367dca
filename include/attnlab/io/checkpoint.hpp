#pragma once
// Finished configurations persisted as JSON lines (one fsync'd line each), so a killed run
// loses at most the configuration in progress and a rerun skips what is done.
#include <attnlab/mc/result.hpp>

#include <filesystem>
#include <map>
#include <mutex>

namespace attnlab::io {

class JsonlCheckpoint final : public ResultCache {
 public:
  // Loads the lines written by the same build (`version`); lines torn by a kill or written by another
  // build are ignored, so a rerun after a fix recomputes rather than reusing old numbers.
  JsonlCheckpoint(std::filesystem::path file, std::string version);
  bool find(const std::string& key, std::vector<ResultRow>& rows) override;
  void store(const std::string& key, const std::vector<ResultRow>& rows) override;
  std::size_t resumed() const { return resumed_; }
  void remove();  // after the final outputs are written

 private:
  std::filesystem::path file_;
  std::string version_;
  std::map<std::string, std::vector<ResultRow>> done_;
  std::map<std::string, bool> from_disk_;  // key → not yet counted as resumed
  std::size_t resumed_ = 0;
  std::mutex mutex_;
};

}  // namespace attnlab::io
