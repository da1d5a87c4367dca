// The streamed estimators against dense references, the references against finite differences,
// and determinism for any thread count.
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/norms/attention_norms.hpp>
#include <attnlab/norms/reference.hpp>

#include "support.hpp"

#include <omp.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

extern char** environ;

using namespace attnlab;

namespace {

EnsembleSample<double> sample(Index N, Index D, Index d, std::uint32_t trial, double sx = 1.0, double st = 1.0) {
  EnsembleSample<double> s;
  draw_ensemble(EnsembleSpec{N, D, d, sx, st}, test::seed(), trial, s);
  return s;
}

struct Case {
  std::string label;
  Activation act;
};

// Every registered function, and a spread of them under each composition of the transforms.
std::vector<Case> activations(Index N, Index d) {
  std::vector<ActivationSpec> specs;
  for (int p : {1, 2, 3, 4, 5, 7})
    for (Convention c : {Convention::inside, Convention::outside, Convention::none})
      specs.push_back({"poly", p, KScale::parse(p % 2 ? "sqrtN" : "2.5"), c});
  for (const auto& info : activation_registry())
    if (info.uses_alpha)
      for (double alpha : {0.0, 0.5, 1.0}) {
        ActivationSpec spec{info.name};
        spec.alpha = alpha;
        specs.push_back(spec);
      }
  for (const auto& info : activation_registry())
    if (info.row_normalised) specs.push_back(ActivationSpec{info.name});
  for (const char* name :
       {"poly", "relu", "gelu", "sigmoid", "softmax", "sirenmax", "sinsoftmax", "cosmax", "sinsoftmax-released"})
    for (const char* transform : {"+prenorm", "+prenorm-released", "+qkln", "+prenorm+qkln"}) {
      auto spec = ActivationSpec::parse(std::string(name) + transform);
      if (spec.transforms.prenorm && N < 2) continue;  // a row of one entry has no variance
      // LayerNorm maps every 2-vector to ±(1, −1): its gradients are zero up to rounding, nothing to compare
      if (spec.transforms.qk_layernorm && d < 3) continue;
      specs.push_back(spec);
    }
  std::vector<Case> cases;
  for (const auto& spec : specs) cases.push_back({spec.label(), spec.resolve(N, d)});
  return cases;
}

}  // namespace

TEST(AttentionNorms, StreamedEqualsExplicitJacobians) {
  for (auto [N, D, d] : {std::tuple{5, 3, 2}, std::tuple{6, 3, 4}, std::tuple{11, 4, 3}, std::tuple{1, 2, 2}}) {
    const auto s = sample(N, D, d, 0, 0.8, 0.9);
    for (const auto& [label, act] : activations(N, d)) {
      SCOPED_TRACE(text("N=", N, " D=", D, " d=", d, " ", label));
      const auto fast = attention_norms_streamed(s.X, s.Q, s.K, act, {3, 4});  // tiles cut rows and columns
      const MatrixD phi = reference::attention_matrix(s.X, s.Q, s.K, act);
      const double frob2 = phi.squaredNorm();
      const double jac2 = reference::logit_jacobian(s.X, s.Q, s.K, act).squaredNorm();
      const double q2 = reference::q_jacobian(s.X, s.Q, s.K, act).squaredNorm();
      const double k2 = reference::k_jacobian(s.X, s.Q, s.K, act).squaredNorm();
      EXPECT_TRUE(test::close(fast.frob2, frob2, 1e-11, 1e-13));
      EXPECT_TRUE(test::close(fast.sum, phi.sum(), 1e-11, 1e-13 * (1 + phi.cwiseAbs().sum())));
      EXPECT_TRUE(test::close(fast.row_sum2, phi.rowwise().sum().squaredNorm(), 1e-11, 1e-13 * (1 + frob2 * N)));
      // The Jacobians of the row maps with poles (sirenmax near sin x = 1, after prenorm) carry the condition of
      // g'/sum g, which turns the last bit of a vector sin (8 lanes on AVX-512, 4 on AVX2: the instruction sets this
      // suite runs on) into about 2e-10 relative at these logits: 1e-8 is fifty times that.
      EXPECT_TRUE(test::close(fast.jac2, jac2, 1e-8, 1e-13));
      EXPECT_TRUE(test::close(fast.qgrad2, q2, 1e-8, 1e-13));
      EXPECT_TRUE(test::close(fast.kgrad2, k2, 1e-8, 1e-13));
    }
  }
}

