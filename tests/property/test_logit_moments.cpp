// Closed forms of theory/logit_moments against quadrature of their definitions and against Monte-Carlo.
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/mc/statistics.hpp>
#include <attnlab/theory/logit_moments.hpp>

#include "support.hpp"

#include <boost/math/quadrature/gauss_kronrod.hpp>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

using namespace attnlab;

namespace {

// 5 SE: ~6e-7 false alarms per Gaussian comparison. Means of fourth powers of the heavy-tailed logits
// (relu2's second moment, frob2 of relu2) have a sample SE that itself runs low: they get 7.
::testing::AssertionResult within_se(const Estimate& mc, double exact, double sigmas) {
  if (std::abs(mc.mean - exact) <= sigmas * mc.se) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "MC " << mc.mean << " ± " << mc.se << " vs exact " << exact << " ("
                                       << (mc.mean - exact) / mc.se << " SE)";
}

struct Function {
  std::string name;
  Elementwise h;
  int p;
};
const std::vector<Function> kAll{{"x", Elementwise::power, 1},
                                 {"x^2", Elementwise::power, 2},
                                 {"x^3", Elementwise::power, 3},
                                 {"relu", Elementwise::relu, 1},
                                 {"relu2", Elementwise::relu2, 1},
                                 {"gelu", Elementwise::gelu, 1},
                                 {"softplus", Elementwise::softplus, 1},
                                 {"identity", Elementwise::identity, 1},
                                 {"relu6", Elementwise::relu6, 1},
                                 {"sigmoid", Elementwise::sigmoid, 1},
                                 {"elu", Elementwise::elu, 1},
                                 {"tanh", Elementwise::tanh, 1},
                                 {"exp", Elementwise::exp, 1}};
const std::vector<std::string> kRelu{"relu", "relu2", "gelu", "softplus", "identity", "relu6", "sigmoid"};

double h_of(const Function& f, double s) {
  double v, dv;
  evaluate(f.h, f.p, s, v, dv);
  return v;
}

// ∫ g(σz)φ(z) dz by adaptive Gauss–Kronrod written here, independent of the library's path.
double integrate_gaussian(const std::function<double(double)>& g, double sigma) {
  using GK = boost::math::quadrature::gauss_kronrod<double, 61>;
  const auto w = [&](double z) {
    const double d = std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
    return d == 0 ? 0.0 : g(sigma * z) * d;
  };
  const double inf = std::numeric_limits<double>::infinity();
  // breaks at relu6's cap too
  const double cap = 6 / sigma;
  return GK::integrate(w, -inf, 0.0, 20, 1e-13) + GK::integrate(w, 0.0, cap, 20, 1e-13) +
         GK::integrate(w, cap, inf, 20, 1e-13);
}

}  // namespace

TEST(LogitMoments, GaussianClosedFormsAgreeWithQuadrature) {
  for (const auto& f : kAll)
    for (const double sigma : {0.0, 0.3, 1.0, 2.5, 7.0}) {
      if (f.h == Elementwise::exp && sigma > 2.5) continue;  // e^{2σ²} leaves double range's comfort at σ = 7
      SCOPED_TRACE(::testing::Message() << f.name << " sigma=" << sigma);
      const auto m = theory::gaussian_moments(f.h, sigma, f.p);
      const double mean = sigma == 0 ? h_of(f, 0) : integrate_gaussian([&](double s) { return h_of(f, s); }, sigma);
      const double second = sigma == 0 ? std::pow(h_of(f, 0), 2)
                                       : integrate_gaussian([&](double s) { return std::pow(h_of(f, s), 2); }, sigma);
      EXPECT_TRUE(test::close(m.mean, mean, 1e-9, 1e-12));
      EXPECT_TRUE(test::close(m.second, second, 1e-9, 1e-12));
    }
}

