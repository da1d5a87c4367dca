#include <attnlab/mc/driver.hpp>

#include <omp.h>

namespace attnlab {

std::vector<Estimate> run_trials(std::uint32_t trials, std::size_t observables,
                                 const std::function<void(std::uint32_t, std::span<double>)>& trial,
                                 bool parallel_trials, const ProgressFn& progress) {
  std::vector<double> values(static_cast<std::size_t>(trials) * observables);
  std::uint32_t done = 0;
#pragma omp parallel for schedule(dynamic) if (parallel_trials)
  for (std::int64_t t = 0; t < static_cast<std::int64_t>(trials); ++t) {
    trial(static_cast<std::uint32_t>(t), std::span<double>(values.data() + t * observables, observables));
#pragma omp critical(attnlab_progress)
    {
      ++done;
      if (progress) progress(done, trials);
    }
  }
  std::vector<Estimate> estimates(observables);
  std::vector<double> column(trials);
  for (std::size_t o = 0; o < observables; ++o) {
    for (std::uint32_t t = 0; t < trials; ++t) column[t] = values[t * observables + o];
    estimates[o] = estimate(column);
  }
  return estimates;
}

}  // namespace attnlab
