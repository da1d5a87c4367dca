// Every registered claim with its verdict: claims.csv, report.md, verify.csv and the figures.
#include <attnlab/io/metadata.hpp>
#include <attnlab/io/report.hpp>
#include <attnlab/io/study.hpp>
#include <attnlab/theory/claims.hpp>


using namespace attnlab;

int main(int argc, char** argv) {
  std::vector<std::string> ids;
  io::StudyDefinition study{.name = "verify",
                            .description = "check every claim of CLAIMS.md and write claims.csv and report.md"};
  study.ensemble_flags = false;
  study.add_flags = [&](CLI::App& app) {
    app.add_option("--claims", ids, "claim ids to check (default: all)")->delimiter(',');
  };
  study.validate = [&](const io::StudyOptions&) {
    for (const auto& id : ids) claim_registry().find(id);
  };
  study.run = [&](const io::StudyOptions& o, io::StudyContext& ctx) {
    const ClaimContext claims{o.seed, o.quick, static_cast<std::uint32_t>(o.trials), ctx.cache,
                              [&](const std::string& label) { return ctx.progress->task(label); }};
    std::vector<io::CheckedClaim> checked;
    for (const auto& claim : claim_registry().all())
      if (ids.empty() || std::find(ids.begin(), ids.end(), claim.id) != ids.end())
        checked.push_back({&claim, claim.check(claims)});
    io::StudyOutput out;
    Figure summary{"verify", "measured / claimed per claim (1 = agreement)", "", "measured / claimed", false, true, {}, {}};
    Series ratio{"measured / claimed with 95% CI", {}, {}, {}, {}, false};
    for (std::size_t i = 0; i < checked.size(); ++i) {
      const auto& c = checked[i];
      for (auto r : c.outcome.evidence) {
        r.extra.insert(r.extra.begin(), {"claim_id", c.claim->id});
        out.rows.push_back(std::move(r));
      }
      out.figures.insert(out.figures.end(), c.outcome.figures.begin(), c.outcome.figures.end());
      if (c.outcome.claimed != 0) {
        ratio.x.push_back(double(i + 1));
        summary.xtics.push_back({double(i + 1), c.claim->id});
        ratio.y.push_back(c.outcome.measured / c.outcome.claimed);
        ratio.lo.push_back(c.outcome.ci_lo / c.outcome.claimed);
        ratio.hi.push_back(c.outcome.ci_hi / c.outcome.claimed);
      }
    }
    summary.series.push_back(ratio);
    out.figures.insert(out.figures.begin(), summary);
    out.files.push_back({"claims.csv", io::claims_csv(checked)});
    const nlohmann::json run{{"seed", o.seed}, {"quick", o.quick}, {"git_sha", io::git_description()}};
    out.files.push_back({"report.md", io::report_markdown(checked, run)});
    return out;
  };
  return io::run_study(argc, argv, study);
}
