// The accelerated engines against the CPU engine, Ginkgo-style: every test is written once and runs for
// each device, the Thrust engine on OpenMP everywhere and on CUDA where a GPU is present. Cases that need
// a GPU on a machine without one are reported as skipped, with the reason.
#include <attnlab/accel/engine.hpp>
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/machine.hpp>
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/norms/attention_norms.hpp>
#include <attnlab/soft/kernel.hpp>
#include <attnlab/soft/spectral.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "support.hpp"

namespace attnlab::accel {
// Readable test names in ctest's listing.
void PrintTo(Device d, std::ostream* os) { *os << (d == Device::cuda ? "cuda" : "thrust_omp"); }
}  // namespace attnlab::accel

namespace attnlab {
namespace {

using accel::Device;

struct Case {
  EnsembleSpec ensemble;
  Precision precision;
};

// Odd sizes exercise every partial tile, chunk and Box–Muller pair boundary.
const std::vector<Case> cases{
    {{37, 19, 11, 1.0, 1.0}, Precision::float64},
    {{64, 16, 16, 1.3, 0.7}, Precision::float64},
    {{300, 8, 5, 1.0, 1.0}, Precision::float64},
    {{37, 19, 11, 1.0, 1.0}, Precision::float32},
};

std::vector<ActivationSpec> activations() {
  std::vector<ActivationSpec> specs;
  for (const char* name : {"poly", "relu", "gelu", "sigmoid", "exp", "softmax"})
    specs.push_back(ActivationSpec::parse(name));
  specs[0].k = KScale::parse("sqrtN");
  ActivationSpec x1 = ActivationSpec::parse("poly");
  x1.p = 1;
  x1.convention = Convention::outside;
  specs.push_back(x1);
  return specs;
}

AttentionMcConfig config(const Case& c, std::uint32_t trials, Backend backend) {
  return {c.ensemble, activations(), test::seed(), trials, c.precision, "accelerated", backend};
}

class Accelerated : public ::testing::TestWithParam<Device> {
 protected:
  void SetUp() override {
    if (GetParam() == Device::cuda)
      if (const auto why = accel::cuda_skip_reason(); !why.empty()) GTEST_SKIP() << "not run: " << why;
  }
};

template <class T>
std::vector<double> widened(const Matrix<T>& m) {
  return std::vector<double>(m.data(), m.data() + m.size());
}

template <class T>
void expect_cpu_samples(const accel::Problem& p, Device device, const EnsembleSpec& e, std::uint32_t trial) {
  EnsembleSample<T> cpu;
  draw_ensemble(e, p.seed, trial, cpu);
  const auto s = accel::draw(device, p, trial);
  const std::pair<const std::vector<double>*, std::vector<double>> pairs[] = {
      {&s.X, widened(cpu.X)}, {&s.Q, widened(cpu.Q)}, {&s.K, widened(cpu.K)}};
  for (const auto& [engine, reference] : pairs) {
    ASSERT_EQ(engine->size(), reference.size());
    EXPECT_EQ(std::memcmp(engine->data(), reference.data(), reference.size() * sizeof(double)), 0)
        << "first entry " << (*engine)[0] << " vs " << reference[0];
  }
}

TEST_P(Accelerated, DrawsTheCpuEnginesSamplesBitForBit) {
  for (const auto& c : cases) {
    SCOPED_TRACE(c.ensemble.describe() + " " + to_string(c.precision));
    const auto p = accelerated_problem(config(c, 1, Backend::cpu));
    for (std::uint32_t trial : {0u, 7u}) {
      if (c.precision == Precision::float64) expect_cpu_samples<double>(p, GetParam(), c.ensemble, trial);
      else expect_cpu_samples<float>(p, GetParam(), c.ensemble, trial);
    }
  }
}

template <class T>
AttentionNormsSquared cpu_norms(const AttentionMcConfig& c, std::uint32_t trial, const Activation& a) {
  EnsembleSample<T> s;
  draw_ensemble(c.ensemble, c.seed, trial, s);
  return attention_norms_streamed(s.X, s.Q, s.K, a);
}

void expect_close(const AttentionNormsSquared& got, const AttentionNormsSquared& want, double rel) {
  const std::pair<const char*, std::pair<double, double>> fields[] = {
      {"frob2", {got.frob2, want.frob2}},    {"jac2", {got.jac2, want.jac2}},
      {"qgrad2", {got.qgrad2, want.qgrad2}}, {"kgrad2", {got.kgrad2, want.kgrad2}},
      {"sum", {got.sum, want.sum}},          {"row_sum2", {got.row_sum2, want.row_sum2}}};
  // Sums with cancellation (Σϕ of odd ϕ) are compared against the scale of Σϕ² instead.
  const double floor = rel * std::sqrt(std::abs(want.frob2));
  for (const auto& [name, v] : fields) {
    EXPECT_TRUE(std::isfinite(v.second)) << name << " of the reference is not finite: no agreement to check";
    EXPECT_TRUE(test::close(v.first, v.second, rel, floor)) << name;
  }
}

// Same samples, same formulas, other summation order: double agrees to rounding, float to float's.
double agreement(Precision p) { return p == Precision::float64 ? 1e-9 : 2e-4; }

TEST_P(Accelerated, PerTrialNormsEqualTheCpuEngines) {
  for (const auto& c : cases) {
    const auto cfg = config(c, 3, Backend::cpu);
    const auto norms = accel::trial_norms(GetParam(), accelerated_problem(cfg));
    ASSERT_EQ(norms.size(), 3 * cfg.activations.size());
    for (std::uint32_t t = 0; t < 3; ++t)
      for (std::size_t a = 0; a < cfg.activations.size(); ++a) {
        SCOPED_TRACE(c.ensemble.describe() + " " + to_string(c.precision) + " trial " + std::to_string(t) + " " +
                     cfg.activations[a].label());
        const auto act = cfg.activations[a].resolve(c.ensemble.N, c.ensemble.d);
        const auto want = c.precision == Precision::float64 ? cpu_norms<double>(cfg, t, act)
                                                            : cpu_norms<float>(cfg, t, act);
        expect_close(norms[t * cfg.activations.size() + a], want, agreement(c.precision));
      }
  }
}

// Softmax's spreads Σ_j s_j²‖v_j − v̄_i‖² nearly cancel where one token holds most of a row's weight. In float they
// come from double products of the probabilities, so against the CPU engine in double on the same (float) samples
// the Q- and K-gradient norms differ only by float's rounding of the logits, however peaked the rows.
TEST_P(Accelerated, FloatSoftmaxSpreadsAgreeWithDoubleOnPeakedRows) {
  for (const double sigma : {1.0, 1.5, 2.0}) {
    SCOPED_TRACE(testing::Message() << "sigma_x = sigma_t = " << sigma);
    const Case c{{64, 16, 8, sigma, sigma}, Precision::float32};
    auto cfg = config(c, 2, Backend::cpu);
    cfg.activations = {ActivationSpec::parse("softmax")};
    const auto norms = accel::trial_norms(GetParam(), accelerated_problem(cfg));
    const auto act = cfg.activations[0].resolve(c.ensemble.N, c.ensemble.d);
    for (std::uint32_t t = 0; t < 2; ++t) {
      EnsembleSample<float> s;
      draw_ensemble(c.ensemble, cfg.seed, t, s);
      const MatrixD X = s.X.cast<double>(), Q = s.Q.cast<double>(), K = s.K.cast<double>();
      const auto want = attention_norms_streamed(X, Q, K, act);
      EXPECT_TRUE(test::close(norms[t].qgrad2, want.qgrad2, 1e-4, 0)) << "trial " << t;
      EXPECT_TRUE(test::close(norms[t].kgrad2, want.kgrad2, 1e-4, 0)) << "trial " << t;
    }
  }
}

// Slabs of a few rows (several per trial) and whole trials in one batch give the same rows.
TEST_P(Accelerated, SlabSizeDoesNotChangeTheResult) {
  const Case c{{97, 12, 7, 1.0, 1.0}, Precision::float64};
  const auto p = accelerated_problem(config(c, 4, Backend::cpu));
  const auto whole = accel::trial_norms(GetParam(), p, {.fused = false});
  const auto slabs = accel::trial_norms(GetParam(), p, {.fused = false, .slab_elements = 20 * 97});
  ASSERT_EQ(whole.size(), slabs.size());
  for (std::size_t i = 0; i < whole.size(); ++i) expect_close(slabs[i], whole[i], 1e-12);
}

// A block of trials (an MPI rank's share) is exactly those trials of the whole run: the same streams, bit for bit.
TEST_P(Accelerated, ABlockOfTrialsEqualsThoseTrialsOfTheWholeRun) {
  const Case c{{40, 12, 7, 1.0, 1.0}, Precision::float64};
  auto p = accelerated_problem(config(c, 5, Backend::cpu));
  const auto whole = accel::trial_norms(GetParam(), p);
  p.first_trial = 2, p.trials = 2;
  const auto block = accel::trial_norms(GetParam(), p);
  const std::size_t A = p.activations.size();
  ASSERT_EQ(block.size(), 2 * A);
  for (std::size_t i = 0; i < block.size(); ++i) {
    EXPECT_EQ(block[i].frob2, whole[2 * A + i].frob2) << i;
    EXPECT_EQ(block[i].jac2, whole[2 * A + i].jac2) << i;
  }
}

// The fused elementwise kernel against the slab path, on the engines that have one (cuda); an engine with the slab path
// alone (the OpenMP one, which ignores Options::fused) has nothing to compare.
TEST_P(Accelerated, FusedKernelEqualsTheSlabPath) {
  if (!accel::has_fused_kernel(GetParam()))
    GTEST_SKIP() << "not run: this engine has no fused kernel, only the slab path";
  const Case c{{300, 24, 20, 1.0, 1.0}, Precision::float64};
  const auto p = accelerated_problem(config(c, 3, Backend::cpu));
  const auto fused = accel::trial_norms(GetParam(), p, {.fused = true});
  const auto slab = accel::trial_norms(GetParam(), p, {.fused = false});
  for (std::size_t i = 0; i < fused.size(); ++i) expect_close(fused[i], slab[i], 1e-11);
}

// N = 600 sums its rows in three blocks (256, 256, 88) in parallel, then the blocks in order.
TEST_P(Accelerated, ResultsDoNotDependOnTheThreadCount) {
  for (const Case& c :
       {Case{{130, 16, 9, 1.0, 1.0}, Precision::float64}, Case{{600, 4, 3, 1.0, 1.0}, Precision::float64}}) {
    SCOPED_TRACE(c.ensemble.N);
    const auto p = accelerated_problem(config(c, 3, Backend::cpu));
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    const auto one = accel::trial_norms(GetParam(), p);
    omp_set_num_threads(std::max(2, threads));
    const auto many = accel::trial_norms(GetParam(), p);
    omp_set_num_threads(threads);
    ASSERT_EQ(one.size(), many.size());
    EXPECT_EQ(std::memcmp(one.data(), many.data(), one.size() * sizeof(AttentionNormsSquared)), 0);
  }
}

// End to end through the dispatcher: the estimates of trials that agree to `agreement` each. A trial's value moves by
// at most agreement·(|x_t| + its Frobenius norm, the floor of cancelling sums), so a mean and a standard error by at
// most agreement·(|mean| + sd + E frob), as the mean of |x_t| is at most |mean| + sd.
TEST_P(Accelerated, EstimatesEqualTheCpuEnginesToThePerTrialAgreement) {
  for (const Case& c : {cases[0], cases[3]}) {
    const auto cpu = run_attention_norms(config(c, 16, Backend::cpu));
    const auto accelerated = run_attention_norms(
        config(c, 16, GetParam() == Device::cuda ? Backend::cuda : Backend::thrust));
    ASSERT_EQ(cpu.size(), accelerated.size());
    for (std::size_t i = 0; i < cpu.size(); ++i) {
      SCOPED_TRACE(c.ensemble.describe() + " " + to_string(c.precision) + " " + cpu[i].activation + " " +
                   cpu[i].quantity);
      EXPECT_EQ(accelerated[i].quantity, cpu[i].quantity);
      const auto frob = std::find_if(cpu.begin(), cpu.end(), [&](const ResultRow& r) {
        return r.quantity == "frob" && r.activation == cpu[i].activation;
      });
      ASSERT_NE(frob, cpu.end());
      const auto& v = cpu[i].value;
      const double limit = agreement(c.precision) *
                           (std::abs(v.mean) + v.se * std::sqrt(double(v.count)) + frob->value.mean);
      EXPECT_NEAR(accelerated[i].value.mean, v.mean, limit);
      EXPECT_NEAR(accelerated[i].value.se, v.se, limit);
    }
  }
}

// Power iteration with products made on the fly against the dense decomposition of the formed matrix.
TEST_P(Accelerated, GaussianKernelNormEqualsTheDenseOne) {
  for (const double sigma : {0.5, 1.0}) {
    const Index n = 150, m = 120, d = 16;
    MatrixD Q(n, d), K(m, d);
    fill_gaussian(Q, GaussianStream(test::seed(), hash_string("soft-q"), 0, StreamTag::Q), sigma);
    fill_gaussian(K, GaussianStream(test::seed(), hash_string("soft-k"), 0, StreamTag::K), sigma);
    const auto r = accel::gaussian_kernel_norm(GetParam(), std::vector<double>(Q.data(), Q.data() + Q.size()),
                                               std::vector<double>(K.data(), K.data() + K.size()), d, 1e-13, 5000);
    SCOPED_TRACE(testing::Message() << "sigma " << sigma << ", " << r.iterations << " iterations");
    EXPECT_TRUE(r.converged);
    EXPECT_TRUE(test::close(r.value, spectral_norm_svd(gaussian_kernel(Q, K)), 1e-9, 0));
  }
}

// The power iteration normalises its iterate: unnormalised, ‖v‖ scales by σ₁² per step, so a kernel with σ₁ < 1
// underflowed to 0/0 and a large dense one overflowed to ∞/∞ long before these converge (σ₂/σ₁ near 1: hundreds of
// steps). Two clusters of tokens make the two top singular values close; the seed sets the tokens' jitter.
TEST_P(Accelerated, GaussianKernelNormConvergesWithSigma1BelowOneAndForALargeDenseKernel) {
  struct Kernel {
    const char* what;
    Index per_cluster, other_cluster;
    double self_distance, cluster_distance;  // within a pair q_i, k_i; between the clusters
  };
  const Kernel kernels[] = {{"sigma1 < 1: one pair of far tokens per cluster", 1, 1, 3.2, 40.0},
                            {"large dense kernel: clusters of 100 and 98 near-equal tokens", 100, 98, 0.05, 4.0}};
  const Index d = 2;
  for (const auto& k : kernels) {
    SCOPED_TRACE(k.what);
    const Index n = k.per_cluster + k.other_cluster;
    MatrixD Q(n, d), K(n, d), jitter(2 * n, d);
    fill_gaussian(jitter, GaussianStream(test::seed(), hash_string("power-iteration"), 0, StreamTag::X), 1e-4);
    for (Index i = 0; i < n; ++i) {
      const double centre = i < k.per_cluster ? 0.0 : k.cluster_distance;
      // The second cluster's pairs sit slightly further apart, so its singular value is slightly smaller.
      const double apart = i < k.per_cluster ? k.self_distance : k.self_distance * 1.003;
      Q.row(i) << centre + jitter(i, 0), jitter(i, 1);
      K.row(i) << centre + jitter(n + i, 0), apart + jitter(n + i, 1);
    }
    const double dense = spectral_norm_svd(gaussian_kernel(Q, K));
    const auto r = accel::gaussian_kernel_norm(GetParam(), std::vector<double>(Q.data(), Q.data() + Q.size()),
                                               std::vector<double>(K.data(), K.data() + K.size()), d, 1e-12, 20000);
    SCOPED_TRACE(testing::Message() << "sigma1 " << dense << ", " << r.iterations << " iterations");
    EXPECT_GT(r.iterations, 709 / std::abs(2 * std::log(dense))) << "unnormalised, v would stay within double's range";
    EXPECT_TRUE(std::isfinite(r.value));
    EXPECT_TRUE(r.converged);
    EXPECT_TRUE(test::close(r.value, dense, 1e-8, 0)) << r.value << " vs " << dense;
  }
}

// A memory limit that holds two trials' buffers runs the trials in more batches (more progress reports), each trial
// exactly as in one batch; below one trial's buffers the problem is refused in one line naming N.
TEST_P(Accelerated, MemoryLimitBatchesTrialsWithoutChangingThemAndRefusesOneThatCannotFit) {
  const Case c{{40, 12, 7, 1.0, 1.0}, Precision::float64};
  const auto p = accelerated_problem(config(c, 6, Backend::cpu));
  int whole_reports = 0, limited_reports = 0;
  const auto whole = accel::trial_norms(GetParam(), p, {}, [&](std::uint32_t, std::uint32_t) { ++whole_reports; });
  std::int64_t one_trial = 0;
  try {
    accel::refuse_what_cannot_fit(GetParam(), p, {.memory_bytes = 1});
    ADD_FAILURE() << "1 byte was enough";
  } catch (const std::invalid_argument& e) {
    const std::string line = e.what();
    EXPECT_TRUE(line.starts_with("N: 40 (with D = 12, d = 7) needs ")) << line;
    EXPECT_EQ(line.find('\n'), std::string::npos) << line;
    one_trial = std::int64_t(std::stod(line.substr(line.find("needs ") + 6)) * 1e9);
  }
  ASSERT_GT(one_trial, 0);
  const accel::Options two_trials{.memory_bytes = 2 * one_trial + one_trial / 2};
  EXPECT_NO_THROW(accel::refuse_what_cannot_fit(GetParam(), p, two_trials));
  const auto limited = accel::trial_norms(GetParam(), p, two_trials,
                                          [&](std::uint32_t, std::uint32_t) { ++limited_reports; });
  EXPECT_EQ(whole_reports, 1);
  EXPECT_EQ(limited_reports, 3) << "6 trials, 2 per batch";
  ASSERT_EQ(whole.size(), limited.size());
  EXPECT_EQ(std::memcmp(whole.data(), limited.data(), whole.size() * sizeof(AttentionNormsSquared)), 0);
  EXPECT_THROW(accel::trial_norms(GetParam(), p, {.memory_bytes = one_trial / 2}), std::invalid_argument);
}

// A block that ends at the last trial stream (2³² − 1), in batches of 2 that step past it: in 32 bits its end wrapped
// to 0 (no trial run) and a batch stepping past it wrapped to the first streams.
TEST_P(Accelerated, ABlockEndingAtTheLastTrialStreamRunsEachOfItsTrialsOnce) {
  const Case c{{16, 6, 5, 1.0, 1.0}, Precision::float64};
  auto p = accelerated_problem(config(c, 5, Backend::cpu));
  const std::uint32_t first = std::numeric_limits<std::uint32_t>::max() - 4;
  p.first_trial = first;
  const auto block = accel::trial_norms(GetParam(), p, {.fused = false, .slab_elements = 2 * 16 * 16});
  const std::size_t A = p.activations.size();
  ASSERT_EQ(block.size(), 5 * A);
  for (std::uint32_t t = 0; t < 5; ++t) {
    p.first_trial = first + t, p.trials = 1;
    const auto alone = accel::trial_norms(GetParam(), p, {.fused = false});
    for (std::size_t a = 0; a < A; ++a) EXPECT_EQ(block[t * A + a].frob2, alone[a].frob2) << "trial " << first + t;
  }
  p.first_trial = first, p.trials = 6;
  EXPECT_THROW(accel::trial_norms(GetParam(), p), std::invalid_argument) << "trial 2^32 has no stream";
}

// The device-scale checks of scripts/gpu-check, one trial each: seconds on a GPU, skipped (with the reason) without
// one. Q and K have entries of variance 1/D, so the logits have unit variance and exp stays finite at N = 65,536 (at
// unit σ_t their standard deviation is D = 64 and exp overflowed on both paths, seen on an H200).
EnsembleSpec unit_logits(Index N) { return {N, 64, 64, 1.0, 1.0 / std::sqrt(64.0)}; }

class CudaAtScale : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const auto why = accel::cuda_skip_reason(); !why.empty()) GTEST_SKIP() << "not run: " << why;
  }
};