TEST(AttentionNorms, TileShapeDoesNotChangeTheResult) {
  const auto s = sample(37, 6, 5, 1);
  for (const auto& [label, act] : activations(37, 5)) {
    const auto a = attention_norms_streamed(s.X, s.Q, s.K, act, {64, 256});
    const auto b = attention_norms_streamed(s.X, s.Q, s.K, act, {7, 9});
    EXPECT_TRUE(test::close(a.frob2, b.frob2, 1e-12, 0)) << label;
    EXPECT_TRUE(test::close(a.qgrad2, b.qgrad2, 1e-12, 0)) << label;
    EXPECT_TRUE(test::close(a.kgrad2, b.kgrad2, 1e-12, 0)) << label;
  }
}

// x^p's rows are summed with the scales taken out (C·Σm^p, D²·Σm^(2p−2)…) unless the unscaled powers leave double's
// range: logits near 1e24 under 1/k = 1e-30 (m^14 overflows, ϕ² near 1e284 does not) and near 1e-24 under 1/k = 1e30
// (m^14 underflows, ϕ² near 1e-276 does not) take the scaled loop, and every case equals the dense reference.
TEST(AttentionNorms, PowerRowsOutsideDoublesRangeAreSummedScaled) {
  for (auto [scale, k] : {std::pair{1e6, "1e30"}, std::pair{1e-6, "1e-30"}, std::pair{1.0, "sqrtN"}}) {
    const auto s = sample(6, 3, 4, 5, scale, scale);
    const auto act = ActivationSpec{"poly", 7, KScale::parse(k), Convention::none}.resolve(6, 4);
    const MatrixD logits = s.X * s.Q * s.K.transpose() * s.X.transpose();
    const double largest = logits.cwiseAbs().maxCoeff(), smallest = logits.cwiseAbs().minCoeff();
    SCOPED_TRACE(text("logits in [", smallest, ", ", largest, "], k = ", k));
    if (scale > 1) {
      ASSERT_TRUE(std::isinf(std::pow(largest, 14))) << "the case must overflow the unscaled sums";
    }
    if (scale < 1) {
      ASSERT_LT(std::pow(largest, 14), std::numeric_limits<double>::min()) << "and this one underflow";
    }
    const auto fast = attention_norms_streamed(s.X, s.Q, s.K, act, {3, 4});
    const MatrixD phi = reference::attention_matrix(s.X, s.Q, s.K, act);
    ASSERT_TRUE(std::isfinite(phi.squaredNorm()) && phi.squaredNorm() > 0);
    EXPECT_TRUE(test::close(fast.frob2, phi.squaredNorm(), 1e-11, 0));
    EXPECT_TRUE(test::close(fast.jac2, reference::logit_jacobian(s.X, s.Q, s.K, act).squaredNorm(), 1e-11, 0));
    EXPECT_TRUE(test::close(fast.qgrad2, reference::q_jacobian(s.X, s.Q, s.K, act).squaredNorm(), 1e-11, 0));
    EXPECT_TRUE(test::close(fast.kgrad2, reference::k_jacobian(s.X, s.Q, s.K, act).squaredNorm(), 1e-11, 0));
  }
}

