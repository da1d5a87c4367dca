#include <attnlab/core/parallel.hpp>
#include <attnlab/core/tile_product.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace attnlab {
namespace {

// One kGroup × kPanel block: acc[r][j] = Σ_k u[k][r]·v[k][j] as fma(v, u, acc) from k = 0; the first `rows` rows and
// `cols` columns are written (added to, with `accumulate`).
template <class T>
void block_product(const T* __restrict u, const T* __restrict v, Index depth, T* __restrict out, Index ld, Index rows,
                   Index cols, bool accumulate) {
  constexpr Index G = TilePanels<T>::kGroup, W = TilePanels<T>::kPanel;
  alignas(64) T acc[G][W];
  // k = 0 peeled (a zero-initialised acc became a call of memset); depth is at least 1
  for (Index r = 0; r < G; ++r) {
#pragma omp simd
    for (Index j = 0; j < W; ++j) acc[r][j] = std::fma(v[j], u[r], T(0));
  }
  for (Index k = 1; k < depth; ++k) {
    const T* vk = v + k * W;
    for (Index r = 0; r < G; ++r) {
      const T b = u[k * G + r];
#pragma omp simd
      for (Index j = 0; j < W; ++j) acc[r][j] = std::fma(vk[j], b, acc[r][j]);
    }
  }
  for (Index r = 0; r < rows; ++r) {
    if (accumulate) {
      for (Index j = 0; j < cols; ++j) out[r * ld + j] += acc[r][j];
    } else if (cols == W) {
#pragma omp simd
      for (Index j = 0; j < W; ++j) out[r * ld + j] = acc[r][j];
    } else {
      std::copy_n(acc[r], cols, out + r * ld);
    }
  }
}

// out[k][j] = in[k·k_stride + j·j_stride] for k < depth, j < width, and 0 for width ≤ j < padded. The writes run in
// order and the reads over at most kPanel streams, which stay in L1 however the input is laid out.
template <class T>
void copy_transposed(const T* __restrict in, Index k_stride, Index j_stride, Index depth, Index width, Index padded,
                     T* __restrict out) {
  for (Index k = 0; k < depth; ++k) {
    const T* row = in + k * k_stride;
    T* to = out + k * padded;
    for (Index j = 0; j < width; ++j) to[j] = row[j * j_stride];
    for (Index j = width; j < padded; ++j) to[j] = T(0);
  }
}

}  // namespace

template <class T>
void PackedColumns<T>::pack(StridedView<T> V, Index tile_cols) {
  if (V.cols < 1) throw std::invalid_argument("the tile product needs an inner size of at least 1");
  constexpr Index W = TilePanels<T>::kPanel;
  const Index N = V.rows, tiles = (N + tile_cols - 1) / tile_cols, panels = (tile_cols + W - 1) / W;
  tile_cols_ = tile_cols;
  depth_ = V.cols;
  tile_stride_ = panels * W * depth_;
  data_.resize(static_cast<std::size_t>(tiles * tile_stride_));
  const auto pack_tile = [&](Index t) {
    const Index c0 = t * tile_cols, nc = std::min(tile_cols, N - c0);
    for (Index p = 0; p < panels; ++p) {
      T* panel = data_.data() + t * tile_stride_ + p * W * depth_;
      const Index width = std::clamp(nc - p * W, Index(0), W);
      const T* first = V.data + (c0 + p * W) * V.row_stride;
      copy_transposed(first, V.col_stride, V.row_stride, depth_, width, W, panel);
    }
  };
  for_each_in_parallel(tiles, pack_tile);
}

template <class T>
void PackedRows<T>::pack(StridedView<T> U, Index r0, Index nr) {
  constexpr Index G = TilePanels<T>::kGroup;
  const Index groups = (nr + G - 1) / G, depth = U.cols;
  rows_ = nr;
  data_.resize(static_cast<std::size_t>(groups * G * depth));
  for (Index g = 0; g < groups; ++g)
    copy_transposed(U.data + (r0 + g * G) * U.row_stride, U.col_stride, U.row_stride, depth,
                    std::min(G, nr - g * G), G, data_.data() + g * G * depth);
}

template <class T>
void tile_product(const PackedRows<T>& rows, const PackedColumns<T>& columns, Index c0, Index nc, T* out, Index ld,
                  bool accumulate) {
  constexpr Index G = TilePanels<T>::kGroup, W = TilePanels<T>::kPanel;
  const Index depth = columns.depth();
  const T* tile = columns.tile(c0);
  // panel by panel: one panel (kPanel × depth) stays in cache while every row group passes over it
  for (Index p = 0; p * W < nc; ++p)
    for (Index g = 0; g * G < rows.rows(); ++g)
      block_product(rows.data() + g * G * depth, tile + p * W * depth, depth, out + g * G * ld + p * W, ld,
                    std::min(G, rows.rows() - g * G), std::min(W, nc - p * W), accumulate);
}

template <class T>
void packed_product(StridedView<T> A, StridedView<T> B, T* C, Index ldc, bool accumulate) {
  if (A.cols != B.rows)
    throw std::invalid_argument("packed_product: A has " + std::to_string(A.cols) + " columns, B " +
                                std::to_string(B.rows) + " rows");
  const Index R = A.rows, O = B.cols;
  if (R == 0 || O == 0) return;
  if (A.cols == 0) {
    if (!accumulate)
      for (Index r = 0; r < R; ++r) std::fill_n(C + r * ldc, O, T(0));
    return;
  }
  constexpr Index kTileCols = 4 * TilePanels<T>::kPanel;
  thread_local PackedColumns<T> calling_thread_columns;
  PackedColumns<T>& columns = calling_thread_columns;  // the body names a thread_local as its own thread's instance
  columns.pack(B.transposed(), kTileCols);
  const Index blocks = (R + kPackedProductRows - 1) / kPackedProductRows;
  for_each_in_parallel(blocks, [&](Index b) {
    thread_local PackedRows<T> rows;
    const Index r0 = b * kPackedProductRows;
    rows.pack(A, r0, std::min(kPackedProductRows, R - r0));
    for (Index c0 = 0; c0 < O; c0 += kTileCols)
      tile_product(rows, columns, c0, std::min(kTileCols, O - c0), C + r0 * ldc + c0, ldc, accumulate);
  });
}

template class PackedColumns<float>;
template class PackedColumns<double>;
template class PackedRows<float>;
template class PackedRows<double>;
template void tile_product(const PackedRows<float>&, const PackedColumns<float>&, Index, Index, float*, Index, bool);
template void tile_product(const PackedRows<double>&, const PackedColumns<double>&, Index, Index, double*, Index, bool);
template void packed_product(StridedView<float>, StridedView<float>, float*, Index, bool);
template void packed_product(StridedView<double>, StridedView<double>, double*, Index, bool);

}  // namespace attnlab
