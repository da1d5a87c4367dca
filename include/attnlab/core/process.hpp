#pragma once
// What a piece of work costs when run alone: its wall time and the memory it touches, measured in a child process.
#include <functional>
#include <string>

namespace attnlab {

struct ProcessCost {
  double seconds = 0, megabytes = 0;
};

// Runs `work` on one thread in a forked child (libgomp's thread pool does not survive fork) and returns its wall time
// and its peak resident memory (MiB) above the child's start: the child first hands the parent's freed heap back to
// the kernel and resets its peak (clear_refs 5), so the peak counts only what `work` touches. Throws
// std::runtime_error naming `what` when the child cannot be started or fails.
ProcessCost cost_in_child(const std::string& what, const std::function<void()>& work);

}  // namespace attnlab