// Softmax without gradients streams each row's maximum and sums across column tiles: against the path that forms
// whole rows, on tiles that cut rows and columns, peaked (up to one-hot) rows and qk-layernorm. The other
// row-normalised ϕ take each whole row's norms in two passes (normalised_row_norms), without a Jacobian.
TEST(AttentionNorms, RowNormalisedWithoutGradientsEqualTheWholeRowPath) {
  std::vector<std::string> names{"softmax+qkln", "sinsoftmax+prenorm"};
  for (const auto& info : activation_registry())
    if (info.row_normalised) names.push_back(info.name);
  for (auto [N, scale] : {std::pair<Index, double>{1, 1.0}, {37, 1.0}, {37, 3.0}, {300, 0.5}, {300, 2.5}}) {
    const auto s = sample(N, 16, 8, 3, scale, scale);
    for (const auto& name : names) {
      auto spec = ActivationSpec::parse(name);
      if (spec.transforms.prenorm && N < 2) continue;  // a row of one entry has no variance
      SCOPED_TRACE(text(name, " N=", N, " sigma=", scale));
      const auto act = spec.resolve(N, 8);
      for (const TileShape tile : {TileShape{}, TileShape{7, 13}}) {
        // the same tiles: cosmax and sinmax rows whose Σg nearly cancels amplify the GEMM blocking's last bits
        const auto rows = attention_norms_streamed(s.X, s.Q, s.K, act, tile);
        const auto fused = attention_norms_streamed(s.X, s.Q, s.K, act, tile, false);
        EXPECT_TRUE(test::close(fused.frob2, rows.frob2, 1e-12, 0));
        EXPECT_TRUE(test::close(fused.jac2, rows.jac2, 1e-11, 0));
        EXPECT_TRUE(test::close(fused.sum, rows.sum, 1e-12, 0));
        EXPECT_TRUE(test::close(fused.row_sum2, rows.row_sum2, 1e-12, 0));
        EXPECT_EQ(fused.qgrad2, 0.0);
        EXPECT_EQ(fused.kgrad2, 0.0);
      }
    }
  }
}

TEST(AttentionNorms, ElementwiseWithoutGradientsKeepTheOtherSums) {
  for (const char* name : {"poly", "relu", "gelu", "poly+qkln"})
    for (const Index N : {1, 37, 300}) {
      const auto s = sample(N, 16, 8, 3);
      auto spec = ActivationSpec::parse(name);
      spec.k = KScale::parse("sqrtN");
      const auto act = spec.resolve(N, 8);
      SCOPED_TRACE(text(name, " N=", N));
      const auto with = attention_norms_streamed(s.X, s.Q, s.K, act);
      const auto without = attention_norms_streamed(s.X, s.Q, s.K, act, {}, false);
      const Matrix<float> Xf = s.X.cast<float>(), Qf = s.Q.cast<float>(), Kf = s.K.cast<float>();
      const auto with_f = attention_norms_streamed(Xf, Qf, Kf, act);
      const auto without_f = attention_norms_streamed(Xf, Qf, Kf, act, {}, false);
      for (const auto& [a, b, tol] : {std::tuple{with, without, 1e-14}, std::tuple{with_f, without_f, 1e-6}}) {
        EXPECT_TRUE(test::close(b.frob2, a.frob2, tol, 0));
        EXPECT_TRUE(test::close(b.jac2, a.jac2, tol, 0));
        EXPECT_TRUE(test::close(b.sum, a.sum, tol, 1e-12));
        EXPECT_TRUE(test::close(b.row_sum2, a.row_sum2, tol, 0));
        EXPECT_GT(a.qgrad2, 0.0);
        EXPECT_EQ(b.qgrad2, 0.0);
        EXPECT_EQ(b.kgrad2, 0.0);
      }
    }
}

// A NaN logit makes softmax's norms NaN on both paths, so that the trial is counted as non-finite, not averaged.
TEST(AttentionNorms, SoftmaxWithoutGradientsPropagatesANaNLogit) {
  auto s = sample(40, 8, 4, 5);
  s.X(3, 2) = std::numeric_limits<double>::quiet_NaN();
  const auto act = ActivationSpec::parse("softmax").resolve(40, 4);
  EXPECT_TRUE(std::isnan(attention_norms_streamed(s.X, s.Q, s.K, act).frob2));
  const auto fused = attention_norms_streamed(s.X, s.Q, s.K, act, {}, false);
  EXPECT_TRUE(std::isnan(fused.frob2));
  EXPECT_TRUE(std::isnan(fused.jac2));
}

// A study that writes no gradient quantity leaves their rows out and keeps the others' numbers.
TEST(MonteCarlo, WithoutGradientsTheOtherQuantitiesAreUnchanged) {
  AttentionMcConfig c{
      {48, 8, 4, 1.0, 1.0}, {{"poly", 3, KScale::parse("sqrtN"), Convention::inside}, {"softmax"}}, test::seed(), 6};
  const auto with = run_attention_norms(c);
  c.gradients = false;
  const auto without = run_attention_norms(c);
  std::size_t matched = 0;
  for (const auto& r : without) {
    EXPECT_FALSE(is_gradient_quantity(r.quantity)) << r.quantity;
    for (const auto& w : with)
      if (w.activation == r.activation && w.quantity == r.quantity) {
        EXPECT_TRUE(test::close(r.value.mean, w.value.mean, 1e-12, 0)) << r.activation << " " << r.quantity;
        ++matched;
      }
  }
  EXPECT_EQ(matched, with.size() - 2 * 4);  // qgrad, qgrad2, kgrad, kgrad2 of each activation left out
  EXPECT_NE(cache_key(c), cache_key({c.ensemble, c.activations, c.seed, c.trials}));
}

