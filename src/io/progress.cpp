#include <attnlab/io/progress.hpp>

#include <unistd.h>

#include <cstdio>

namespace attnlab::io {

ProgressBar::ProgressBar() : enabled_(::isatty(STDERR_FILENO) != 0) {}

ProgressBar::~ProgressBar() {
  if (enabled_) std::fprintf(stderr, "\r\033[K");
}

ProgressFn ProgressBar::task(const std::string& label) {
  if (!enabled_) return {};
  return [this, label](std::uint32_t done, std::uint32_t total) {
    const auto now = std::chrono::steady_clock::now();
    if (done != total && now - last_draw_ < std::chrono::milliseconds(100)) return;
    last_draw_ = now;
    constexpr int width = 30;
    const int filled = static_cast<int>(width * static_cast<double>(done) / total);
    std::fprintf(stderr, "\r\033[K%-34.34s [%.*s%*s] %u/%u", label.c_str(), filled, "##############################",
                 width - filled, "", done, total);
    std::fflush(stderr);
  };
}

}  // namespace attnlab::io