TEST_F(CudaAtScale, FusedKernelEqualsTheSlabPathAtN65536) {
  const Case c{unit_logits(65536), Precision::float64};
  auto cfg = config(c, 1, Backend::cpu);
  std::erase_if(cfg.activations,
                [](const ActivationSpec& a) { return find_activation(a.name).row_normalised; });  // not fused
  const auto p = accelerated_problem(cfg);
  const auto fused = accel::trial_norms(Device::cuda, p, {.fused = true});
  const auto slab = accel::trial_norms(Device::cuda, p, {.fused = false});
  ASSERT_EQ(fused.size(), slab.size());
  for (std::size_t i = 0; i < fused.size(); ++i) {
    SCOPED_TRACE(cfg.activations[i].label());
    expect_close(fused[i], slab[i], 1e-11);
  }
}

// Two column splits (N = 4096 + 64): small enough for gpu-check to run it under memcheck.
TEST_F(CudaAtScale, FusedKernelOverTwoColumnSplitsEqualsTheSlabPath) {
  const Case c{unit_logits(accel::kFusedSplitColumns + 64), Precision::float64};
  ASSERT_EQ(accel::fused_column_splits(c.ensemble.N), 2);
  auto cfg = config(c, 1, Backend::cpu);
  std::erase_if(cfg.activations,
                [](const ActivationSpec& a) { return find_activation(a.name).row_normalised; });  // not fused
  const auto p = accelerated_problem(cfg);
  const auto fused = accel::trial_norms(Device::cuda, p, {.fused = true});
  const auto slab = accel::trial_norms(Device::cuda, p, {.fused = false});
  ASSERT_EQ(fused.size(), slab.size());
  for (std::size_t i = 0; i < fused.size(); ++i) {
    SCOPED_TRACE(cfg.activations[i].label());
    expect_close(fused[i], slab[i], 1e-11);
  }
}

