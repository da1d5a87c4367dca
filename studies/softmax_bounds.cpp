// ‖softmax(A)‖_F and ‖∇softmax(A)‖_F against POLY Thm 4.1 on Gaussian logits and adversarial rows.
#include <attnlab/io/study.hpp>
#include <attnlab/theory/claims.hpp>

using namespace attnlab;

int main(int argc, char** argv) {
  io::StudyDefinition study{.name = "softmax_bounds",
                            .description = "softmax Frobenius and Jacobian norms against sqrt(N) and 2 sqrt(N)"};
  study.ensemble_flags = false;
  study.run = [](const io::StudyOptions& o, io::StudyContext& ctx) {
    const ClaimContext claims{o.seed, o.quick, static_cast<std::uint32_t>(o.trials), ctx.cache, {}};
    io::StudyOutput out;
    for (const char* id : {"poly.softmax_fro_bound", "poly.softmax_jac_bound"}) {
      auto outcome = claim_registry().find(id).check(claims);
      for (auto& r : outcome.evidence) r.study = "softmax_bounds";
      out.rows.insert(out.rows.end(), outcome.evidence.begin(), outcome.evidence.end());
      out.figures.insert(out.figures.end(), outcome.figures.begin(), outcome.figures.end());
    }
    out.figures.front().name = "softmax_bounds";
    return out;
  };
  return io::run_study(argc, argv, study);
}
