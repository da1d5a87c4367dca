#include <attnlab/core/parallel.hpp>
#include <attnlab/norms/tile_product.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attnlab {
namespace {

// One kGroup × kPanel block: acc[r][j] = Σ_k u[k][r]·v[k][j] as fma(v, u, acc) from k = 0; the first `rows` rows and
// `cols` columns are written.
template <class T>
void block_product(const T* __restrict u, const T* __restrict v, Index depth, T* __restrict out, Index ld, Index rows,
                   Index cols) {
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
    if (cols == W) {
#pragma omp simd
      for (Index j = 0; j < W; ++j) out[r * ld + j] = acc[r][j];
    } else {
      std::copy_n(acc[r], cols, out + r * ld);
    }
  }
}

}  // namespace

template <class T>
void PackedColumns<T>::pack(const Matrix<T>& V, Index tile_cols) {
  if (V.cols() < 1) throw std::invalid_argument("the tile product needs an inner size of at least 1");
  constexpr Index W = TilePanels<T>::kPanel;
  const Index N = V.rows(), tiles = (N + tile_cols - 1) / tile_cols, panels = (tile_cols + W - 1) / W;
  tile_cols_ = tile_cols;
  depth_ = V.cols();
  tile_stride_ = panels * W * depth_;
  data_.resize(static_cast<std::size_t>(tiles * tile_stride_));
  const auto pack_tile = [&](Index t) {
    const Index c0 = t * tile_cols, nc = std::min(tile_cols, N - c0);
    for (Index p = 0; p < panels; ++p) {
      T* panel = data_.data() + t * tile_stride_ + p * W * depth_;
      for (Index j = 0; j < W; ++j) {
        const Index col = p * W + j;
        for (Index k = 0; k < depth_; ++k) panel[k * W + j] = col < nc ? V(c0 + col, k) : T(0);
      }
    }
  };
  for_each_in_parallel(tiles, pack_tile);
}

template <class T>
void PackedRows<T>::pack(const Matrix<T>& U, Index r0, Index nr) {
  constexpr Index G = TilePanels<T>::kGroup;
  const Index groups = (nr + G - 1) / G, depth = U.cols();
  rows_ = nr;
  data_.resize(static_cast<std::size_t>(groups * G * depth));
  for (Index g = 0; g < groups; ++g)
    for (Index r = 0; r < G; ++r) {
      const Index row = g * G + r;
      for (Index k = 0; k < depth; ++k) data_[std::size_t(g * G * depth + k * G + r)] = row < nr ? U(r0 + row, k) : T(0);
    }
}

template <class T>
void tile_product(const PackedRows<T>& rows, const PackedColumns<T>& columns, Index c0, Index nc, T* out, Index ld) {
  constexpr Index G = TilePanels<T>::kGroup, W = TilePanels<T>::kPanel;
  const Index depth = columns.depth();
  const T* tile = columns.tile(c0);
  for (Index g = 0; g * G < rows.rows(); ++g)
    for (Index p = 0; p * W < nc; ++p)
      block_product(rows.data() + g * G * depth, tile + p * W * depth, depth, out + g * G * ld + p * W, ld,
                    std::min(G, rows.rows() - g * G), std::min(W, nc - p * W));
}

template class PackedColumns<float>;
template class PackedColumns<double>;
template class PackedRows<float>;
template class PackedRows<double>;
template void tile_product(const PackedRows<float>&, const PackedColumns<float>&, Index, Index, float*, Index);
template void tile_product(const PackedRows<double>&, const PackedColumns<double>&, Index, Index, double*, Index);

}  // namespace attnlab
