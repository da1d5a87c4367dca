// Every registered claim with its verdict: claims.csv, report.md, verify.csv and the figures.
#include <attnlab/io/study.hpp>

int main(int argc, char** argv) {
  const auto study = attnlab::io::claims_study(
      {.name = "verify", .description = "check every claim of CLAIMS.md and write claims.csv and report.md"});
  return attnlab::io::run_study(argc, argv, study);
}
