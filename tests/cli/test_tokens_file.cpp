// --tokens-file on the SOFT studies, run as a user would: the claims judge the file's tokens (evidence rows labelled
// tokens_file) with the values an independent computation gives, and a worst case saved as tokens replays with it.
#include "cli_support.hpp"

#include <Eigen/Dense>

#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

using namespace attnlab::test::cli;

namespace {

using Matrix = Eigen::MatrixXd;

}  // namespace

// λ₁/n of the Gaussian kernel S_ij = exp(−‖t_i − t_j‖²/(2√d)) of the file's tokens, by a dense symmetric eigensolver;
// the study's Lanczos value (tolerance 1e-12) is written with 10 significant digits, hence 1e-8.
TEST(TokensFile, GaussianKernelClaimJudgesTheFilesTokens) {
  const ScratchDir dir("tokens_file_prop4");
  const Eigen::Index n = 24, d = 5;
  std::mt19937_64 rng(attnlab::test::seed());
  std::normal_distribution<double> normal(0.0, 0.6);
  Matrix T(n, d);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < d; ++j) T(i, j) = normal(rng);
  std::ofstream(dir / "tokens.csv") << matrix_csv(T);
  const auto r = run("soft_spectral", {"--quick", "--claims", "soft.prop4_gauss_eig", "--tokens-file",
                                       (dir / "tokens.csv").string(), "--out", (dir / "out").string()});
  ASSERT_EQ(r.code, 0) << r.err;

  Matrix S(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j)
      S(i, j) = std::exp(-(T.row(i) - T.row(j)).squaredNorm() / (2 * std::sqrt(double(d))));
  const double expected = Eigen::SelfAdjointEigenSolver<Matrix>(S).eigenvalues().maxCoeff() / double(n);

  const auto rows = read_csv(dir / "out" / "soft_spectral.csv");
  const auto measured = rows_where(rows, {{"quantity", "lambda1_over_n"}});
  ASSERT_EQ(measured.size(), 1u) << "one input: the file's tokens, no ensemble or structured extreme";
  EXPECT_EQ(rows.at(measured[0], "activation"), "tokens_file");
  EXPECT_EQ(rows.at(measured[0], "N"), std::to_string(n));
  EXPECT_TRUE(attnlab::test::close(std::stod(rows.at(measured[0], "mean")), expected, 1e-8, 0));
  // Its own tokens are the worst (and only) input, saved back at full precision.
  const Matrix saved = read_matrix(dir / "out" / "worst_inputs" / "soft.prop4_gauss_eig.tokens.csv");
  EXPECT_TRUE(saved.rows() == n && saved.cols() == d && saved == T) << saved;
}

// A worst case whose object is tokens is saved as worst_inputs/<id>.tokens.csv; the replay its row names gives the
// worst ratio again (the same tokens, kernel and landmarks, so the same 10-digit text).
TEST(TokensFile, SavedWorstTokensReplayTheirRatio) {
  struct Replay {
    std::string claim;
    std::vector<std::string> search;  // arguments of the run that searches
    bool needs_m;                     // eq15's replay takes the worst input's m (and the seed)
  };
  // Gaussian tokens only for eq15: pooled grid landmarks do not replay through a file, so they keep no tokens.
  for (const Replay& c : {Replay{"soft.prop4_gauss_eig", {}, false},
                          Replay{"soft.eq15", {"--n", "64", "--tokens", "gaussian", "--seed", "7"}, true}}) {
    SCOPED_TRACE(c.claim);
    const ScratchDir dir("tokens_file_replay");
    auto args = c.search;
    args.insert(args.end(), {"--quick", "--claims", c.claim, "--out", (dir / "search").string()});
    const auto search = run("soft_spectral", args);
    ASSERT_EQ(search.code, 0) << search.err;
    const auto rows = read_csv(dir / "search" / "soft_spectral.csv");
    const auto worst = rows_where(rows, {{"quantity", "worst_input"}});
    ASSERT_EQ(worst.size(), 1u);
    const std::string saved = "worst_inputs/" + c.claim + ".tokens.csv";
    ASSERT_EQ(rows.at(worst[0], "worst_tokens"), saved);
    EXPECT_NE(rows.at(worst[0], "tokens_replay").find("--tokens-file"), std::string::npos);

    std::vector<std::string> replay{"--quick",
                                    "--claims",
                                    c.claim,
                                    "--tokens-file",
                                    (dir / "search" / saved).string(),
                                    "--out",
                                    (dir / "replay").string()};
    if (c.needs_m) replay.insert(replay.end(), {"--m", rows.at(worst[0], "m"), "--seed", "7"});
    const auto again = run("soft_spectral", replay);
    ASSERT_EQ(again.code, 0) << again.err;
    const auto replayed = read_csv(dir / "replay" / "soft_spectral.csv");
    const auto row = rows_where(replayed, {{"quantity", "worst_input"}, {"activation", "tokens_file"}});
    ASSERT_EQ(row.size(), 1u);
    // The saved tokens carry 17 digits (exact); the ratio is printed with 10, to which the replay must agree.
    const double ratio = std::stod(rows.at(worst[0], "ratio"));
    EXPECT_NEAR(std::stod(replayed.at(row[0], "ratio")), ratio, 1e-9 * std::abs(ratio));
  }
}
