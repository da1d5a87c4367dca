// Exact Wick expectations against Monte-Carlo: |MC mean − exact| ≤ 5 standard errors.
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/theory/moments.hpp>

#include "support.hpp"

#include <cmath>

using namespace attnlab;

namespace {

// 5 SE: a false alarm is ~1e-6 per comparison for Gaussian means. Sixth powers of Gaussian
// products (p = 3) are so heavy-tailed that the sample SE itself runs low: they get 7 SE.
// Rounding is allowed for where the quantity is deterministic (x's Jacobian) and the SE is 0.
::testing::AssertionResult within_ci(const Estimate& mc, double exact, double sigmas = 5.0) {
  if (std::abs(mc.mean - exact) <= sigmas * mc.se + 1e-12 * std::abs(exact)) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "MC " << mc.mean << " ± " << mc.se << " vs exact " << exact << " ("
                                       << (mc.mean - exact) / mc.se << " SE)";
}

}  // namespace

TEST(ExactMoments, FrobeniusAndGradientsOfMp) {
  struct Case {
    Index N, D, d;
    double sx, st;
    int max_p;
  };
  // At D = 2, ‖x‖^12 (p = 3) is an exponential variable to the sixth: 40000 trials cannot pin its mean.
  for (const Case c : {Case{6, 5, 3, 1.0, 1.0, 3}, Case{3, 2, 4, 0.7, 1.3, 2}, Case{9, 8, 2, 1.1, 0.6, 3}}) {
    AttentionMcConfig config{{c.N, c.D, c.d, c.sx, c.st}, {}, test::seed(), 40000};
    for (int p = 1; p <= c.max_p; ++p) config.activations.push_back({"poly", p, KScale{}, Convention::none});
    const auto rows = run_attention_norms(config);
    const theory::Ensemble e{double(c.N), double(c.D), double(c.d), c.sx, c.st};
    for (const auto& r : rows) {
      SCOPED_TRACE(::testing::Message() << "N=" << c.N << " D=" << c.D << " d=" << c.d << " p=" << r.p << " "
                                        << r.quantity);
      const double sigmas = r.p < 3 ? 5.0 : 7.0;
      if (r.quantity == "frob2") {
        EXPECT_TRUE(within_ci(r.value, theory::frobenius2_exact(e, r.p), sigmas));
      }
      // K-gradients have the Q-gradients' expectation by the Q ↔ K, i ↔ j symmetry.
      if (r.quantity == "qgrad2" || r.quantity == "kgrad2") {
        EXPECT_TRUE(within_ci(r.value, theory::qgrad2_exact(e, r.p), sigmas));
      }
    }
  }
}

TEST(ExactMoments, ScalingConventionsRescaleExactly) {
  // (M/√d)^p/k and M^p/(√d k) are M^p times constants: their frob2 is the exact moment times those constants².
  const EnsembleSpec spec{7, 4, 4, 1.0, 1.0};
  AttentionMcConfig config{spec,
                           {{"poly", 2, KScale{}, Convention::none},
                            {"poly", 2, KScale::parse("3"), Convention::inside},
                            {"poly", 2, KScale::parse("sqrtN"), Convention::outside}},
                           test::seed(),
                           50};
  const auto rows = run_attention_norms(config);
  const auto frob2 = [&](std::size_t activation) {
    return rows[activation * attention_quantities().size() + 1].value.mean;
  };
  EXPECT_TRUE(test::close(frob2(1), frob2(0) / (16.0 * 9.0), 1e-12, 0));  // (1/√d)^(2p) / k² with d = 4, p = 2
  EXPECT_TRUE(test::close(frob2(2), frob2(0) / (4.0 * 7.0), 1e-12, 0));   // 1/d / N
}

TEST(ExactMoments, ProductOfIndependentFactors) {
  // E(c^{2p}) for c = Σ_{i<D} a_i b_i against a direct Monte-Carlo with the library's streams.
  for (const int D : {1, 3, 16})
    for (const int p : {1, 2, 3}) {
      const double s1 = 1.4, s2 = 0.6;
      Welford w;
      for (std::uint32_t t = 0; t < 200000; ++t) {
        const GaussianStream a(test::seed(), std::uint64_t(D), t, StreamTag::A),
            b(test::seed(), std::uint64_t(D), t, StreamTag::B);
        double c = 0;
        for (int i = 0; i < D; ++i) c += s1 * a.normal(std::uint64_t(i)) * s2 * b.normal(std::uint64_t(i));
        w.add(std::pow(c, 2 * p));
      }
      EXPECT_TRUE(within_ci(estimate(w), theory::product_moment_exact(D, p, s1, s2), p < 3 ? 5.0 : 7.0))
          << "D=" << D << " p=" << p;
    }
}

