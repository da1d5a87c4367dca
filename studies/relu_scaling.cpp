// h(S)/N^alpha at initialisation: mean weights, row sums and Frobenius growth (RELU §3, against POLY's 1/sqrt(N)),
// their constants under the exact law of the logits, the Gaussian-logit model and softmax's level.
#include <attnlab/io/study.hpp>

int main(int argc, char** argv) {
  const auto study = attnlab::io::claims_study(
      "relu_scaling",
      "attention weights, row sums and Frobenius norms of h(S)/N^alpha over N, their constants against the exact "
      "law of the logits, the Gaussian-logit model and softmax's Frobenius level",
      {"relu."});
  return attnlab::io::run_study(argc, argv, study);
}
