// SOFT's spectral propositions: eigenvalues of softmax and Gaussian-kernel attention, the growth of the
// bottleneck pseudo-inverse with and without normalisation (Fig 6), eq 15 and Lemmas 1–2.
#include <attnlab/io/study.hpp>

int main(int argc, char** argv) {
  const auto study = attnlab::io::claims_study(
      {.name = "soft_spectral",
       .description = "spectral norms and eigenvalues of SOFT's attention and bottleneck matrices",
       .patterns = {"soft.prop3.", "soft.prop4_gauss_eig", "soft.prop5_pinv_growth", "soft.prop6_normalized",
                    "soft.eq15", "soft.lemma1", "soft.lemma2", "soft.fig6_spectral"},
       .soft_flags = true});
  return attnlab::io::run_study(argc, argv, study);
}
