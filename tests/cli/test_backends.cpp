// --backend on the ensemble sweeps: the Thrust engine (and CUDA where a GPU is usable) writes the same
// table as the cpu backend, every estimate equal to the cpu one to the engines' per-trial agreement, and records its
// backend.
#include "cli_support.hpp"

#include <attnlab/accel/engine.hpp>

#include <nlohmann/json.hpp>

using namespace attnlab::test::cli;

namespace {

// The engines' trials agree to 1e-9 relative in double (property.Accelerated.PerTrialNormsEqualTheCpuEngines); a mean
// or standard error of such trials moves by at most that times |mean| + sd (the mean of |x_t|), its control variate's
// correction (as large at most) as much again, and the CSV's 10 significant digits round each by 5e-10 relative.
constexpr double kPerTrialAgreement = 1e-9, kPrinted = 5e-10;

void expect_same_table(const std::string& backend) {
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
    const double mean = std::stod(a.at(i, "mean")), se = std::stod(a.at(i, "se"));
    const double scale = std::abs(mean) + se * std::sqrt(std::stod(a.at(i, "count")));
    for (const char* column : {"mean", "se"}) {
      const double cpu_value = std::stod(a.at(i, column));
      EXPECT_NEAR(std::stod(b.at(i, column)), cpu_value,
                  2 * kPerTrialAgreement * scale + 2 * kPrinted * std::abs(cpu_value))
          << column;
    }
  }
  const auto json = nlohmann::json::parse(slurp(dir / backend / "poly_frobenius.json"));
  EXPECT_EQ(json.at("config").at("backend"), backend);
}

TEST(Backends, ThrustWritesTheCpuTable) { expect_same_table("thrust"); }

TEST(Backends, CudaWritesTheCpuTable) {
  if (const auto why = attnlab::accel::cuda_skip_reason(); !why.empty()) GTEST_SKIP() << "not run: " << why;
  expect_same_table("cuda");
}

}  // namespace
