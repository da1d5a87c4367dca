#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/parallel.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/soft/kernel.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace attnlab {

namespace {

// S(i, j) = 1 wherever token q_i equals k_j: their distance is exactly 0, which the expansion ‖q‖² + ‖k‖² − 2 q·k
// leaves a few ulp off in a direction each CPU's summation order picks (and A = 11ᵀ of identical tokens sits exactly
// on Newton's convergence limit, so those ulp would decide a verdict). K's rows sorted once, each q found by bisection.
void set_equal_tokens_exact(const MatrixD& Q, const MatrixD& K, MatrixD& S) {
  const auto row_less = [](const MatrixD& A, Index a, const MatrixD& B, Index b) {
    for (Index c = 0; c < A.cols(); ++c)
      if (A(a, c) != B(b, c)) return A(a, c) < B(b, c);
    return false;
  };
  std::vector<Index> order(K.rows());
  std::iota(order.begin(), order.end(), Index{0});
  std::sort(order.begin(), order.end(), [&](Index a, Index b) { return row_less(K, a, K, b); });
  for (Index i = 0; i < Q.rows(); ++i) {
    auto j = std::lower_bound(order.begin(), order.end(), i, [&](Index k, Index q) { return row_less(K, k, Q, q); });
    for (; j != order.end() && !row_less(Q, i, K, *j); ++j) S(i, *j) = 1.0;
  }
}

}  // namespace

MatrixD gaussian_kernel(const MatrixD& Q, const MatrixD& K) {
  if (Q.cols() != K.cols())
    throw std::invalid_argument(text("gaussian_kernel: tokens of dimension ", Q.cols(), " and ", K.cols()));
  const double c = 1.0 / (2.0 * std::sqrt(double(Q.cols())));
  const VectorD q2 = Q.rowwise().squaredNorm(), k2 = K.rowwise().squaredNorm();
  MatrixD S(Q.rows(), K.rows());
  // Blocks of a fixed number of columns (keys): the same arithmetic for any thread count.
  constexpr Index width = 256;
  const Index blocks = (K.rows() + width - 1) / width;
#pragma omp parallel for schedule(static) if (!omp_in_parallel() && blocks > 1 && \
                                              Q.rows() * K.rows() * Q.cols() > 100000)
  for (Index b = 0; b < blocks; ++b) {
    const Index j0 = b * width, cols = std::min(width, K.rows() - j0);
    auto block = S.middleCols(j0, cols);
    // ‖q − k‖² = ‖q‖² + ‖k‖² − 2 q·k, clamped at 0 against rounding.
    block.noalias() = -2.0 * Q * K.middleRows(j0, cols).transpose();
    block.colwise() += q2;
    block.rowwise() += k2.segment(j0, cols).transpose();
    block = (-c * block.cwiseMax(0.0)).array().exp().matrix();
  }
  set_equal_tokens_exact(Q, K, S);
  // The bottleneck A = exp(Q̃ ⊖ Q̃) is symmetric; the rounding of q·k and of the sum order must not say otherwise.
  if (&Q == &K || (Q.rows() == K.rows() && Q == K)) S = (0.5 * (S + S.transpose())).eval();
  return S;
}

MatrixD softmax_attention(const MatrixD& Q, const MatrixD& K) {
  MatrixD S = Q * K.transpose() / std::sqrt(double(Q.cols()));
  for (Index i = 0; i < S.rows(); ++i) {
    S.row(i) = (S.row(i).array() - S.row(i).maxCoeff()).exp().matrix();
    S.row(i) /= S.row(i).sum();
  }
  return S;
}

Sampler parse_sampler(const std::string& s) {
  if (s == "random") return Sampler::random;
  if (s == "first") return Sampler::first;
  if (s == "pool") return Sampler::pool;
  throw std::invalid_argument(text("sampler must be random, first or pool (got '", s, "')"));
}

