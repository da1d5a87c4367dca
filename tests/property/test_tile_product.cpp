// The packed tile product against its definition: every entry of a tile is the fma chain Σ_k u_ik·v_jk from k = 0,
// bit for bit, on libxsmm's kernels and the hand-written ones, for shapes that cut register blocks, panels and tiles,
// in float and double, and nothing outside the
// nr × nc block it is asked for is written (tiles side by side in one buffer, as the whole-row path lays them out).
// The whole product A·B (the trainer's linear layers) the same, for every layout of A and B, with and without
// accumulating, on one and two threads; with bf16 operands, the chain of VDPBF16PS's definition on the operands
// rounded to 8 significant bits (rounded here through frexp and nearbyint, not the library's bit arithmetic).
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/core/tile_product.hpp>

#include "support.hpp"

#include <omp.h>

#include <cmath>
#include <stdexcept>
#include <utility>

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
  constexpr T kUntouched = -7;
  for (const Index N : {1, 7, 37, 300})
    for (const Index d : {1, 3, 64})
      for (const Index tile_cols : {1, 5, 16, 33, 256}) {
        const auto U = gaussian<T>(N, d, StreamTag::Q), V = gaussian<T>(N, d, StreamTag::K);
        const Index cols = std::min(tile_cols, N);
        PackedColumns<T> columns;
        columns.pack(V, cols);
        PackedRows<T> rows;
        for (const auto& [r0, most] : {std::pair<Index, Index>{0, 13}, {N / 3, 13}, {N / 3, 64}}) {
          const Index nr = std::min(N - r0, most);  // 13: not a whole number of register blocks
          rows.pack(U, r0, nr);
          // one row below the block and two columns past the last tile stay as they were
          Matrix<T> out = Matrix<T>::Constant(nr + 1, N + 2, kUntouched);
          const auto where = [&](Index i, Index j) {
            return text(to_string(product_kernel()), " N=", N, " d=", d, " tile=", cols, " r0=", r0, " rows=", nr,
                        " entry (", i, ", ", j, ")");
          };
          for (Index c0 = 0; c0 < N; c0 += cols) {
            const Index nc = std::min(cols, N - c0);
            tile_product(rows, columns, c0, nc, out.data() + c0, out.cols());
            for (Index i = 0; i <= nr; ++i)
              for (Index j = i == nr ? 0 : c0 + nc; j < out.cols(); ++j)
                ASSERT_EQ(out(i, j), kUntouched) << where(i, j);
          }
          for (Index i = 0; i < nr; ++i)
            for (Index j = 0; j < N; ++j) {  // after every tile: none wrote over another's columns
              T chain = 0;
              for (Index k = 0; k < d; ++k) chain = std::fma(U(r0 + i, k), V(j, k), chain);
              ASSERT_EQ(out(i, j), chain) << where(i, j);
            }
        }
      }
}

// Selects a product kernel for the scope of a test and restores the process's choice.
class KernelScope {
 public:
  explicit KernelScope(ProductKernel kernel) : saved_(product_kernel()) { set_product_kernel(kernel); }
  ~KernelScope() { set_product_kernel(saved_); }
  KernelScope(const KernelScope&) = delete;
  KernelScope& operator=(const KernelScope&) = delete;

 private:
  ProductKernel saved_;
};

// Each kernel whatever ATTNLAB_PRODUCT_KERNEL says: libxsmm's, generated for the CPU that runs the test, and the
// hand-written one; rows and columns packed for different kernels are refused.
TEST(TileProduct, EveryEntryIsTheFmaChainOverKForEachKernel) {
  for (const ProductKernel kernel : {ProductKernel::libxsmm, ProductKernel::packed}) {
    const KernelScope scope(kernel);
    expect_tiles_are_fma_chains<double>();
    expect_tiles_are_fma_chains<float>();
  }
  const auto U = gaussian<double>(8, 4, StreamTag::Q);
  PackedColumns<double> columns;
  PackedRows<double> rows;
  {
    const KernelScope scope(ProductKernel::libxsmm);
    columns.pack(U, 8);
  }
  const KernelScope scope(ProductKernel::packed);
  rows.pack(U, 0, 8);
  Matrix<double> out(8, 8);
  if (columns.for_libxsmm()) {  // a CPU without FMA has the hand-written kernel only
    EXPECT_THROW(tile_product(rows, columns, 0, 8, out.data(), 8), std::logic_error);
  }
}

// A as stored (rows × cols) or, with `transposed`, stored as its transpose and viewed back.
template <class T>
struct Operand {
  Matrix<T> stored;
  StridedView<T> view;
  Operand(const Matrix<T>& m, bool transposed)
      : stored(transposed ? Matrix<T>(m.transpose()) : m),
        view(transposed ? view_of(stored).transposed() : view_of(stored)) {}
};

// x rounded to nearest even at 8 significant bits, bfloat16's precision.
float to_bf16(float x) {
  int e = 0;
  const double m = std::frexp(double(x), &e);
  return float(std::ldexp(std::nearbyint(m * 256), e - 8));
}

template <class T>
T fma_chain(const Matrix<T>& a, const Matrix<T>& b, Index i, Index j, ProductPrecision precision) {
  T chain = 0;
  const Index K = a.cols();
  if (precision == ProductPrecision::native) {
    for (Index k = 0; k < K; ++k) chain = std::fma(a(i, k), b(k, j), chain);
    return chain;
  }
  const auto term = [&](Index k, T acc) {  // past K: the zero padding's product, added as the instruction adds it
    return k < K ? std::fma(to_bf16(a(i, k)), to_bf16(b(k, j)), acc) : std::fma(T(0), T(0), acc);
  };
  for (Index k = 0; k < K; k += 2) chain = term(k, term(k + 1, chain));  // the odd member of each pair first
  return chain;
}

