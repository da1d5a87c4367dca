#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/parallel.hpp>
#include <attnlab/core/text.hpp>

#include <algorithm>
#include <cmath>

#include <stdexcept>

namespace attnlab {

std::uint64_t EnsembleSpec::configuration_key() const {
  return hash_words({hash_string("gaussian-ensemble"), static_cast<std::uint64_t>(N), static_cast<std::uint64_t>(D),
                     static_cast<std::uint64_t>(d)});
}

std::string EnsembleSpec::describe() const {
  return text("N=", N, " D=", D, " d=", d, " sigma_x=", sigma_x, " sigma_t=", sigma_t);
}

void EnsembleSpec::validate() const {
  const auto positive_size = [](const char* name, Index v) {
    if (v < 1) throw std::invalid_argument(text(name, " must be at least 1 (got ", v, ")"));
  };
  const auto positive_sigma = [](const char* name, double v) {
    if (!(v > 0) || !std::isfinite(v))
      throw std::invalid_argument(text(name, " must be positive and finite (got ", v, ")"));
  };
  positive_size("N", N);
  positive_size("D", D);
  positive_size("d", d);
  positive_sigma("sigma-x", sigma_x);
  positive_sigma("sigma-t", sigma_t);
}

template <class T>
void fill_gaussian(Matrix<T>& m, const GaussianStream& stream, double sigma) {
  // Counter-based: chunks can be filled in any order, by any thread, with the same result.
  const std::size_t size = static_cast<std::size_t>(m.size()), chunk = std::size_t{1} << 15;
  const Index chunks = static_cast<Index>((size + chunk - 1) / chunk);
  for_each_in_parallel(chunks, [&](Index c) {
    const std::size_t first = static_cast<std::size_t>(c) * chunk;
    stream.fill(std::span<T>(m.data() + first, std::min(chunk, size - first)), sigma, first);
  });
}

template <class T>
void draw_ensemble(const EnsembleSpec& spec, std::uint64_t seed, std::uint32_t trial, EnsembleSample<T>& sample) {
  const auto key = spec.configuration_key();
  sample.X.resize(spec.N, spec.D);
  sample.Q.resize(spec.D, spec.d);
  sample.K.resize(spec.D, spec.d);
  fill_gaussian(sample.X, GaussianStream(seed, key, trial, StreamTag::X), spec.sigma_x);
  fill_gaussian(sample.Q, GaussianStream(seed, key, trial, StreamTag::Q), spec.sigma_t);
  fill_gaussian(sample.K, GaussianStream(seed, key, trial, StreamTag::K), spec.sigma_t);
}

template void fill_gaussian(Matrix<float>&, const GaussianStream&, double);
template void fill_gaussian(Matrix<double>&, const GaussianStream&, double);
template void draw_ensemble(const EnsembleSpec&, std::uint64_t, std::uint32_t, EnsembleSample<float>&);
template void draw_ensemble(const EnsembleSpec&, std::uint64_t, std::uint32_t, EnsembleSample<double>&);

}  // namespace attnlab
