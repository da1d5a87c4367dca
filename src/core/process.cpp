#include <attnlab/core/distributed.hpp>
#include <attnlab/core/process.hpp>

#include <malloc.h>
#include <omp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <stdexcept>
#include <utility>

namespace attnlab {
namespace {

// Resident and peak-resident memory of this process in MiB (/proc/self/status VmRSS, VmHWM).
std::pair<double, double> resident_mib() {
  std::ifstream status("/proc/self/status");
  double rss = 0, hwm = 0;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) == 0) rss = std::stod(line.substr(6)) / 1024;
    if (line.rfind("VmHWM:", 0) == 0) hwm = std::stod(line.substr(6)) / 1024;
  }
  return {rss, hwm};
}

}  // namespace

ProcessCost cost_in_child(const std::string& what, const std::function<void()>& work) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error(what + ": pipe failed");
  const pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(what + ": fork failed");
  if (pid == 0) {
    distributed::detach_from_job();  // the parent's MPI job is not the child's
    close(fds[0]);
    omp_set_num_threads(1);
    malloc_trim(0);
    std::ofstream("/proc/self/clear_refs") << "5";
    const double start = resident_mib().first;
    const auto t0 = std::chrono::steady_clock::now();
    work();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const ProcessCost c{seconds, resident_mib().second - start};
    [[maybe_unused]] const auto written = write(fds[1], &c, sizeof c);
    _exit(0);
  }
  close(fds[1]);
  ProcessCost c;
  const auto got = read(fds[0], &c, sizeof c);
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (got != sizeof c || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(what + ": a measuring child failed");
  return c;
}

}  // namespace attnlab
