// parse_logits_rows: rows of logits (--logits-file, activation_rows' --rows), and the exact round trip of logits_line.
#include "fuzz.hpp"

#include <attnlab/theory/extreme_rows.hpp>

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::parse_or_reject([&] {
    const auto rows = parse_logits_rows(fuzz::bytes_of(data, size), "rows", 2);
    for (const auto& row : rows) {
      fuzz::expect(row.size() >= 2 && row.allFinite(), "a row that is short or not finite");
      const auto back = parse_logits_rows(logits_line(row), "rows", 2);
      fuzz::expect(back.size() == 1 && back[0] == row, "logits_line does not read back exactly");
    }
  });
  return 0;
}

std::vector<std::string> fuzz_seeds() {
  return {"1,2,3\n", "0.33333333333333331,-2e-300,12345.678901234567,-0\n\n1,2\n", " 1 ,\t2\r\n-inf,0\n",
          "1e308,1e-320\n"};
}
