#pragma once
// Shared test support: replayable seeds and named tolerances (stan-math style).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <string>

namespace attnlab::test {

// The seed of randomised tests: ATTNLAB_TEST_SEED replays a run; printed so failures can be replayed.
inline std::uint64_t seed() {
  static const std::uint64_t s = [] {
    const char* env = std::getenv("ATTNLAB_TEST_SEED");
    const std::uint64_t value = env ? std::strtoull(env, nullptr, 10) : 20261122ULL;
    std::cout << "[ seed     ] ATTNLAB_TEST_SEED=" << value << " replays this run\n";
    return value;
  }();
  return s;
}

struct Tolerances {
  double exact_rel = 1e-10;       // two exact computations of the same quantity
  double exact_abs = 1e-12;       // absolute floor near zero
  double finite_diff_rel = 1e-5;  // central differences with step ~1e-6 relative
  double finite_diff_abs = 1e-7;
};
inline constexpr Tolerances tol{};

// |a − b| ≤ abs + rel·|b|
inline ::testing::AssertionResult close(double a, double b, double rel, double abs) {
  const double limit = abs + rel * std::abs(b);
  if (std::abs(a - b) <= limit) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << a << " vs " << b << ": |diff| " << std::abs(a - b) << " > limit " << limit;
}

}  // namespace attnlab::test
