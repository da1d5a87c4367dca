// Activations written as formulas: the parser's canonical text and its refusals, the tape's exact derivatives against
// finite differences, and the streamed norms of a formula against the built-in activation it spells.
#include <attnlab/attention/formula.hpp>
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/norms/attention_norms.hpp>
#include <attnlab/norms/reference.hpp>

#include "support.hpp"

#include <random>
#include <string>
#include <utility>
#include <vector>

using namespace attnlab;

namespace {

std::string canonical(const std::string& f) { return Formula::parse(f).canonical(); }

// The 1-based position a malformed formula is refused at.
std::size_t refused_at(const std::string& f) {
  try {
    Formula::parse(f);
  } catch (const FormulaError& e) {
    return e.position;
  }
  return 0;
}

}  // namespace

TEST(Formula, CanonicalTextKeepsTheTree) {
  const std::vector<std::pair<std::string, std::string>> cases{
      {"x^3/sqrt(N)", "x^3/sqrt(N)"},
      {" x ^ 3 / sqrt( N ) ", "x^3/sqrt(N)"},
      {"x/(1+exp(-x)) / N", "x/(1+exp(-x))/N"},
      {"1/(1+exp(-(x - log(N))))", "1/(1+exp(-(x-log(N))))"},
      {"pow(x, 2)", "x^2"},
      {"(x^2)^3", "(x^2)^3"},
      {"x^2^3", "x^2^3"},
      {"-x^2", "-x^2"},
      {"(-x)^2", "(-x)^2"},
      {"(-2)^x", "(-2)^x"},
      {"x^-1", "x^-1"},
      {"a - (b - x)", "a-(b-x)"},
      {"(a - b) - x", "a-b-x"},
      {"2*(3*x)", "2*(3*x)"},
      {"+x", "x"},
      {"--x", "--x"},
      {"max(x, 0) + min(x,1e-3)", "max(x,0)+min(x,0.001)"},
      {"0.1*x", "0.1*x"},
  };
  for (const auto& [text_in, expected] : cases) {
    SCOPED_TRACE(text_in);
    EXPECT_EQ(canonical(text_in), expected);
    EXPECT_EQ(canonical(expected), expected);
  }
  EXPECT_EQ(Formula::parse("a*x^2 + b*x + a").parameters(), (std::vector<std::string>{"a", "b"}));
}

TEST(Formula, MalformedTextIsRefusedWithItsPosition) {
  EXPECT_EQ(refused_at(""), 1u);
  EXPECT_EQ(refused_at("x^^2"), 3u);
  EXPECT_EQ(refused_at("x +"), 4u);
  EXPECT_EQ(refused_at("exp(x"), 6u);
  EXPECT_EQ(refused_at("exp x"), 5u);
  EXPECT_EQ(refused_at("foo(x)"), 1u);
  EXPECT_EQ(refused_at("max(x)"), 6u);
  EXPECT_EQ(refused_at("x y"), 3u);
  EXPECT_EQ(refused_at("1e999*x"), 1u);
  EXPECT_EQ(refused_at("x $ 2"), 3u);
  EXPECT_EQ(refused_at(std::string(100, '(') + "x" + std::string(100, ')')), 65u);
  try {
    Formula::parse("x^^2");
  } catch (const FormulaError& e) {
    EXPECT_EQ(std::string(e.what()), "formula 'x^^2': at position 3 expected a number, a name or '(' (found '^')");
  }
  EXPECT_THROW(ActivationSpec::parse("expr:x^^2"), FormulaError);
  auto spec = ActivationSpec::parse("expr:a*x");
  EXPECT_THROW(spec.validate(), std::invalid_argument);  // a has no value
  spec.params["a"] = 0.5;
  EXPECT_NO_THROW(spec.validate());
  EXPECT_EQ(spec.label(), "expr:a*x (a=0.5)");
}

TEST(Formula, ConstantsFoldOncePerConfiguration) {
  const auto tape = Formula::parse("x^3/sqrt(N)").compile(64, 8, {});
  ASSERT_EQ(tape->program.size(), 2u);  // a cube and a product
  EXPECT_EQ(tape->program[0].code, FormulaTape::Code::power_integer);
  EXPECT_EQ(tape->program[1].code, FormulaTape::Code::multiply_constant);
  EXPECT_EQ(tape->program[1].c, 1 / 8.0);
  const auto constant = Formula::parse("log(N)*d + a").compile(16, 2, {{"a", 1}});
  EXPECT_TRUE(constant->program.empty());
  EXPECT_DOUBLE_EQ(constant->constant, std::log(16.0) * 2 + 1);
}