std::string to_string(Sampler s) {
  switch (s) {
    case Sampler::random: return "random";
    case Sampler::first: return "first";
    case Sampler::pool: return "pool";
  }
  return "?";
}

void BottleneckSpec::validate(Index n) const {
  if (m < 1) throw std::invalid_argument(text("m must be at least 1 (got ", m, ")"));
  if (m > n) throw std::invalid_argument(text("m must not exceed the n = ", n, " tokens (got ", m, ")"));
  if (sampler != Sampler::pool) return;
  const auto side = static_cast<Index>(std::llround(std::sqrt(double(m))));
  if (side * side != m) throw std::invalid_argument(text("m must be a square for the pool sampler (got ", m, ")"));
  if (grid_h * grid_w != n || grid_h < side || grid_w < side)
    throw std::invalid_argument(
        text("grid must be grid_h x grid_w = n with sides >= sqrt(m) for the pool sampler (got ", grid_h, "x", grid_w,
             ", n = ", n, ", m = ", m, ")"));
}

MatrixD bottleneck_tokens(const MatrixD& Q, const BottleneckSpec& spec, std::uint64_t seed) {
  const Index n = Q.rows();
  spec.validate(n);
  if (spec.sampler == Sampler::first) return Q.topRows(spec.m);
  MatrixD out(spec.m, Q.cols());
  if (spec.sampler == Sampler::random) {  // the m tokens with the smallest Gaussian keys: a uniform m-subset
    MatrixD keys(1, n);
    fill_gaussian(keys,
                  GaussianStream(seed, hash_words({hash_string("bottleneck"), std::uint64_t(n)}), 0, StreamTag::Search),
                  1.0);
    std::vector<Index> order(static_cast<std::size_t>(n));
    std::iota(order.begin(), order.end(), Index{0});
    std::partial_sort(order.begin(), order.begin() + spec.m, order.end(),
                      [&](Index a, Index b) { return keys(0, a) < keys(0, b); });
    std::sort(order.begin(), order.begin() + spec.m);
    for (Index r = 0; r < spec.m; ++r) out.row(r) = Q.row(order[static_cast<std::size_t>(r)]);
    return out;
  }
  // Adaptive average pooling (PyTorch's AdaptiveAvgPool2d cells): cell i spans [⌊iH/s⌋, ⌈(i+1)H/s⌉).
  const auto side = static_cast<Index>(std::llround(std::sqrt(double(spec.m))));
  for (Index a = 0; a < side; ++a)
    for (Index b = 0; b < side; ++b) {
      const Index h0 = a * spec.grid_h / side, h1 = ((a + 1) * spec.grid_h + side - 1) / side;
      const Index w0 = b * spec.grid_w / side, w1 = ((b + 1) * spec.grid_w + side - 1) / side;
      RowVector<double> sum = RowVector<double>::Zero(Q.cols());
      for (Index h = h0; h < h1; ++h)
        for (Index w = w0; w < w1; ++w) sum += Q.row(h * spec.grid_w + w);
      out.row(a * side + b) = sum / double((h1 - h0) * (w1 - w0));
    }
  return out;
}

NystromFactors nystrom_factors(const MatrixD& bottleneck, const MatrixD& K) {
  return {gaussian_kernel(bottleneck, bottleneck), gaussian_kernel(bottleneck, K)};
}

MatrixD nystrom_apply(const MatrixD& P, const MatrixD& A_pinv, const MatrixD& W) {
  return row_blocked_product(P.transpose(), row_blocked_product(A_pinv, inner_blocked_product(P, W)));
}

MatrixD symmetric_normalised(const MatrixD& A, const MatrixD& A_pinv) {
  const VectorD row_sums = A.rowwise().sum();
  if (!(row_sums.minCoeff() > 0))
    throw std::invalid_argument("symmetric_normalised: A has a row sum that is not positive (D = diag(A1) singular)");
  const VectorD s = row_sums.cwiseInverse().cwiseSqrt();
  return s.asDiagonal() * A_pinv * s.asDiagonal();
}

}  // namespace attnlab
