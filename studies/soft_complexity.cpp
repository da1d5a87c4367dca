// SOFT's Nyström attention against full Gaussian-kernel attention: time and memory over n, and the
// reconstruction error of each bottleneck sampler over m.
#include <attnlab/io/study.hpp>

int main(int argc, char** argv) {
  const auto study = attnlab::io::claims_study(
      {.name = "soft_complexity",
       .description = "time, memory and reconstruction error of Nystrom attention",
       .patterns = {"soft.complexity", "soft.nystrom_error"},
       .soft_flags = true});
  return attnlab::io::run_study(argc, argv, study);
}
