// Uses attnlab as a library: softmax and x^3/sqrt(N) on a row of logits, and the Newton-Schulz pseudo-inverse of a
// small kernel matrix. Prints what it computed and exits non-zero if a result is wrong.
#include <attnlab/attention/row_map.hpp>
#include <attnlab/soft/pinv.hpp>

#include <cmath>
#include <cstdio>

int main() {
  using namespace attnlab;
  const Index n = 6;
  VectorD x(n);
  for (Index j = 0; j < n; ++j) x(j) = 0.5 * double(j) - 1.0;

  VectorD y(n);
  row_forward(ActivationSpec::parse("softmax").resolve(n, 4), x.data(), n, y.data());
  std::printf("softmax(x) sums to %.15g\n", y.sum());
  bool ok = std::abs(y.sum() - 1) < 1e-12;

  auto cubic = ActivationSpec::parse("poly");
  cubic.p = 3;
  cubic.k = KScale::parse("sqrtN");
  row_forward(cubic.resolve(n, 4), x.data(), n, y.data());
  std::printf("x^3/sqrt(N) of the last entry: %.15g\n", y(n - 1));

  MatrixD A(n, n);
  for (Index i = 0; i < n; ++i)
    for (Index j = 0; j < n; ++j) A(i, j) = std::exp(-0.5 * double((i - j) * (i - j)));
  const auto result = pseudo_inverse(A, {.method = PinvMethod::newton, .tolerance = 1e-12});
  const double residual = (A * result.inverse * A - A).norm() / A.norm();
  std::printf("newton: %d iterations, ||A X A - A||_F / ||A||_F = %.3g\n", result.iterations, residual);
  ok = ok && residual < 1e-9;
  return ok ? 0 : 1;
}