TEST(LogitMoments, GaussianMomentsAgreeWithMonteCarlo) {
  const std::uint32_t n = 400000;
  for (const auto& f : kAll)
    for (const double sigma : {0.5, 1.0, 2.5, 7.0}) {
      if ((f.h == Elementwise::exp && sigma > 0.5) || (f.h == Elementwise::power && f.p == 3 && sigma > 1)) continue;
      SCOPED_TRACE(::testing::Message() << f.name << " sigma=" << sigma);
      const GaussianStream z(test::seed(), hash_string("gaussian-moments"), 0, StreamTag::Logits);
      Welford mean, second;
      for (std::uint32_t i = 0; i < n; ++i) {
        const double v = h_of(f, sigma * z.normal(i));
        mean.add(v);
        second.add(v * v);
      }
      const auto m = theory::gaussian_moments(f.h, sigma, f.p);
      const double sigmas = (f.h == Elementwise::relu2 || (f.h == Elementwise::power && f.p >= 2)) ? 7.0 : 5.0;
      EXPECT_TRUE(within_se(estimate(mean), m.mean, sigmas));
      EXPECT_TRUE(within_se(estimate(second), m.second, sigmas));
    }
}

TEST(LogitMoments, ScaleQuadratureMatchesChiSquareMoments) {
  // E τ^k = c^{k/2} M_D(k/2)² M_d(k/2) off the diagonal, c^{k/2} M_D(k) M_d(k/2) on it, with
  // M_n(s) = E(χ²_n/n)^s = (2/n)^s Γ(n/2 + s)/Γ(n/2): the law of τ in the header, moment by moment.
  const auto M = [](double n, double s) {
    return std::exp(s * std::log(2 / n) + std::lgamma(n / 2 + s) - std::lgamma(n / 2));
  };
  struct Case {
    Index D, d;
    double rel;
  };
  for (const Case c : {Case{64, 64, 1e-10}, Case{8, 3, 1e-10}, Case{2, 2, 1e-10}, Case{1, 1, 1e-10}})
    for (const double k : {0.5, 1.0, 2.0, 3.0, 4.0})
      for (const bool diagonal : {false, true}) {
        const EnsembleSpec e{4, c.D, c.d, 0.9, 0.7};
        const double scale = std::pow(std::pow(0.9 * 0.7, 4) * double(c.D * c.D), k / 2);
        const double exact = scale * (diagonal ? M(c.D, k) : M(c.D, k / 2) * M(c.D, k / 2)) * M(c.d, k / 2);
        const double quad = theory::logit_scale_expectation([&](double tau) { return std::pow(tau, k); }, e, diagonal);
        EXPECT_TRUE(test::close(quad, exact, c.rel, 0))
            << "D=" << c.D << " d=" << c.d << " k=" << k << " diag=" << diagonal;
      }
}

TEST(LogitMoments, HomogeneousClosedFormsMatchTheGenericQuadrature) {
  // relu, relu2, identity and x^p use absolute moments of the logit law; the generic path integrates them.
  for (const bool qkln : {false, true})
    for (const Index d : {3, 8, 64}) {
      const EnsembleSpec e{4, 16, d, 1.0, qkln ? 1.0 : 0.25};
      for (const auto& f : kAll) {
        if (f.h != Elementwise::relu && f.h != Elementwise::relu2 && f.h != Elementwise::identity &&
            f.h != Elementwise::power)
          continue;
        const auto m = theory::logit_moments(f.h, e, qkln, f.p);
        for (const bool diagonal : {false, true}) {
          const auto& entry = diagonal ? m.diagonal : m.off_diagonal;
          const double mean = theory::logit_expectation([&](double s) { return h_of(f, s); }, e, qkln, diagonal);
          const double second = theory::logit_expectation([&](double s) { return std::pow(h_of(f, s), 2); }, e, qkln,
                                                          diagonal);
          SCOPED_TRACE(::testing::Message() << f.name << " qkln=" << qkln << " d=" << d << " diag=" << diagonal);
          EXPECT_TRUE(test::close(entry.mean, mean, 1e-8, 1e-12));
          EXPECT_TRUE(test::close(entry.second, second, 1e-8, 1e-12));
        }
      }
    }
}

