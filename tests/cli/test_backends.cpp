// --backend on the ensemble sweeps: the Thrust engine (and CUDA where a GPU is usable) writes the same
// table as the cpu backend, every estimate inside the cpu estimate's 95% CI, and records its backend.
#include "cli_support.hpp"

#include <attnlab/accel/engine.hpp>

#include <nlohmann/json.hpp>

using namespace attnlab::test::cli;

namespace {

void expect_same_table_within_cpu_ci(const std::string& backend) {
  const ScratchDir dir("backend_" + backend);
  const auto cpu = run("poly_frobenius", {"--quick", "--out", (dir / "cpu").string()});
  const auto other = run("poly_frobenius", {"--quick", "--backend", backend, "--out", (dir / backend).string()});
  ASSERT_EQ(cpu.code, 0) << cpu.err;
  ASSERT_EQ(other.code, 0) << other.err;
  const auto a = read_csv(dir / "cpu" / "poly_frobenius.csv"), b = read_csv(dir / backend / "poly_frobenius.csv");
  ASSERT_EQ(a.rows.size(), b.rows.size());
  ASSERT_FALSE(a.rows.empty());
  for (std::size_t i = 0; i < a.rows.size(); ++i) {
    SCOPED_TRACE(a.at(i, "quantity") + " " + a.at(i, "activation") + " N=" + a.at(i, "N"));
    EXPECT_EQ(a.at(i, "quantity"), b.at(i, "quantity"));
    EXPECT_EQ(a.at(i, "activation"), b.at(i, "activation"));
    EXPECT_EQ(a.at(i, "N"), b.at(i, "N"));
    const double mean = std::stod(b.at(i, "mean"));
    EXPECT_GE(mean, std::stod(a.at(i, "ci_lo")));
    EXPECT_LE(mean, std::stod(a.at(i, "ci_hi")));
  }
  const auto json = nlohmann::json::parse(slurp(dir / backend / "poly_frobenius.json"));
  EXPECT_EQ(json.at("config").at("backend"), backend);
}

TEST(Backends, ThrustWritesTheCpuTableWithinItsConfidenceIntervals) { expect_same_table_within_cpu_ci("thrust"); }

TEST(Backends, CudaWritesTheCpuTableWithinItsConfidenceIntervals) {
  if (const auto why = attnlab::accel::cuda_skip_reason(); !why.empty()) GTEST_SKIP() << "not run: " << why;
  expect_same_table_within_cpu_ci("cuda");
}

}  // namespace
