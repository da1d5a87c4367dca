#pragma once
// Dense products spread over OpenMP threads in blocks of a fixed size: every entry is computed by the same
// operations in the same order whatever the thread count, so results do not depend on --threads.
#include <attnlab/core/types.hpp>

#include <omp.h>

#include <algorithm>
#include <vector>

namespace attnlab {

inline constexpr Index kProductRowBlock = 64;     // rows of the result per task
inline constexpr Index kProductInnerBlock = 512;  // inner-dimension slice per partial product
inline constexpr double kParallelFlops = 1e6;     // below this a product stays on one thread

// body(i) for i in [0, n): over the threads when n > 1, there is more than one thread and this is not already inside
// a parallel region; else in order on this thread without opening a region (an inactive `if (false)` one still cost
// about 2 µs, and libgomp allocates a team for every region, even of one thread).
template <class Body>
void for_each_in_parallel(Index n, const Body& body) {
  if (n < 2 || omp_in_parallel() || omp_get_max_threads() == 1) {
    for (Index i = 0; i < n; ++i) body(i);
    return;
  }
#pragma omp parallel for schedule(static)
  for (Index i = 0; i < n; ++i) body(i);
}

// body(i0, i1) over [0, n) in fixed chunks of `chunk` spread over the threads (for_each_in_parallel's rules), for
// elementwise passes over large arrays: each element gets the same operations whatever the chunks and the threads.
template <class Body>
void for_each_chunk(Index n, Index chunk, const Body& body) {
  for_each_in_parallel((n + chunk - 1) / chunk, [&](Index c) { body(c * chunk, std::min(n, (c + 1) * chunk)); });
}

// C = A·B, the rows of the result in blocks of kProductRowBlock; C keeps its buffer when its shape is A·B's.
template <class Lhs, class Rhs, class Result>
void row_blocked_product(const Lhs& A, const Rhs& B, Result& C) {
  C.resize(A.rows(), B.cols());
  const Index blocks = (A.rows() + kProductRowBlock - 1) / kProductRowBlock;
  const double flops = 2.0 * double(A.rows()) * double(A.cols()) * double(B.cols());
#pragma omp parallel for schedule(static) if (!omp_in_parallel() && blocks > 1 && flops > kParallelFlops)
  for (Index b = 0; b < blocks; ++b) {
    const Index r0 = b * kProductRowBlock, rows = std::min(kProductRowBlock, A.rows() - r0);
    C.middleRows(r0, rows).noalias() = A.middleRows(r0, rows) * B;
  }
}

// A·B, the rows of the result in blocks of kProductRowBlock.
template <class Lhs, class Rhs>
Matrix<typename Lhs::Scalar> row_blocked_product(const Lhs& A, const Rhs& B) {
  Matrix<typename Lhs::Scalar> C;
  row_blocked_product(A, B, C);
  return C;
}

// A·B for few rows and a long inner dimension (P·V with m ≪ n): partial products over slices of
// kProductInnerBlock, summed in slice order.
template <class Lhs, class Rhs>
Matrix<typename Lhs::Scalar> inner_blocked_product(const Lhs& A, const Rhs& B) {
  using Result = Matrix<typename Lhs::Scalar>;
  if (A.cols() == 0) return Result::Zero(A.rows(), B.cols());
  const Index slices = (A.cols() + kProductInnerBlock - 1) / kProductInnerBlock;
  std::vector<Result> partial(static_cast<std::size_t>(slices));
  const double flops = 2.0 * double(A.rows()) * double(A.cols()) * double(B.cols());
#pragma omp parallel for schedule(static) if (!omp_in_parallel() && slices > 1 && flops > kParallelFlops)
  for (Index s = 0; s < slices; ++s) {
    const Index k0 = s * kProductInnerBlock, width = std::min(kProductInnerBlock, A.cols() - k0);
    partial[static_cast<std::size_t>(s)].noalias() = A.middleCols(k0, width) * B.middleRows(k0, width);
  }
  for (std::size_t s = 1; s < partial.size(); ++s) partial[0] += partial[s];
  return std::move(partial[0]);
}

}  // namespace attnlab
