#pragma once
// Products from packed operands: the tiles of the logits S = UVᵀ for the streamed estimators, and whole products A·B
// for the trainer's linear layers. V's rows (the columns of S) are packed once per trial in panels, and each block of
// S is summed over k as one fma chain from 0, without Eigen's repacking of both operands for every tile: by libxsmm's
// kernels, generated at run time for the running CPU (U's rows read in place), or by the hand-written register blocks
// (U's rows packed in groups of kGroup; 1.5× Eigen's rate on a 64 × 256 tile with d = 64 on AVX-512 on Zen 4). With
// hardware FMA (-march=native, the default) and d within Eigen's blocking depth that chain is the order of Eigen's
// GEMM kernel, so S is the same bits; without FMA each std::fma is a library call, slow. Every entry is one chain over
// the whole inner index, so any kernel, any blocking and any thread count give the same bits.
#include <attnlab/core/types.hpp>

#include <cassert>
#include <string>
#include <vector>

namespace attnlab {

// The register block: kGroup rows × two vectors of accumulators, one load per vector and one broadcast. AVX-512's 32
// registers hold 8 × 2 (16 accumulators); AVX2's 16 hold 6 × 2 (12; 8 × 4, the AVX-512 block's width in AVX2
// vectors, spilled to the stack). `native` is the block of the instruction set compiled for (-march=native, the
// default, picks the running CPU's); the others can be asked of packed_product on any CPU (the same bits: every entry
// is one fma chain over k whatever the block).
enum class RegisterBlock { native, avx2, avx512 };
#if defined(__AVX512F__)
inline constexpr RegisterBlock kNativeBlock = RegisterBlock::avx512;
#else
inline constexpr RegisterBlock kNativeBlock = RegisterBlock::avx2;
#endif

template <class T, RegisterBlock Block = kNativeBlock>
struct TilePanels {
  static constexpr bool kWide = Block == RegisterBlock::avx512 ||
                                (Block == RegisterBlock::native && kNativeBlock == RegisterBlock::avx512);
  static constexpr Index kGroup = kWide ? 8 : 6;                          // rows of a register block
  static constexpr Index kPanel = (kWide ? 128 : 64) / Index(sizeof(T));  // its columns: two vectors
  using Buffer = std::vector<T, Eigen::aligned_allocator<T>>;
};

// A read-only matrix with any strides: a row-major matrix, a raw buffer, or the transpose of either.
template <class T>
struct StridedView {
  const T* data = nullptr;
  Index rows = 0, cols = 0, row_stride = 0, col_stride = 1;
  StridedView transposed() const { return {data, cols, rows, col_stride, row_stride}; }
};
template <class T>
StridedView<T> view_of(const T* data, Index rows, Index cols) {
  return {data, rows, cols, cols, 1};
}
template <class T>
StridedView<T> view_of(const Matrix<T>& m) {
  return view_of(m.data(), m.rows(), m.cols());
}

// The rows of V for tiles of tile_cols columns, each tile in zero-padded panels ([k][column]) for the kernel that runs
// (product_kernel(), below): kPanel columns for the hand-written register blocks, 256 bytes' for libxsmm's kernels.
template <class T>
class PackedColumns {
 public:
  void pack(const Matrix<T>& V, Index tile_cols);
  const T* tile(Index c0) const {  // c0: a tile's first column, a multiple of tile_cols()
    assert(c0 % tile_cols_ == 0);
    return data_.data() + (c0 / tile_cols_) * tile_stride_;
  }
  Index tile_cols() const { return tile_cols_; }
  Index depth() const { return depth_; }
  Index panel() const { return panel_; }
  bool for_libxsmm() const { return for_libxsmm_; }

 private:
  typename TilePanels<T>::Buffer data_;  // grows only: no allocation once warm
  Index tile_cols_ = 1, tile_stride_ = 0, depth_ = 0, panel_ = TilePanels<T>::kPanel;
  bool for_libxsmm_ = false;
};

// Rows [r0, r0 + nr) of U for the kernel that runs: in zero-padded groups of kGroup rows ([k][row]) for the
// hand-written one, read where they are (U must outlive the tiles) for libxsmm's.
template <class T>
class PackedRows {
 public:
  void pack(const Matrix<T>& U, Index r0, Index nr);
  const T* data() const { return in_place_ ? in_place_ : data_.data(); }
  Index rows() const { return rows_; }
  bool for_libxsmm() const { return in_place_ != nullptr; }

 private:
  typename TilePanels<T>::Buffer data_;
  const T* in_place_ = nullptr;
  Index rows_ = 0;
};

// out (rows.rows() × nc, row stride ld) = the packed rows times the first nc columns of the tile that starts at c0.
// rows and columns must have been packed for the same kernel (std::logic_error otherwise).
template <class T>
void tile_product(const PackedRows<T>& rows, const PackedColumns<T>& columns, Index c0, Index nc, T* out, Index ld);

// How a product takes its operands: as they are (`native`), or rounded to bfloat16 (to nearest even) with the products
// accumulated in float, pair by pair along k as AVX512-BF16's VDPBF16PS does (that instruction where the CPU has it,
// its definition in fma steps elsewhere: the same bits except for subnormals, which the instruction flushes).
enum class ProductPrecision { native, bf16 };
ProductPrecision parse_product_precision(const std::string& name);  // "native" or "bf16"; throws naming the choices
std::string to_string(ProductPrecision precision);

// What multiplies the logit tiles and a native-precision packed_product with a row-major A: libxsmm's kernels,
// generated at run time for the running CPU (AVX2, AVX-512, ...; the default), or the hand-written register blocks
// (`packed`, which bf16 products, a transposed A and a CPU without FMA always use). Both sum every entry as one fma
// chain over k in order, so they give the same bits. The environment variable ATTNLAB_PRODUCT_KERNEL=libxsmm|packed
// picks one for a process; set_product_kernel for tests. product_kernel() is the one that runs: `packed` on a CPU below
// libxsmm's AVX2 target (no FMA), whatever was picked.
enum class ProductKernel { libxsmm, packed };
ProductKernel product_kernel();
void set_product_kernel(ProductKernel kernel);
ProductKernel parse_product_kernel(const std::string& name);  // "libxsmm" or "packed"; throws naming the choices
std::string to_string(ProductKernel kernel);

// C (row stride ldc) = A·B, or C += A·B with `accumulate` (each entry's chain formed, then added). Over the threads
// in blocks of rows; the packing buffers are kept per thread and grow only, so a warm caller allocates nothing.
// `block` is the hand-written kernel's register block. bf16 takes float operands only (std::invalid_argument for
// double).
template <class T>
void packed_product(StridedView<T> A, StridedView<T> B, T* C, Index ldc, bool accumulate = false,
                    ProductPrecision precision = ProductPrecision::native, RegisterBlock block = RegisterBlock::native);

}  // namespace attnlab