TEST(AttentionNorms, FloatPathAgreesWithDouble) {
  const auto s = sample(40, 8, 8, 2);
  for (const auto& [label, act] : activations(40, 8)) {
    const auto d = attention_norms_streamed(s.X, s.Q, s.K, act);
    const auto f = attention_norms_streamed<float>(s.X.cast<float>(), s.Q.cast<float>(), s.K.cast<float>(), act);
    EXPECT_TRUE(test::close(f.frob2, d.frob2, 1e-3, 1e-6)) << label;
    EXPECT_TRUE(test::close(f.qgrad2, d.qgrad2, 1e-3, 1e-6)) << label;
  }
}

// The float path on float samples against the double path on the same samples widened to double: what differs is
// float's logits and float's sums of each tile row (at most 256 terms, then accumulated in double), so every sum
// agrees to a few float roundings (2e-5 relative; ~1e-6 measured). N = 700 spans three column tiles, the last of
// 188 columns (11 vectors of 16 lanes and a masked one of 12), and N = 13 is one masked vector; every piecewise
// polynomial (x^7: the power known only at run time), with and without the gradients' sums.
TEST(AttentionNorms, FloatTileSumsAgreeWithDoubleOnTheSameSamples) {
  for (const Index N : {700, 13}) {
    EnsembleSample<float> f;
    draw_ensemble(EnsembleSpec{N, 16, 16, 1.0, 0.25}, test::seed(), 0, f);
    const MatrixD X = f.X.cast<double>(), Q = f.Q.cast<double>(), K = f.K.cast<double>();
    for (const auto& spec : {ActivationSpec{"poly", 3, KScale::parse("sqrtN")}, ActivationSpec{"poly", 1},
                             ActivationSpec{"poly", 7}, ActivationSpec{"relu"}, ActivationSpec{"relu2"},
                             ActivationSpec{"relu6"}, ActivationSpec{"identity"}, ActivationSpec{"gelu"}})
      for (bool gradients : {true, false}) {
        const auto act = spec.resolve(N, 16);
        const auto in_float = attention_norms_streamed(f.X, f.Q, f.K, act, {}, gradients);
        const auto in_double = attention_norms_streamed(X, Q, K, act, {}, gradients);
        for (const auto& [name, of] : {std::pair{"frob2", &AttentionNormsSquared::frob2},
                                       {"jac2", &AttentionNormsSquared::jac2},
                                       {"qgrad2", &AttentionNormsSquared::qgrad2},
                                       {"kgrad2", &AttentionNormsSquared::kgrad2},
                                       {"row_sum2", &AttentionNormsSquared::row_sum2}})
          EXPECT_TRUE(test::close(in_float.*of, in_double.*of, 2e-5, 0))
              << "N " << N << " " << spec.label() << " " << name << " gradients " << gradients;
      }
  }
}

// Where float's sums overflow (x^5 of logits near 1e4: ϕ² near 1e40 > 3.4e38) the row is summed again in double, so
// the float path stays finite and equal to the double path on the same samples.
TEST(AttentionNorms, FloatRowsThatOverflowAreSummedInDouble) {
  EnsembleSample<float> f;
  draw_ensemble(EnsembleSpec{300, 8, 8, 10.0, 10.0}, test::seed(), 0, f);
  const auto act = ActivationSpec{"poly", 5}.resolve(300, 8);
  const auto in_float = attention_norms_streamed(f.X, f.Q, f.K, act);
  const auto in_double = attention_norms_streamed<double>(f.X.cast<double>(), f.Q.cast<double>(), f.K.cast<double>(),
                                                          act);
  ASSERT_GT(in_double.frob2, 1e39) << "the case must overflow float";
  EXPECT_TRUE(std::isfinite(in_float.frob2) && std::isfinite(in_float.kgrad2));
  EXPECT_TRUE(test::close(in_float.frob2, in_double.frob2, 1e-4, 0));
  EXPECT_TRUE(test::close(in_float.kgrad2, in_double.kgrad2, 1e-4, 0));
}

