// The packed tile product against its definition: every entry of a tile is the fma chain Σ_k u_ik·v_jk from k = 0,
// bit for bit, for shapes that cut register blocks, panels and tiles, in float and double.
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/norms/tile_product.hpp>

#include "support.hpp"

#include <cmath>

using namespace attnlab;

namespace {

template <class T>
Matrix<T> gaussian(Index rows, Index cols, StreamTag tag) {
  Matrix<T> m(rows, cols);
  fill_gaussian(m, GaussianStream(test::seed(), std::uint64_t(rows * 1000 + cols), 0, tag), 1.0);
  return m;
}

template <class T>
void expect_tiles_are_fma_chains() {
  for (const Index N : {1, 7, 37, 300})
    for (const Index d : {1, 3, 64})
      for (const Index tile_cols : {1, 5, 16, 33, 256}) {
        const auto U = gaussian<T>(N, d, StreamTag::Q), V = gaussian<T>(N, d, StreamTag::K);
        const Index cols = std::min(tile_cols, N);
        PackedColumns<T> columns;
        columns.pack(V, cols);
        PackedRows<T> rows;
        for (const Index r0 : {Index{0}, N / 3}) {
          const Index nr = std::min<Index>(N - r0, 13);  // not a whole number of register blocks
          rows.pack(U, r0, nr);
          Matrix<T> tile = Matrix<T>::Constant(nr, cols + 2, T(-7));  // two columns past the tile must stay untouched
          for (Index c0 = 0; c0 < N; c0 += cols) {
            const Index nc = std::min(cols, N - c0);
            tile_product(rows, columns, c0, nc, tile.data(), tile.cols());
            for (Index i = 0; i < nr; ++i) {
              for (Index j = 0; j < nc; ++j) {
                T chain = 0;
                for (Index k = 0; k < d; ++k) chain = std::fma(U(r0 + i, k), V(c0 + j, k), chain);
                ASSERT_EQ(tile(i, j), chain) << text("N=", N, " d=", d, " tile=", cols, " r0=", r0, " c0=", c0,
                                                     " entry (", i, ", ", j, ")");
              }
              for (Index j = cols; j < tile.cols(); ++j) ASSERT_EQ(tile(i, j), T(-7));
            }
          }
        }
      }
}

TEST(TileProduct, EveryEntryIsTheFmaChainOverK) {
  expect_tiles_are_fma_chains<double>();
  expect_tiles_are_fma_chains<float>();
}

}  // namespace
