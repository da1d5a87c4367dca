#pragma once
// The elementwise functions h of ϕ = out_scale · h(S) and their derivatives, written once for the CPU
// engine and the GPU kernels (no Eigen: nvcc compiles this header for the device too).
#include <attnlab/core/hd.hpp>

#include <cmath>
#include <stdexcept>
#include <type_traits>

#if !defined(__CUDACC__)
#include <attnlab/core/vmath.hpp>
#endif

namespace attnlab {

// What ϕ divides h by, so which flags its registry entry takes: x^p/k (--p, --k, --convention), h(S)/N^alpha
// (--alpha), or nothing.
enum class ElementwiseScale { over_k, over_n_alpha, none };

// The functions of elementwise_functions.def, then formula: a user's `expr:` (attention/formula.hpp), evaluated over
// arrays by its tape, never entry by entry here.
enum class Elementwise {
#define ATTNLAB_ELEMENTWISE(fn, name, scale, family, float_tiles, description, ...) fn,
#include <attnlab/attention/elementwise_functions.def>
  formula
};

namespace elementwise_math {
#if defined(__CUDACC__)
using ::erfc, ::exp, ::expm1, ::fabs, ::log1p, ::tanh;  // CUDA's overloads serve host and device
#else
using std::expm1, std::fabs, std::log1p, std::tanh, vmath::erfc, vmath::exp;
#endif
}  // namespace elementwise_math

// The piecewise polynomials: cheap enough per entry that float tiles evaluate them in float (R below).
template <Elementwise F>
inline constexpr bool kPiecewisePolynomial = false;
#define ATTNLAB_ELEMENTWISE(fn, name, scale, family, float_tiles, description, ...) \
  template <>                                                                       \
  inline constexpr bool kPiecewisePolynomial<Elementwise::fn> = float_tiles;
#include <attnlab/attention/elementwise_functions.def>

// h(s) and h'(s), by the entry's body. F (and P for x^P) fixed at compile time lets the tile loops specialise; P = 0
// uses p. R other than double (float, or a vector of float lanes) only for the piecewise polynomials.
template <Elementwise F, int P = 0, class R = double>
ATTNLAB_HD inline void evaluate(R s, int p, R& h, R& dh) {
  using namespace elementwise_math;
  static_assert(F != Elementwise::formula, "a formula's h is evaluated by its tape");
  static_assert(std::is_same_v<R, double> || kPiecewisePolynomial<F>);
#define ATTNLAB_ELEMENTWISE(fn, name, scale, family, float_tiles, description, ...) \
  if constexpr (F == Elementwise::fn) __VA_ARGS__ else
#include <attnlab/attention/elementwise_functions.def>
  {}
}

// visit.template operator()<F, P>() with x^p's small powers unrolled (P = 0 means "use p").
template <Elementwise F, class Visit>
decltype(auto) with_power(int p, Visit&& visit) {
  switch (p) {
    case 1: return visit.template operator()<F, 1>();
    case 2: return visit.template operator()<F, 2>();
    case 3: return visit.template operator()<F, 3>();
    case 4: return visit.template operator()<F, 4>();
    case 5: return visit.template operator()<F, 5>();
    default: return visit.template operator()<F, 0>();
  }
}

// Calls visit.template operator()<F, P>() with the run-time function as template arguments, so that loops over
// entries specialise; P is 0 but for an h over k, x^p, whose small powers with_power unrolls.
template <class Visit>
decltype(auto) with_elementwise(Elementwise f, int p, Visit&& visit) {
  switch (f) {
#define ATTNLAB_ELEMENTWISE(fn, name, scale, family, float_tiles, description, ...)                                  \
  case Elementwise::fn:                                                                                              \
    if constexpr (ElementwiseScale::scale == ElementwiseScale::over_k) return with_power<Elementwise::fn>(p, visit); \
    else return visit.template operator()<Elementwise::fn, 0>();
#include <attnlab/attention/elementwise_functions.def>
    case Elementwise::formula:
      throw std::invalid_argument("a formula activation runs on the cpu backend's array paths only");
  }
  throw std::logic_error("unreachable elementwise function");
}

}  // namespace attnlab
