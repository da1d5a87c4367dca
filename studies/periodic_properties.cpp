// The PERIODIC paper's properties of softmax and its periodic alternatives, measured, with the property table.
#include <attnlab/io/study.hpp>

int main(int argc, char** argv) {
  const auto study = attnlab::io::claims_study(
      {.name = "periodic_properties",
       .description = "saturation, submergence, poles, prenorm, value stability and the five-property table, from "
                      "data; --logits-file replays saved rows",
       .patterns = {"periodic."},
       .logits_flag = true});
  return attnlab::io::run_study(argc, argv, study);
}
