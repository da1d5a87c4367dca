#pragma once
// The Gaussian ensemble {N, D, d, σx, σt}: X ∈ R^{N×D} ~ N(0, σx²), Q, K ∈ R^{D×d} ~ N(0, σt²).
#include <attnlab/core/rng.hpp>
#include <attnlab/core/types.hpp>

#include <string>

namespace attnlab {

struct EnsembleSpec {
  Index N = 64;
  Index D = 64;
  Index d = 64;
  double sigma_x = 1.0;  // standard deviation of the entries of X
  double sigma_t = 1.0;  // standard deviation of the entries of Q and K

  // Stream key of the configuration. σ only scales standard normals, so configurations
  // that differ only in σ share their noise (common random numbers).
  std::uint64_t configuration_key() const;
  std::string describe() const;
  // Throws std::invalid_argument naming the offending parameter.
  void validate() const;
};

template <class T>
struct EnsembleSample {
  Matrix<T> X, Q, K;
};

// Fills `sample` with trial `trial` of `spec` under `seed`; reuses its storage.
template <class T>
void draw_ensemble(const EnsembleSpec& spec, std::uint64_t seed, std::uint32_t trial, EnsembleSample<T>& sample);

// Fills a matrix with N(0, σ²) entries from one stream (row-major element order).
template <class T>
void fill_gaussian(Matrix<T>& m, const GaussianStream& stream, double sigma);

}  // namespace attnlab