template <class T>
void expect_products_are_fma_chains(ProductPrecision precision, RegisterBlock block = RegisterBlock::native) {
  const int saved_threads = omp_get_max_threads();
  for (const int threads : {1, 2})
    for (const Index R : {1, 33, 70})
      for (const Index K : {1, 5, 600})  // 600: the chains carried over three slabs of depth
        // 10: under one vector; 64: whole panels of every block (a row-major B read in place); 130: past one tile in
        // float and two in double
        for (const Index O : {1, 10, 64, 130})
          for (const int layout : {0, 1, 2, 3})
            for (const bool accumulate : {false, true}) {
              const auto a = gaussian<T>(R, K, StreamTag::Q), b = gaussian<T>(K, O, StreamTag::K);
              const Operand<T> A(a, layout & 1), B(b, layout & 2);
              const Index ldc = O + 2;  // two columns past the product stay as they were
              const Matrix<T> before = gaussian<T>(R, ldc, StreamTag::A);
              Matrix<T> C = before;
              omp_set_num_threads(threads);
              packed_product(A.view, B.view, C.data(), ldc, accumulate, precision, block);
              for (Index i = 0; i < R; ++i)
                for (Index j = 0; j < ldc; ++j) {
                  const auto where = text(to_string(precision), " block=", int(block), " threads=", threads, " R=", R,
                                          " K=", K, " O=", O, " layout=", layout, " accumulate=", accumulate,
                                          " entry (", i, ", ", j, ")");
                  if (j >= O) {
                    ASSERT_EQ(C(i, j), before(i, j)) << where;
                    continue;
                  }
                  const T chain = fma_chain(a, b, i, j, precision);
                  ASSERT_EQ(C(i, j), accumulate ? before(i, j) + chain : chain) << where;
                }
            }
  omp_set_num_threads(saved_threads);
  Matrix<T> C(2, 2);
  const auto a = gaussian<T>(2, 3, StreamTag::Q), b = gaussian<T>(4, 2, StreamTag::K);
  EXPECT_THROW(packed_product(view_of(a), view_of(b), C.data(), 2), std::invalid_argument)
      << "3 columns against 4 rows";
}

// The same for whole products.
TEST(TileProduct, WholeProductsAreFmaChainsForEveryLayoutAndKernel) {
  for (const ProductKernel kernel : {ProductKernel::libxsmm, ProductKernel::packed}) {
    const KernelScope scope(kernel);
    expect_products_are_fma_chains<double>(ProductPrecision::native);
    expect_products_are_fma_chains<float>(ProductPrecision::native);
  }
  for (const std::string name : {"libxsmm", "packed"}) EXPECT_EQ(to_string(parse_product_kernel(name)), name);
  EXPECT_THROW(parse_product_kernel("blis"), std::invalid_argument);
}

// libxsmm's kernels of half-width panels (128 bytes: C 32 or 96 floats, 16 or 48 doubles wide), for every row count of
// a block (on AVX-512 a kernel one vector wide splits its chains for some of them): the fma chains, bit for bit.
template <class T>
void expect_half_width_panels_are_fma_chains() {
  constexpr Index half = 128 / Index(sizeof(T));
  for (const Index O : {half, 3 * half})
    for (const Index K : {5, 600})
      for (Index R = 1; R <= 33; ++R) {
        const auto a = gaussian<T>(R, K, StreamTag::Q), b = gaussian<T>(K, O, StreamTag::K);
        Matrix<T> C(R, O);
        packed_product(view_of(a), view_of(b), C.data(), O);
        for (Index i = 0; i < R; ++i)
          for (Index j = 0; j < O; ++j)
            ASSERT_EQ(C(i, j), fma_chain(a, b, i, j, ProductPrecision::native))
                << "R=" << R << " K=" << K << " O=" << O << " entry (" << i << ", " << j << ")";
      }
}

TEST(TileProduct, HalfWidthPanelsAreFmaChainsForEveryRowCount) {
  const KernelScope scope(ProductKernel::libxsmm);
  expect_half_width_panels_are_fma_chains<float>();
  expect_half_width_panels_are_fma_chains<double>();
}

// Each register block of the hand-written kernel, whichever the CPU compiled for: AVX2's 6 × 2 vectors and AVX-512's
// 8 × 2 (the native one is the test above's).
TEST(TileProduct, EveryRegisterBlockGivesTheFmaChains) {
  const KernelScope scope(ProductKernel::packed);
  for (const RegisterBlock block : {RegisterBlock::avx2, RegisterBlock::avx512})
    if (block != kNativeBlock) {
      expect_products_are_fma_chains<double>(ProductPrecision::native, block);
      expect_products_are_fma_chains<float>(ProductPrecision::native, block);
      expect_products_are_fma_chains<float>(ProductPrecision::bf16, block);
    }
}

TEST(TileProduct, Bf16ProductsAreTheChainsOfVdpbf16psOnRoundedOperands) {
  expect_products_are_fma_chains<float>(ProductPrecision::bf16);
  Matrix<double> a(1, 1), C(1, 1);
  EXPECT_THROW(packed_product(view_of(a), view_of(a), C.data(), 1, false, ProductPrecision::bf16),
               std::invalid_argument)
      << "bf16 takes float operands";
  EXPECT_EQ(to_bf16(1 + 1.0f / 256), 1.0f) << "a tie rounds to even";
  EXPECT_EQ(to_bf16(1 + 3.0f / 256), 1 + 4.0f / 256) << "a tie rounds to even";
}

}  // namespace