TEST_F(CudaAtScale, PerTrialNormsEqualTheCpuEnginesAtN4096) {
  const Case c{unit_logits(4096), Precision::float64};
  const auto cfg = config(c, 1, Backend::cpu);
  const auto norms = accel::trial_norms(Device::cuda, accelerated_problem(cfg));
  ASSERT_EQ(norms.size(), cfg.activations.size());
  for (std::size_t a = 0; a < cfg.activations.size(); ++a) {
    SCOPED_TRACE(cfg.activations[a].label());
    expect_close(norms[a], cpu_norms<double>(cfg, 0, cfg.activations[a].resolve(c.ensemble.N, c.ensemble.d)),
                 agreement(c.precision));
  }
}

INSTANTIATE_TEST_SUITE_P(Devices, Accelerated, ::testing::Values(Device::thrust_omp, Device::cuda),
                         [](const auto& info) { return info.param == Device::cuda ? "cuda" : "thrust_omp"; });

TEST(AcceleratedBackend, RejectsWhatItDoesNotImplementInOneLine) {
  for (const char* name : {"sinmax", "softmax+prenorm", "poly+qkln"}) {
    SCOPED_TRACE(name);
    try {
      validate_backend(Backend::thrust, {ActivationSpec::parse(name)});
      ADD_FAILURE() << "accepted";
    } catch (const std::invalid_argument& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find("backend thrust"), std::string::npos) << message;
      EXPECT_NE(message.find("--backend cpu"), std::string::npos) << message;
      EXPECT_EQ(message.find('\n'), std::string::npos) << message;
    }
  }
  if (accel::cuda_unavailable_reason().empty())
    EXPECT_NO_THROW(validate_backend(Backend::cuda, {ActivationSpec::parse("softmax")}));
  else EXPECT_THROW(validate_backend(Backend::cuda, {ActivationSpec::parse("softmax")}), std::invalid_argument);
}