// Forward-mode derivatives are exact: central differences agree to their own truncation error.
TEST(Formula, DerivativesMatchFiniteDifferences) {
  const std::vector<std::string> formulas{"x^3/sqrt(N)",     "x/(1+exp(-x))/N",   "1/(1+exp(-(x - log(N))))",
                                          "sin(x)^2",        "cos(2*x)*tanh(x)",  "sqrt(x*x + 1)",
                                          "log(1 + exp(x))", "abs(x)^1.5",        "max(x, 0.1)*min(x, 2)",
                                          "pow(x*x+1, x/3)", "2^x - 3/x",         "relu(x)^2 + sigmoid(a*x)",
                                          "exp(-x^2/d)",     "(x - 1)/(x*x + 2)", "-x^5/N + 4 - x"};
  std::mt19937_64 rng(test::seed());
  std::uniform_real_distribution<double> uniform(-3, 3);
  for (const auto& f : formulas) {
    SCOPED_TRACE(f);
    const auto tape = Formula::parse(f).compile(32, 4, {{"a", 0.7}});
    std::vector<double> x(300);
    for (auto& v : x) {
      do v = uniform(rng);  // off the kinks of abs, max, min and relu, where the difference straddles two pieces
      while (std::abs(v) < 1e-3 || std::abs(v - 0.1) < 1e-3 || std::abs(v - 2) < 1e-3);
    }
    std::vector<double> h(x.size()), dh(x.size());
    tape->evaluate(x.data(), Index(x.size()), h.data(), dh.data());
    for (std::size_t j = 0; j < x.size(); ++j) {
      const double step = 1e-6 * (1 + std::abs(x[j]));
      double up, down, unused;
      const double xu = x[j] + step, xd = x[j] - step;
      tape->evaluate(&xu, 1, &up, &unused);
      tape->evaluate(&xd, 1, &down, &unused);
      if (!std::isfinite(h[j])) continue;  // log and sqrt of negative arguments: NaN in both
      EXPECT_TRUE(test::close(dh[j], (up - down) / (2 * step), test::tol.finite_diff_rel,
                              test::tol.finite_diff_abs * (1 + std::abs(h[j]))))
          << " at x = " << x[j];
    }
  }
}

// A formula's streamed norms against the built-in activation it spells, on the same sample, gradients on and off.
TEST(Formula, EqualsTheBuiltInItSpells) {
  const std::vector<std::pair<std::string, std::string>> pairs{
      {"expr:x^3/sqrt(N)", "poly"},  {"expr:relu(x)/N", "relu"},      {"expr:sigmoid(x)/N", "sigmoid"},
      {"expr:tanh(x)/N", "tanh"},    {"expr:exp(x)/N", "exp"},        {"expr:max(x,0)^2/N", "relu2"},
      {"rowexpr:exp(x)", "softmax"}, {"rowexpr:sin(x)^2", "sin2max"}, {"rowexpr:exp(sin(x))", "sinsoftmax"},
      {"expr:x/sqrt(N)", "identity"}};
  for (auto [N, D, d] : {std::tuple<Index, Index, Index>{37, 6, 5}, {300, 16, 8}}) {
    EnsembleSample<double> s;
    draw_ensemble(EnsembleSpec{N, D, d, 1.0, 1.0}, test::seed(), 0, s);
    for (const auto& [formula, name] : pairs) {
      SCOPED_TRACE(text(formula, " N=", N));
      auto builtin = ActivationSpec::parse(name);
      builtin.k = KScale::parse("sqrtN");
      builtin.alpha = name == "identity" ? 0.5 : 1.0;
      const auto a = ActivationSpec::parse(formula).resolve(N, d), b = builtin.resolve(N, d);
      for (bool gradients : {true, false}) {
        const auto fa = attention_norms_streamed(s.X, s.Q, s.K, a, {}, gradients);
        const auto fb = attention_norms_streamed(s.X, s.Q, s.K, b, {}, gradients);
        EXPECT_TRUE(test::close(fa.frob2, fb.frob2, 1e-12, 0));
        EXPECT_TRUE(test::close(fa.jac2, fb.jac2, 1e-12, 0));
        EXPECT_TRUE(test::close(fa.qgrad2, fb.qgrad2, 1e-12, 0));
        EXPECT_TRUE(test::close(fa.kgrad2, fb.kgrad2, 1e-12, 0));
        EXPECT_TRUE(test::close(fa.sum, fb.sum, 1e-12, 1e-12));
      }
    }
  }
}

// The streamed norms of formulas against the dense references (explicit Jacobians), as every built-in is tested.
TEST(Formula, StreamedEqualsExplicitJacobians) {
  EnsembleSample<double> s;
  draw_ensemble(EnsembleSpec{11, 4, 3, 0.8, 0.9}, test::seed(), 1, s);
  for (const char* f :
       {"expr:x/(1+exp(-x))/N", "expr:1/(1+exp(-(x - log(N))))", "rowexpr:sin(x)^2+0.1", "expr:a*x^2 + b"}) {
    SCOPED_TRACE(f);
    auto spec = ActivationSpec::parse(f);
    spec.params = {{"a", 0.5}, {"b", -1}};
    const auto act = spec.resolve(11, 3);
    const auto fast = attention_norms_streamed(s.X, s.Q, s.K, act, {3, 4});
    EXPECT_TRUE(test::close(fast.frob2, reference::attention_matrix(s.X, s.Q, s.K, act).squaredNorm(), 1e-11, 1e-13));
    EXPECT_TRUE(test::close(fast.jac2, reference::logit_jacobian(s.X, s.Q, s.K, act).squaredNorm(), 1e-10, 1e-13));
    EXPECT_TRUE(test::close(fast.qgrad2, reference::q_jacobian(s.X, s.Q, s.K, act).squaredNorm(), 1e-10, 1e-13));
    EXPECT_TRUE(test::close(fast.kgrad2, reference::k_jacobian(s.X, s.Q, s.K, act).squaredNorm(), 1e-10, 1e-13));
  }
}
