// The PERIODIC paper's properties of softmax and its periodic alternatives, measured, with the property table.
#include <attnlab/io/study.hpp>

int main(int argc, char** argv) {
  const auto study = attnlab::io::claims_study(
      "periodic_properties",
      "saturation, submergence, poles, prenorm, value stability and the five-property table, from data; "
      "--logits-file replays saved rows",
      {"periodic."}, false, true);
  return attnlab::io::run_study(argc, argv, study);
}