// Central differences of ϕ(XQKᵀXᵀ) in each entry of Q and K, against the explicit Jacobians.
TEST(ReferenceJacobians, MatchFiniteDifferences) {
  const Index N = 4, D = 3, d = 3;
  const auto s = sample(N, D, d, 3);
  for (const auto& [label, act] : activations(N, d)) {
    SCOPED_TRACE(label);
    for (bool wrt_q : {true, false}) {
      const MatrixD J = wrt_q ? reference::q_jacobian(s.X, s.Q, s.K, act) : reference::k_jacobian(s.X, s.Q, s.K, act);
      for (Index k = 0; k < D; ++k)
        for (Index r = 0; r < d; ++r) {
          MatrixD Qp = s.Q, Qm = s.Q, Kp = s.K, Km = s.K;
          auto& plus = wrt_q ? Qp : Kp;
          auto& minus = wrt_q ? Qm : Km;
          const double h = 1e-6 * std::max(1.0, std::abs(plus(k, r)));
          plus(k, r) += h;
          minus(k, r) -= h;
          const MatrixD fd =
              (reference::attention_matrix(s.X, Qp, Kp, act) - reference::attention_matrix(s.X, Qm, Km, act)) / (2 * h);
          for (Index i = 0; i < N; ++i)
            for (Index j = 0; j < N; ++j)
              ASSERT_TRUE(test::close(J(i * N + j, k * d + r), fd(i, j), test::tol.finite_diff_rel * 100,
                                      test::tol.finite_diff_abs * (1 + fd.cwiseAbs().maxCoeff())))
                  << (wrt_q ? "Q" : "K") << " entry " << k << "," << r << " output " << i << "," << j;
        }
    }
  }
}

TEST(ReferenceJacobians, SoftmaxJacobianMatchesFiniteDifferences) {
  const Index N = 3, n = 4;
  MatrixD A(N, n);
  fill_gaussian(A, GaussianStream(test::seed(), 11, 0, StreamTag::Logits), 2.0);
  const MatrixD J = reference::softmax_jacobian(A);
  for (Index i = 0; i < N; ++i)
    for (Index l = 0; l < n; ++l) {
      MatrixD Ap = A, Am = A;
      const double h = 1e-6;
      Ap(i, l) += h;
      Am(i, l) -= h;
      const MatrixD fd = (reference::softmax_rows(Ap) - reference::softmax_rows(Am)) / (2 * h);
      for (Index a = 0; a < N; ++a)
        for (Index b = 0; b < n; ++b) ASSERT_TRUE(test::close(J(a * n + b, i * n + l), fd(a, b), 1e-6, 1e-9));
    }
  const auto closed = softmax_matrix_norms(A);
  EXPECT_TRUE(test::close(closed.jac2, J.squaredNorm(), 1e-12, 1e-15));
  EXPECT_TRUE(test::close(closed.frob2, reference::softmax_rows(A).squaredNorm(), 1e-12, 1e-15));
}

// POLY Thm 4.1 on random inputs at many scales and on extreme ones; the Jacobian bound is also
// checked at its tight constant 1/2 (two equal dominant logits attain it).
TEST(SoftmaxBounds, HoldOnRandomAndExtremeInputs) {
  for (Index N : {1, 2, 5, 33})
    for (double scale : {1e-8, 1e-2, 1.0, 10.0, 1e3, 1e8}) {
      MatrixD A(N, N);
      fill_gaussian(A, GaussianStream(test::seed(), std::uint64_t(N), 0, StreamTag::Logits), scale);
      const auto n = softmax_matrix_norms(A);
      const double sqrtN = std::sqrt(double(N));
      EXPECT_LE(std::sqrt(n.frob2), sqrtN * (1 + 1e-12)) << "N=" << N << " scale=" << scale;
      EXPECT_LE(std::sqrt(n.jac2), 2 * sqrtN);
      EXPECT_LE(std::sqrt(n.jac2), 0.5 * sqrtN * (1 + 1e-12));
    }
  const double two_way[] = {50.0, 50.0, 0.0, -3.0};
  EXPECT_TRUE(test::close(softmax_row_norms(two_way, 4).jac2, 0.25, 1e-12, 0));
  const double one_hot[] = {800.0, 0.0, 0.0};
  EXPECT_TRUE(test::close(softmax_row_norms(one_hot, 3).frob2, 1.0, 1e-12, 0));
}

