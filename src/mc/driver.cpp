#include <attnlab/core/distributed.hpp>
#include <attnlab/mc/driver.hpp>

#include <omp.h>

#include <algorithm>

namespace attnlab {

std::vector<Estimate> run_trials(std::uint32_t trials, std::size_t observables,
                                 const std::function<void(std::uint32_t, std::span<double>)>& trial,
                                 bool parallel_trials, const ProgressFn& progress,
                                 std::span<const ControlVariate> controls) {
  // In an MPI job each rank runs its block of trials; every rank then holds every trial's values.
  const auto block = distributed::block_of(trials, distributed::rank(), distributed::size());
  const auto first = static_cast<std::int64_t>(block.first), last = static_cast<std::int64_t>(block.last);
  std::vector<double> mine(static_cast<std::size_t>(last - first) * observables);
  std::uint32_t done = 0;
#pragma omp parallel for schedule(dynamic) if (parallel_trials)
  for (std::int64_t t = first; t < last; ++t) {
    trial(static_cast<std::uint32_t>(t), std::span<double>(mine.data() + (t - first) * observables, observables));
#pragma omp critical(attnlab_progress)
    {
      ++done;
      // The ranks run alike: this rank's share stands for the job's.
      if (progress) progress(std::min(trials, done * std::uint32_t(distributed::size())), trials);
    }
  }
  const auto values = distributed::all_blocks(mine, trials, observables);
  const auto column = [&](std::size_t o) {
    std::vector<double> c(trials);
    for (std::uint32_t t = 0; t < trials; ++t) c[t] = values[t * observables + o];
    return c;
  };
  std::vector<Estimate> estimates(observables);
  for (std::size_t o = 0; o < observables; ++o) estimates[o] = estimate(column(o));
  for (const auto& cv : controls)
    estimates[cv.target] = estimate_with_control(column(cv.target), column(cv.control), cv.mean);
  return estimates;
}

}  // namespace attnlab