// Ranks on one node share its memory: a trial that fits this machine's memory alone is refused when two processes
// share it, the line saying so. Only planned, never allocated.
TEST(AcceleratedBackend, ProcessesSharingTheMemoryEachGetTheirShare) {
  const Case c{{1, 1, 1, 1.0, 1.0}, Precision::float64};
  auto p = accelerated_problem(config(c, 1, Backend::cpu));
  // One trial's bytes grow with D alone here (N = d = 1): read them at one D from the refusal, and scale D to 60%.
  p.D = 1'000'000;
  double probe_bytes = 0;
  try {
    accel::refuse_what_cannot_fit(Device::thrust_omp, p, {.memory_bytes = 1});
  } catch (const std::invalid_argument& e) {
    const std::string line = e.what();
    probe_bytes = std::stod(line.substr(line.find("needs ") + 6)) * 1e9;
  }
  ASSERT_GT(probe_bytes, 0);
  p.D = std::int64_t(double(p.D) * 0.6 * physical_memory_bytes() / probe_bytes);
  EXPECT_NO_THROW(accel::refuse_what_cannot_fit(Device::thrust_omp, p, {.ranks_on_node = 1}));
  try {
    accel::refuse_what_cannot_fit(Device::thrust_omp, p, {.ranks_on_node = 2});
    ADD_FAILURE() << "two processes, each with 60% of the memory";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("(2 processes on it)"), std::string::npos) << e.what();
  }
}