TEST(MonteCarlo, IdenticalForAnyThreadCount) {
  const int threads = omp_get_max_threads();
  // 12 trials run one per thread; 3 trials (fewer than two per thread) run in order, each trial's
  // row blocks, fills and products spread over the threads; N = 2500 always takes that path.
  for (auto [N, trials] : {std::pair<Index, std::uint32_t>{16, 12}, {600, 3}, {2500, 2}}) {
    AttentionMcConfig c{{N, 8, 4, 1.0, 1.0},
                        {{"poly", 3, KScale::parse("sqrtN"), Convention::inside}, {"softmax"}},
                        test::seed(),
                        trials};
    std::vector<std::vector<ResultRow>> runs;
    for (int t : {1, 2, 3}) {
      omp_set_num_threads(t);
      runs.push_back(run_attention_norms(c));
    }
    for (std::size_t run = 1; run < runs.size(); ++run)
      for (std::size_t i = 0; i < runs[0].size(); ++i) {
        EXPECT_EQ(runs[0][i].value.mean, runs[run][i].value.mean) << runs[0][i].quantity << " N=" << N;
        EXPECT_EQ(runs[0][i].value.se, runs[run][i].value.se) << runs[0][i].quantity << " N=" << N;
      }
  }
  omp_set_num_threads(threads);
}

TEST(MonteCarlo, NonFiniteTrialsAreCountedNotAveraged) {
  AttentionMcConfig c{{8, 4, 4, 1e30, 1e30}, {{"poly", 9, KScale{}, Convention::none}}, test::seed(), 4};
  const auto rows = run_attention_norms(c);
  for (const auto& r : rows)
    if (r.quantity == "frob2") {
      EXPECT_EQ(r.value.nonfinite, 4);
      EXPECT_FALSE(r.value.finite());
    }
}

// This test binary run again for the current test alone, with `variable` set: its exit status is the test's outcome.
int rerun_in_a_child_process(const std::string& variable) {
  const auto* test = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string filter = text("--gtest_filter=", test->test_suite_name(), ".", test->name()),
              program = "attnlab_property";
  std::vector<std::string> env{variable + "=1"};
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env) envp.push_back(e.data());
  envp.push_back(nullptr);
  char* argv[] = {program.data(), filter.data(), nullptr};
  pid_t child = 0;
  if (posix_spawn(&child, "/proc/self/exe", nullptr, nullptr, argv, envp.data()) != 0) return -1;
  int status = 0;
  ::waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Memory stays O(N (D + d + block)): an N×N double matrix at N = 8192 would be 512 MiB. Measured in a child process of
// its own, whose peak RSS no earlier test can have raised, nor absorbed into memory it freed but kept mapped.
TEST(AttentionNorms, StreamedNeverFormsTheNxNMatrix) {
  if (!std::getenv("ATTNLAB_MEASURE_PEAK_RSS")) {
    EXPECT_EQ(rerun_in_a_child_process("ATTNLAB_MEASURE_PEAK_RSS"), 0) << "the child's failure is printed above";
    return;
  }
  const Index N = 8192;
  EnsembleSample<float> s;
  draw_ensemble(EnsembleSpec{N, 16, 16, 1, 1}, test::seed(), 0, s);
  rusage before{}, after{};
  getrusage(RUSAGE_SELF, &before);
  const auto act = ActivationSpec{"poly", 3, KScale::parse("sqrtN")}.resolve(N, 16);
  const auto n = attention_norms_streamed(s.X, s.Q, s.K, act);
  const auto soft = attention_norms_streamed(s.X, s.Q, s.K, ActivationSpec{"softmax"}.resolve(N, 16));
  getrusage(RUSAGE_SELF, &after);
  EXPECT_TRUE(std::isfinite(n.frob2) && n.frob2 > 0);
  EXPECT_TRUE(std::isfinite(soft.qgrad2) && soft.qgrad2 > 0);
  const double grown_mib = double(after.ru_maxrss - before.ru_maxrss) / 1024.0;
  EXPECT_LT(grown_mib, 64.0) << "peak RSS grew by " << grown_mib << " MiB";
}