TEST(ExactMoments, PaperFormulasAgreeWhereTheyShould) {
  // eq (41) is exact at p = 1; eq (43) matches the exact moment to first order in 1/D.
  EXPECT_DOUBLE_EQ(theory::product_moment_paper(7, 1, 1.3, 0.4), theory::product_moment_exact(7, 1, 1.3, 0.4));
  const double big = 1e7;
  EXPECT_TRUE(
      test::close(theory::product_moment_paper(big, 3, 1, 1), theory::product_moment_exact(big, 3, 1, 1), 1e-5, 0));
  // The independent-factor model differs from E‖M‖_F² (X appears twice) by exactly 2/(ND) at p = 1.
  const theory::Ensemble e{16, 8, 4, 1, 1};
  EXPECT_TRUE(test::close(theory::frobenius2_exact(e, 1) / theory::frobenius2_independent_exact(e, 1) - 1,
                          2.0 / (16 * 8), 1e-12, 0));
}

TEST(ExactMoments, SquaredNormsOfEveryActivationWithAClosedForm) {
  const EnsembleSpec spec{6, 5, 3, 0.9, 1.2};
  AttentionMcConfig config{spec,
                           {{"poly", 1, KScale{}, Convention::none},
                            {"poly", 2, KScale::parse("sqrtN"), Convention::inside},
                            {"poly", 3, KScale::parse("2"), Convention::outside},
                            {.name = "identity"},
                            {.name = "relu", .alpha = 0.5},
                            {.name = "relu2"}},
                           test::seed(),
                           40000};
  const auto rows = run_attention_norms(config);
  const auto per = attention_quantities().size();
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    if (r.quantity != "frob2" && r.quantity != "jac2" && r.quantity != "qgrad2" && r.quantity != "kgrad2") continue;
    SCOPED_TRACE(r.activation + " " + r.quantity);
    const auto activation = config.activations[i / per].resolve(spec.N, spec.d);
    EXPECT_TRUE(within_ci(r.value, theory::squared_norm_exact(spec, activation, r.quantity), r.p == 3 ? 7.0 : 5.0));
  }
}

TEST(ExactMoments, NoClosedFormClaimedWhereThereIsNone) {
  const EnsembleSpec spec{6, 5, 3, 1.0, 1.0};
  for (const char* name : {"softmax", "gelu", "sigmoid", "poly+qkln", "relu+prenorm", "sinmax"}) {
    const auto activation = ActivationSpec::parse(name).resolve(spec.N, spec.d);
    EXPECT_TRUE(std::isnan(theory::squared_norm_exact(spec, activation, "frob2"))) << name;
  }
  const auto poly = ActivationSpec::parse("poly").resolve(spec.N, spec.d);
  EXPECT_TRUE(std::isnan(theory::squared_norm_exact(spec, poly, "frob"))) << "a norm, not a squared norm";
}

// The exact squared norms as control variates: the norms' estimates agree with the plain means, with narrower
// intervals; softmax (no closed form) and the squared quantities themselves are the plain means, bit for bit.
TEST(ControlVariates, NormsAgreeWithThePlainMeansWithNarrowerIntervals) {
  AttentionMcConfig config{{16, 8, 8, 1.0, 1.0},
                           {ActivationSpec::parse("poly"), {.name = "relu"}, ActivationSpec::parse("softmax")},
                           test::seed(),
                           2000};
  const auto plain = run_attention_norms(config);
  config.exact_mean = theory::squared_norm_exact;
  const auto controlled = run_attention_norms(config);
  ASSERT_EQ(plain.size(), controlled.size());
  for (std::size_t i = 0; i < plain.size(); ++i) {
    const auto &p = plain[i], &c = controlled[i];
    SCOPED_TRACE(p.activation + " " + p.quantity);
    const bool norm = p.quantity == "frob" || p.quantity == "jac" || p.quantity == "qgrad" || p.quantity == "kgrad";
    if (!norm || p.activation == "softmax") {
      EXPECT_EQ(c.value.mean, p.value.mean);
      EXPECT_EQ(extra_value(c, "cv_variance_ratio"), "");
      continue;
    }
    // The two estimates share their trials: their difference has a variance below the plain one's.
    EXPECT_LE(std::abs(c.value.mean - p.value.mean), 4 * p.value.se);
    EXPECT_LT(c.value.se, p.value.se);
    EXPECT_GT(std::stod(extra_value(c, "cv_variance_ratio")), 2.0);  // printed to 4 digits: text
  }
}