// The toolkit's own Monte-Carlo of ϕ = N^{-α}h(S) against weight_levels: mean weights, row sums, E‖ϕ‖_F².
TEST(LogitMoments, WeightLevelsMatchTheAttentionEnsemble) {
  struct Case {
    EnsembleSpec e;
    bool qkln;
  };
  const std::vector<Case> cases{{{0, 64, 64, 1.0, 0.125}, false},  // RELU's init grid: σt = 1/√D
                                {{0, 4, 3, 0.8, 0.6}, false},      // small D, d: far from Gaussian logits
                                {{0, 16, 8, 1.0, 1.0}, true},      // RELU's qkln grid, smaller d
                                {{0, 5, 3, 1.0, 1.0}, true},       // d = 3: arcsine law of t
                                {{0, 5, 2, 1.0, 1.0}, true}};      // d = 2: S = ±√2 (eps 1e-16, header)
  for (const auto& c : cases)
    for (const Index N : {1, 3, 24}) {
      const double alpha = N == 3 ? 0.5 : 1.0;
      AttentionMcConfig config{c.e, {}, test::seed(), 6000};
      config.ensemble.N = N;
      for (const auto& name : kRelu) {
        auto spec = ActivationSpec::parse(c.qkln ? name + "+qkln" : name);
        spec.alpha = alpha;
        // The law neglects LayerNorm's eps; at d = 2 its effect is O(√eps), 2e-3 at the default 1e-6.
        if (c.e.d == 2) spec.transforms.qk_eps = 1e-16;
        config.activations.push_back(spec);
      }
      const auto rows = run_attention_norms(config);
      for (std::size_t a = 0; a < kRelu.size(); ++a) {
        const auto& f = *std::find_if(kAll.begin(), kAll.end(), [&](const Function& g) { return g.name == kRelu[a]; });
        const auto level = theory::weight_levels(theory::logit_moments(f.h, c.e, c.qkln), double(N), alpha);
        for (const auto& r : rows) {
          if (r.activation != config.activations[a].label()) continue;
          SCOPED_TRACE(::testing::Message()
                       << r.activation << " N=" << N << " D=" << c.e.D << " d=" << c.e.d << " " << r.quantity);
          const double sigmas = f.h == Elementwise::relu2 && r.quantity == "frob2" ? 7.0 : 5.0;
          const double expected = r.quantity == "mean_weight" ? level.mean_weight
                                  : r.quantity == "row_sum"   ? level.row_sum
                                  : r.quantity == "frob2"     ? level.frob2
                                                              : std::nan("");
          if (!std::isnan(expected)) {
            EXPECT_TRUE(within_se(r.value, expected, sigmas));
          }
        }
      }
    }
}

TEST(LogitMoments, GaussianLogitModelIsRejectedAtSmallDimension) {
  // S is a scale mixture: E S⁴ = 3 E τ⁴ exceeds the Gaussian 3σ⁴ by the factor M_D(2)² M_d(2) =
  // ((D+2)/D)²(d+2)/d = 3.5 at D = 4, d = 3; relu2's frob2 (E relu(S)⁴) sees it, and the MC must too.
  const EnsembleSpec e{24, 4, 3, 0.8, 0.6};
  auto spec = ActivationSpec::parse("relu2");
  const AttentionMcConfig config{e, {spec}, test::seed(), 6000};
  const auto rows = run_attention_norms(config);
  const auto sigma = std::sqrt(theory::logit_variance(e, false));
  const auto gaussian = theory::gaussian_moments(Elementwise::relu2, sigma);
  const theory::EntryMoments model{gaussian, gaussian};
  for (const auto& r : rows)
    if (r.quantity == "frob2") {
      const double predicted = theory::weight_levels(model, 24, 1.0).frob2;
      EXPECT_GT(std::abs(r.value.mean - predicted), 10 * r.value.se)
          << "MC " << r.value.mean << " ± " << r.value.se << " vs Gaussian-logit model " << predicted;
    }
}

TEST(LogitMoments, WeightLevelsApproachTheirLimits) {
  const auto m = theory::logit_moments(Elementwise::gelu, {0, 64, 64, 1.0, 0.125}, false);
  const auto limit = theory::weight_limits(m);
  const double N = 1e7, alpha = 0.7;
  const auto at = theory::weight_levels(m, N, alpha);
  // (N−1)/N and 1/N corrections: relative 1/N·|μ_diag/μ_off − 1| at most a few 1e-7
  EXPECT_TRUE(test::close(at.mean_weight * std::pow(N, alpha), limit.mean_weight, 1e-6, 0));
  EXPECT_TRUE(test::close(at.row_sum * std::pow(N, alpha - 1), limit.row_sum, 1e-6, 0));
  EXPECT_TRUE(test::close(at.frob2 * std::pow(N, 2 * alpha - 2), limit.frob2, 1e-6, 0));
  // N = 1 sees only the diagonal.
  const auto one = theory::weight_levels(m, 1, alpha);
  EXPECT_DOUBLE_EQ(one.mean_weight, m.diagonal.mean);
  EXPECT_DOUBLE_EQ(one.frob2, m.diagonal.second);
}

