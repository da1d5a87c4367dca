// ActivationSpec::parse of `expr:` and `rowexpr:` formulas: a formula parses to a canonical text that parses back to
// itself, compiles for a configuration and evaluates, or is refused with one line naming the position.
#include "fuzz.hpp"

#include <attnlab/attention/activation.hpp>

#include <cmath>

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz::parse_or_reject([&] {
    const std::string input = fuzz::bytes_of(data, size);
    try {
      Formula::parse(input);
    } catch (const FormulaError& e) {
      fuzz::expect(e.position >= 1 && e.position <= input.size() + 1, "a position outside the formula");
      throw;
    }
    auto spec = ActivationSpec::parse("expr:" + input);
    const auto canonical = spec.formula->canonical();
    fuzz::expect(Formula::parse(canonical).canonical() == canonical,
                 "the canonical text does not parse back: " + canonical);
    for (const auto& name : spec.formula->parameters()) spec.params[name] = 0.5;
    const auto a = std::get<ElementwiseActivation>(spec.resolve(16, 4).fn);
    const double x[] = {-3, -1, 0, 0.5, 2, 40};
    double h[6], dh[6];
    a.formula->evaluate(x, 6, h, dh);
  });
  return 0;
}

std::vector<std::string> fuzz_seeds() {
  return {"x^3/sqrt(N)",
          "x/(1+exp(-x)) / N",
          "1/(1+exp(-(x - log(N))))",
          "sin(x)^2",
          "max(x, 0)^2/N",
          "a*x^2 + b*pow(abs(x), 1.5)",
          "-x^-2*(d - 2)",
          "relu(x)*sigmoid(tanh(x))/min(N, 8)",
          "x^^2",
          "exp(x"};
}
