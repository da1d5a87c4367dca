#include <attnlab/core/text.hpp>
#include <attnlab/io/progress.hpp>

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

namespace attnlab::io {
std::string duration_text(double seconds) {
  const auto s = static_cast<long>(seconds + 0.5);
  char buffer[32];
  if (s >= 3600) std::snprintf(buffer, sizeof buffer, "%ldh%02ldm", s / 3600, s / 60 % 60);
  else std::snprintf(buffer, sizeof buffer, "%ldm%02lds", s / 60, s % 60);
  return buffer;
}

ProgressBar::ProgressBar(std::string program, std::chrono::milliseconds status_interval, bool shown,
                         ProgressListener listener)
    : program_(std::move(program)),
      status_interval_(status_interval),
      shown_(shown),
      listener_(std::move(listener)),
      terminal_(shown && ::isatty(STDERR_FILENO) != 0),
      heartbeat_([this] { heartbeat(); }) {}

ProgressBar::~ProgressBar() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  heartbeat_.join();
  if (terminal_) std::fprintf(stderr, "\r\033[K");
}

void ProgressBar::stage(std::string what) {
  std::lock_guard lock(mutex_);
  stage_ = std::move(what);
  task_.clear();
  total_ = 0;
  if (listener_) listener_(stage_, task_, 0, 0);
  draw();
}

ProgressFn ProgressBar::task(const std::string& label) {
  return [this, label](std::uint32_t done, std::uint32_t total) {
    std::lock_guard lock(mutex_);
    if (task_ != label || done < done_) task_ = label, task_start_ = Clock::now();
    done_ = done, total_ = total;
    if (listener_) listener_(stage_, task_, done_, total_);
    draw();
  };
}

std::string ProgressBar::line() const {
  const auto now = Clock::now();
  std::string s = text(program_, " ", duration_text(std::chrono::duration<double>(now - start_).count()));
  if (!stage_.empty()) s += " | " + stage_;
  if (total_ == 0) return s;
  s += text(" | ", task_, " ");
  if (terminal_) {
    constexpr int width = 20;
    const int filled = static_cast<int>(width * static_cast<double>(done_) / total_);
    s += "[" + std::string(std::size_t(filled), '#') + std::string(std::size_t(width - filled), ' ') + "] ";
  }
  s += text(done_, "/", total_);
  const double elapsed = std::chrono::duration<double>(now - task_start_).count();
  if (done_ > 0 && elapsed > 1) {
    const double rate = done_ / elapsed;
    s += text(" (", sig(rate, 3), "/s, ETA ", duration_text((total_ - done_) / rate), ")");
  }
  return s;
}

void ProgressBar::draw() {
  if (!terminal_) return;
  const auto now = Clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  winsize size{};
  const std::size_t columns = ::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0 ? size.ws_col : 120;
  std::string status = line();
  if (status.size() >= columns) status.resize(columns - 1);  // a wrapped line cannot be redrawn in place
  std::fprintf(stderr, "\r\033[K%s", status.c_str());
  std::fflush(stderr);
}

void ProgressBar::heartbeat() {
  if (!shown_) return;
  std::unique_lock lock(mutex_);
  for (auto next_status = Clock::now() + status_interval_; !stopping_; next_status += status_interval_) {
    if (terminal_) {
      wake_.wait_for(lock, std::chrono::seconds(1));
      draw();  // the clocks move even when the work reports nothing
    } else if (!wake_.wait_until(lock, next_status, [this] { return stopping_; })) {
      std::fprintf(stderr, "%s\n", line().c_str());
    }
  }
}

}  // namespace attnlab::io