// The fused kernel's column splits are a function of N alone, never of the device's SM count, so its row sums round
// alike on every GPU model and MIG slice.
TEST(AcceleratedBackend, FusedColumnSplitsDependOnNAlone) {
  for (const std::int64_t N : {1, 64, 4095, 4096}) EXPECT_EQ(accel::fused_column_splits(N), 1) << N;
  EXPECT_EQ(accel::fused_column_splits(4097), 2);
  EXPECT_EQ(accel::fused_column_splits(65536), 16);
  EXPECT_EQ(accel::fused_column_splits(65537), 17);
}

// Skipped only where no GPU is expected; a fault of any other kind fails the cuda cases, and ATTNLAB_REQUIRE_GPU=1
// fails them everywhere.
TEST(AcceleratedBackend, SkipsCudaCasesOnlyWithoutABuildOrADevice) {
  using accel::CudaAvailability;
  const accel::CudaStatus not_built{CudaAvailability::not_built, "not built"},
      no_device{CudaAvailability::no_device, "none"},
      old_driver{CudaAvailability::fault, "backend cuda: cudaErrorInsufficientDriver"},
      usable{CudaAvailability::usable, ""};
  EXPECT_EQ(accel::cuda_skip_reason(not_built, false), "not built");
  EXPECT_EQ(accel::cuda_skip_reason(no_device, false), "none");
  for (bool require : {false, true}) {
    EXPECT_EQ(accel::cuda_skip_reason(old_driver, require), "");
    EXPECT_EQ(accel::cuda_skip_reason(usable, require), "");
  }
  EXPECT_EQ(accel::cuda_skip_reason(not_built, true), "");
  EXPECT_EQ(accel::cuda_skip_reason(no_device, true), "");
  const auto status = accel::cuda_status();
  std::cout << "this machine: " << (status.reason.empty() ? "a usable GPU" : status.reason) << "\n";
  EXPECT_EQ(status.reason.empty(), status.availability == CudaAvailability::usable);
  EXPECT_EQ(status.reason.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace attnlab
