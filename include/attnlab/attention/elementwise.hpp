#pragma once
// The elementwise functions h of ϕ = out_scale · h(S) and their derivatives, written once for the CPU
// engine and the GPU kernels (no Eigen: nvcc compiles this header for the device too).
#include <attnlab/core/hd.hpp>

#include <cmath>
#include <type_traits>
#include <stdexcept>

#if !defined(__CUDACC__)
#include <attnlab/core/vmath.hpp>
#endif

namespace attnlab {

// x^p (POLY), the RELU paper's h ∈ {relu, relu², gelu, softplus, identity, relu6, sigmoid},
// REPOLY Table 5's elu, tanh, exp, and zero: attention switched off (the trainer's control); formula: a user's
// `expr:` (attention/formula.hpp), evaluated over arrays by its tape, never entry by entry here.
enum class Elementwise { power, relu, relu2, gelu, softplus, identity, relu6, sigmoid, elu, tanh, exp, zero, formula };

namespace elementwise_math {
#if defined(__CUDACC__)
using ::erfc, ::exp, ::expm1, ::fabs, ::log1p, ::tanh;  // CUDA's overloads serve host and device
#else
using std::expm1, std::fabs, std::log1p, std::tanh, vmath::erfc, vmath::exp;
#endif
}  // namespace elementwise_math

// The piecewise polynomials: cheap enough per entry that float tiles evaluate them in float (R below).
template <Elementwise F>
inline constexpr bool kPiecewisePolynomial = F == Elementwise::power || F == Elementwise::relu ||
                                             F == Elementwise::relu2 || F == Elementwise::identity || F == Elementwise::relu6 ||
                                             F == Elementwise::zero;

// h(s) and h'(s). F (and P for x^P) fixed at compile time lets the tile loops specialise; P = 0 uses p.
// R other than double (float, or a vector of float lanes) only for the piecewise polynomials, which are written so
// that R{} + c is the constant c and a comparison selects lane by lane; the others are evaluated in double.
template <Elementwise F, int P = 0, class R = double>
ATTNLAB_HD inline void evaluate(R s, int p, R& h, R& dh) {
  using E = Elementwise;
  using namespace elementwise_math;
  static_assert(std::is_same_v<R, double> || kPiecewisePolynomial<F>);
  if constexpr (F == E::power) {
    const int n = P > 0 ? P : p;
    R r = R{} + 1;  // s^(n-1)
    for (int q = 1; q < n; ++q) r *= s;
    h = r * s;
    dh = r * static_cast<float>(n);
  } else if constexpr (F == E::relu) {
    h = s > 0 ? s : R{};
    dh = s > 0 ? R{} + 1 : R{};
  } else if constexpr (F == E::relu2) {
    h = s > 0 ? s * s : R{};
    dh = s > 0 ? 2 * s : R{};
  } else if constexpr (F == E::gelu) {  // exact: s Φ(s)
    const double cdf = 0.5 * erfc(-s * 0.70710678118654752), pdf = 0.39894228040143268 * exp(-0.5 * s * s);
    h = s * cdf;
    dh = cdf + s * pdf;
  } else if constexpr (F == E::softplus) {  // log(1 + e^s) without overflow
    h = (s < 0.0 ? 0.0 : s) + log1p(exp(-fabs(s)));
    dh = s >= 0 ? 1 / (1 + exp(-s)) : exp(s) / (1 + exp(s));
  } else if constexpr (F == E::identity) {
    h = s;
    dh = R{} + 1;
  } else if constexpr (F == E::relu6) {
    const R t = s < 0 ? R{} : s;
    h = 6 < t ? R{} + 6 : t;
    dh = s > 0 && s < 6 ? R{} + 1 : R{};
  } else if constexpr (F == E::sigmoid) {
    const double e = exp(-fabs(s)), sig = s >= 0 ? 1 / (1 + e) : e / (1 + e);
    h = sig;
    dh = sig * (1 - sig);
  } else if constexpr (F == E::elu) {
    h = s > 0 ? s : expm1(s);
    dh = s > 0 ? 1.0 : exp(s);
  } else if constexpr (F == E::tanh) {
    h = tanh(s);
    dh = 1 - h * h;
  } else if constexpr (F == E::exp) {
    h = exp(s);
    dh = h;
  } else {
    static_assert(F == E::zero);
    h = dh = R{};
  }
}

// Calls visit.template operator()<F, P>() with the run-time function as template arguments, so that
// loops over entries specialise (small powers unrolled: P = 0 means "use p").
template <class Visit>
decltype(auto) with_elementwise(Elementwise f, int p, Visit&& visit) {
  using E = Elementwise;
  switch (f) {
    case E::power:
      switch (p) {
        case 1: return visit.template operator()<E::power, 1>();
        case 2: return visit.template operator()<E::power, 2>();
        case 3: return visit.template operator()<E::power, 3>();
        case 4: return visit.template operator()<E::power, 4>();
        case 5: return visit.template operator()<E::power, 5>();
        default: return visit.template operator()<E::power, 0>();
      }
    case E::relu: return visit.template operator()<E::relu, 0>();
    case E::relu2: return visit.template operator()<E::relu2, 0>();
    case E::gelu: return visit.template operator()<E::gelu, 0>();
    case E::softplus: return visit.template operator()<E::softplus, 0>();
    case E::identity: return visit.template operator()<E::identity, 0>();
    case E::relu6: return visit.template operator()<E::relu6, 0>();
    case E::sigmoid: return visit.template operator()<E::sigmoid, 0>();
    case E::elu: return visit.template operator()<E::elu, 0>();
    case E::tanh: return visit.template operator()<E::tanh, 0>();
    case E::exp: return visit.template operator()<E::exp, 0>();
    case E::zero: return visit.template operator()<E::zero, 0>();
    case E::formula: throw std::invalid_argument("a formula activation runs on the cpu backend's array paths only");
  }
  throw std::logic_error("unreachable elementwise function");
}

}  // namespace attnlab
