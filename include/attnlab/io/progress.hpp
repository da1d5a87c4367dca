#pragma once
// A one-line progress bar on stderr, drawn only when stderr is a terminal.
#include <attnlab/mc/driver.hpp>

#include <chrono>
#include <string>

namespace attnlab::io {

class ProgressBar {
 public:
  ProgressBar();
  ~ProgressBar();
  ProgressFn task(const std::string& label);  // a callback for one task's trials

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point last_draw_{};
};

}  // namespace attnlab::io