TEST(SoftmaxLevel, RowNormMatchesMonteCarlo) {
  for (const double sigma : {0.5, 1.0, 2.0})
    for (const Index N : {2, 8, 64, 512}) {
      const std::uint32_t rows = 100000 / std::uint32_t(std::sqrt(double(N)));
      Welford w;
      std::vector<double> x(std::size_t(N), 0.0);
      for (std::uint32_t t = 0; t < rows; ++t) {
        const GaussianStream z(test::seed(), hash_words({hash_string("softmax-level"), std::uint64_t(N)}), t,
                               StreamTag::Logits);
        double top = -std::numeric_limits<double>::infinity(), sum = 0, sum2 = 0;
        for (Index j = 0; j < N; ++j) top = std::max(top, x[std::size_t(j)] = sigma * z.normal(std::uint64_t(j)));
        for (const double v : x) {
          const double e = std::exp(v - top);
          sum += e, sum2 += e * e;
        }
        w.add(sum2 / (sum * sum));
      }
      EXPECT_TRUE(within_se(estimate(w), theory::softmax_row_norm2(double(N), sigma), 5.0))
          << "N=" << N << " sigma=" << sigma;
    }
}

TEST(SoftmaxLevel, ApproachesTheLimitAtTheDeltaMethodRate) {
  // N·E‖p‖² = E[A/B²] with A, B the means of e^{2x}, e^x: the delta method gives
  // e^{σ²}(1 + c₁/N + O(N⁻²)), c₁ = 3 Var e^x/(E e^x)² − 2 Cov(e^{2x}, e^x)/(E e^{2x} E e^x)
  //                               = 3(e^{σ²} − 1) − 2(e^{2σ²} − 1).
  for (const double sigma : {0.3, 0.5, 1.0}) {
    const double s2 = sigma * sigma, limit = theory::softmax_row_norm2_limit_times_n(sigma);
    EXPECT_DOUBLE_EQ(limit, std::exp(s2));
    const double c1 = 3 * std::expm1(s2) - 2 * std::expm1(2 * s2);
    // N(ratio − 1) = c₁ + c₂/N + …: its distance to c₁ shrinks tenfold from N = 1e4 to 1e5 (0.2 allows
    // the c₃/N² term), up to the quadrature's relative 1e-10, which N(ratio − 1) multiplies by N.
    const auto distance = [&](double N) {
      return std::abs(N * (N * theory::softmax_row_norm2(N, sigma) / limit - 1) - c1);
    };
    const double near = distance(1e4), far = distance(1e5);
    EXPECT_LE(far, 0.2 * near + 1e-5) << "sigma=" << sigma;
    EXPECT_LE(far, 0.01 * std::abs(c1)) << "sigma=" << sigma;
  }
  EXPECT_DOUBLE_EQ(theory::softmax_row_norm2(1, 1.3), 1.0);
  EXPECT_DOUBLE_EQ(theory::softmax_row_norm2(7, 0.0), 1.0 / 7);
}

TEST(LogitMoments, BadInputNamesTheParameter) {
  EXPECT_THROW(theory::gaussian_moments(Elementwise::relu, -1.0), std::invalid_argument);
  EXPECT_THROW(theory::gaussian_moments(Elementwise::relu, std::nan("")), std::invalid_argument);
  EXPECT_THROW(theory::logit_moments(Elementwise::exp, {4, 8, 8, 1.0, 1.0}, false), std::invalid_argument);
  EXPECT_THROW(theory::logit_moments(Elementwise::relu, {4, 8, 1, 1.0, 1.0}, true), std::invalid_argument);
  EXPECT_THROW(theory::softmax_row_norm2(0.5, 1.0), std::invalid_argument);
  EXPECT_THROW(theory::weight_levels({}, 0, 1.0), std::invalid_argument);
}
