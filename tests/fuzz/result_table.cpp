// rows_from_csv: a result table as the claims and the re-analysis read it; what it accepts writes back unchanged.
#include "fuzz.hpp"

#include <attnlab/io/table.hpp>

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::parse_or_reject([&] {
    const auto rows = io::rows_from_csv(fuzz::bytes_of(data, size), "table.csv");
    const std::string written = io::to_csv(rows);
    fuzz::expect(io::to_csv(io::rows_from_csv(written, "written")) == written,
                 "an accepted table does not write back the same");
  });
  return 0;
}

std::vector<std::string> fuzz_seeds() {
  ResultRow a;
  a.study = "poly_frobenius", a.quantity = "phi_fro", a.activation = "poly", a.convention = "paper",
  a.precision = "double";
  a.N = 64, a.D = 16, a.d = 8, a.p = 3, a.k = KScale::parse("sqrtN"), a.sigma_x = 1, a.sigma_t = 0.5, a.trials = 100;
  a.value = {.count = 100, .mean = 1.25, .se = 0.01, .ci_lo = 1.23, .ci_hi = 1.27};
  ResultRow b = a;
  b.quantity = "with, \"quotes\"", b.N = 256, b.extra = {{"seed", 3}, {"note", "a\nb"}};
  return {io::to_csv({a}), io::to_csv({a, b})};
}
