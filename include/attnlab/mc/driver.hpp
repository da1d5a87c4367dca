#pragma once
// The Monte-Carlo driver: every trial evaluates a set of observables on one shared sample.
// Trial values are stored per trial and accumulated in trial order, so estimates are
// bit-identical for any thread count and schedule.
#include <attnlab/mc/statistics.hpp>

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace attnlab {

// Called once per finished trial (from one thread at a time).
using ProgressFn = std::function<void(std::uint32_t done, std::uint32_t total)>;

// Observable `target` is estimated with observable `control`, whose expectation `mean` is known exactly, as its control
// variate (estimate_with_control).
struct ControlVariate {
  std::size_t target = 0, control = 0;
  double mean = 0;
};

// trial(t, out) writes observable values of trial t into out (size `observables`).
// With parallel_trials the trials run concurrently (each single-threaded); otherwise they
// run in order and each trial may use all threads itself.
std::vector<Estimate> run_trials(std::uint32_t trials, std::size_t observables,
                                 const std::function<void(std::uint32_t, std::span<double>)>& trial,
                                 bool parallel_trials, const ProgressFn& progress = {},
                                 std::span<const ControlVariate> controls = {});

}  // namespace attnlab
