// A user's --matrix and --tokens-file as the claims studies read them (read_numbers_file, parse_number_rows, then
// SoftOptions::set_matrix and set_tokens): a square matrix and a file of tokens, from the same CSV bytes.
#include "fuzz.hpp"

#include <attnlab/core/csv_number.hpp>
#include <attnlab/io/files.hpp>
#include <attnlab/theory/claims.hpp>

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::MemoryFile csv;
  const auto path = csv.path(fuzz::bytes_of(data, size));
  fuzz::parse_or_reject([&] {
    SoftOptions soft;
    soft.set_matrix(parse_number_rows(io::read_numbers_file(path, "matrix"), "matrix"));
    const auto& A = soft.matrix;
    fuzz::expect(A.rows() == A.cols() && A.rows() > 0 && A.allFinite() && A.cwiseAbs().maxCoeff() > 0,
                 "matrix: not a finite, non-zero square matrix");
  });
  fuzz::parse_or_reject([&] {
    SoftOptions soft;
    soft.set_tokens(parse_number_rows(io::read_numbers_file(path, "tokens-file"), "tokens-file"));
    fuzz::expect(soft.file_tokens.rows() == soft.n && soft.file_tokens.cols() == soft.d && soft.n > 0 && soft.d > 0 &&
                     soft.file_tokens.allFinite(),
                 "tokens: not n finite rows of d");
  });
  return 0;
}

std::vector<std::string> fuzz_seeds() {
  return {"1,0.5\n0.5,1\n", "1e-3, -2.5e+10 ,3\n4,5,6\n\n7,8,9\r\n", "0\n", "1,2\n3\n"};
}
