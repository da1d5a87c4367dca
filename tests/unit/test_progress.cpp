// Progress off a terminal (CI logs): status lines at the interval naming the stage and the task's count, nothing
// from a run shorter than one interval, and no carriage returns.
#include <attnlab/io/progress.hpp>

#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

namespace {

std::string contents(const char* path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// What `work` writes to stderr, read back from a temporary file that stands in for it; `work` is given a function that
// reads what it has written so far.
template <class Work>
std::string stderr_of(Work&& work) {
  std::fflush(stderr);
  char path[] = "/tmp/attnlab_progress_XXXXXX";
  const int file = ::mkstemp(path);
  const int saved = ::dup(STDERR_FILENO);
  ::dup2(file, STDERR_FILENO);
  work([&path] { return contents(path); });
  std::fflush(stderr);
  ::dup2(saved, STDERR_FILENO);
  ::close(saved);
  ::close(file);
  const auto written = contents(path);
  ::unlink(path);
  return written;
}

}  // namespace

// Waits for the second line instead of sleeping a fixed time: a loaded machine delays the lines, it cannot drop them.
TEST(ProgressBar, WritesStatusLinesAtTheIntervalOffATerminal) {
  const auto written = stderr_of([](const auto& so_far) {
    attnlab::io::ProgressBar bar("demo", std::chrono::milliseconds(50));
    bar.stage("claim 1/2 poly.frob_growth");
    bar.task("trials")(5, 10);
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::minutes(1);
    const auto lines = [&] {
      const auto text = so_far();
      return std::count(text.begin(), text.end(), '\n');
    };
    while (lines() < 2 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  });
  EXPECT_EQ(written.find('\r'), std::string::npos) << written;
  std::istringstream lines(written);
  int count = 0;
  for (std::string line; std::getline(lines, line); ++count) {
    EXPECT_EQ(line.rfind("demo ", 0), 0u) << line;
    EXPECT_NE(line.find("claim 1/2 poly.frob_growth"), std::string::npos) << line;
    EXPECT_NE(line.find("trials 5/10"), std::string::npos) << line;
  }
  EXPECT_GE(count, 2) << written;
}

TEST(ProgressBar, ARunShorterThanOneIntervalPrintsNothing) {
  const auto written = stderr_of([](const auto&) {
    attnlab::io::ProgressBar bar("demo", std::chrono::seconds(10));
    bar.stage("claim 1/1 x");
    bar.task("trials")(1, 1);
  });
  EXPECT_EQ(written, "");
}
