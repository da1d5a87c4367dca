#pragma once
// Progress of a run on stderr: on a terminal one line redrawn in place (stage, task, bar, rate, ETA); otherwise
// (CI logs, pipes) a status line every ten seconds, so that a long run is never silent and a short one prints
// nothing.
#include <attnlab/mc/driver.hpp>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace attnlab::io {

// A duration as people read it: 0m07s, 4m05s, 1h02m.
std::string duration_text(double seconds);

// Told of every stage and every task's progress, e.g. to forward them to a Python callback.
using ProgressListener =
    std::function<void(const std::string& stage, const std::string& task, std::uint32_t done, std::uint32_t total)>;

class ProgressBar {
 public:
  // `status_interval`: how often a status line is written when stderr is not a terminal; `shown` false: nothing is
  // written (the ranks of an MPI job other than 0, or a caller with a listener).
  explicit ProgressBar(std::string program, std::chrono::milliseconds status_interval = std::chrono::seconds(10),
                       bool shown = true, ProgressListener listener = {});
  ProgressBar(const ProgressBar&) = delete;
  ProgressBar& operator=(const ProgressBar&) = delete;
  ~ProgressBar();

  void stage(std::string what);               // what the run does now, e.g. "claim 3/73 poly.frob_growth"
  ProgressFn task(const std::string& label);  // a callback for one task's trials

 private:
  using Clock = std::chrono::steady_clock;
  std::string line() const;  // the status, under mutex_
  void draw();               // on a terminal: the status in place, at most ten times a second
  void heartbeat();

  const std::string program_;
  const std::chrono::milliseconds status_interval_;
  const bool shown_;
  const ProgressListener listener_;
  const bool terminal_;
  const Clock::time_point start_ = Clock::now();
  mutable std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;
  std::string stage_, task_;
  std::uint32_t done_ = 0, total_ = 0;
  Clock::time_point task_start_{}, last_draw_{};
  std::thread heartbeat_;
};

}  // namespace attnlab::io
