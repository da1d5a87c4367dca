#pragma once
// exp (double and float), sin, cos, erfc that GCC vectorises in `omp simd` loops through glibc's libmvec (x86-64,
// AVX2/AVX-512). glibc declares its vector variants only under -ffast-math, and GCC fuses sin(x) and cos(x) into a
// scalar sincos call before vectorising; these declarations name the same libm symbols under names GCC does not treat
// as builtins, with the vector variants declared. Elsewhere they are std::exp etc.
#include <cmath>

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__GLIBC__) && defined(_OPENMP)
extern "C" {
#pragma omp declare simd notinbranch
double attnlab_vexp(double) noexcept __asm__("exp");
#pragma omp declare simd notinbranch
double attnlab_vsin(double) noexcept __asm__("sin");
#pragma omp declare simd notinbranch
double attnlab_vcos(double) noexcept __asm__("cos");
#pragma omp declare simd notinbranch
double attnlab_verfc(double) noexcept __asm__("erfc");
#pragma omp declare simd notinbranch
float attnlab_vexpf(float) noexcept __asm__("expf");
}
namespace attnlab::vmath {
inline double exp(double x) { return attnlab_vexp(x); }
inline float exp(float x) { return attnlab_vexpf(x); }
inline double sin(double x) { return attnlab_vsin(x); }
inline double cos(double x) { return attnlab_vcos(x); }
inline double erfc(double x) { return attnlab_verfc(x); }
}  // namespace attnlab::vmath
#else
namespace attnlab::vmath {
using std::cos, std::erfc, std::exp, std::sin;
}
#endif
