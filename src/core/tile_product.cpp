#include <attnlab/core/parallel.hpp>
#include <attnlab/core/tile_product.hpp>

#if defined(__AVX512BF16__)
#include <immintrin.h>
#endif
#include <libxsmm.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>
#include <type_traits>

namespace attnlab {
namespace {

// The first `rows` × `cols` of a register block into out (added to it, with `accumulate`).
template <class T, Index G, Index W>
[[gnu::always_inline]] inline void store_block(const T (&acc)[G][W], T* __restrict out, Index ld, Index rows,
                                               Index cols, bool accumulate) {
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

// One kGroup × kPanel block: acc[r][j] = Σ_k u[k][r]·v[k·v_ld + j] as fma(v, u, acc) from k = 0; the first `rows`
// rows and `cols` columns are written (added to, with `accumulate`). u is packed ([k][r]) or, `InPlace`, kGroup rows
// of a row-major A read where they are (u[r·u_ld + k]); v is a packed panel (v_ld = kPanel) or kPanel columns of a
// row-major B read where they are (v_ld: its row stride). A chain split over blocks of k continues from `resume`
// (the G × W accumulators another call left) and leaves its own in `suspend`: stored and loaded exactly, so a split
// product has the bits of an unsplit one.
template <class T, RegisterBlock Block = kNativeBlock, bool InPlace = false>
void block_product(const T* __restrict u, const T* __restrict v, Index depth, T* __restrict out, Index ld, Index rows,
                   Index cols, bool accumulate, const T* __restrict resume = nullptr, T* __restrict suspend = nullptr,
                   Index u_ld = 0, Index v_ld = TilePanels<T, Block>::kPanel) {
  constexpr Index G = TilePanels<T, Block>::kGroup, W = TilePanels<T, Block>::kPanel;
  const Index u_k = InPlace ? 1 : G, u_r = InPlace ? u_ld : 1;
  alignas(64) T acc[G][W];
  Index k = 0;
  if (resume) {
    std::copy_n(resume, G * W, &acc[0][0]);
  } else {
    // k = 0 peeled (a zero-initialised acc became a call of memset); depth is at least 1
    for (Index r = 0; r < G; ++r) {
      const T b = u[r * u_r];
#pragma omp simd
      for (Index j = 0; j < W; ++j) acc[r][j] = std::fma(v[j], b, T(0));
    }
    k = 1;
  }
  for (; k < depth; ++k) {
    const T* vk = v + k * v_ld;
    for (Index r = 0; r < G; ++r) {
      const T b = u[k * u_k + r * u_r];
#pragma omp simd
      for (Index j = 0; j < W; ++j) acc[r][j] = std::fma(vk[j], b, acc[r][j]);
    }
  }
  if (suspend) std::copy_n(&acc[0][0], G * W, suspend);
  else store_block(acc, out, ld, rows, cols, accumulate);
}

// bfloat16 as its 16 bits: the upper half of a float, rounded to nearest even (a NaN stays a NaN).
using Bf16 = std::uint16_t;
Bf16 to_bf16(float x) {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(x);
  const bool nan = (bits & 0x7fffffffu) > 0x7f800000u;
  return Bf16(nan ? (bits >> 16) | 0x40u : (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}
[[maybe_unused]] float from_bf16(Bf16 b) { return std::bit_cast<float>(std::uint32_t(b) << 16); }

// A pair of bf16 along k as one word, the even k's in its low half: what one lane of VDPBF16PS multiplies.
using Bf16Pair [[gnu::may_alias]] = std::uint32_t;
Bf16Pair bf16_pair(float even, float odd) { return Bf16Pair(to_bf16(even)) | Bf16Pair(to_bf16(odd)) << 16; }

// Words of pairs from two runs of floats `stride` apart (the odd one zero past depth), eight at a time: an AVX-512
// group is eight wide, and a vector loop of a count known only at run time ran it scalar.
template <bool has_odd>
void pack_pair_run(const float* __restrict even, const float* __restrict odd, Index stride, Index width,
                   Bf16Pair* __restrict row) {
  const auto word = [&](Index j) {
    if constexpr (has_odd) return bf16_pair(even[j * stride], odd[j * stride]);
    else return bf16_pair(even[j * stride], 0.0f);
  };
  Index j = 0;
  for (; j + 8 <= width; j += 8)
#pragma omp simd
    for (Index e = 0; e < 8; ++e) row[j + e] = word(j + e);
  for (; j < width; ++j) row[j] = word(j);
}

// The bf16 layout of copy_transposed's: out[kk][j][e] = bf16 of in[(2kk + e)·k_stride + j·j_stride], zero past depth
// and width; along j, or along k where only k is contiguous.
void pack_pairs(const float* __restrict in, Index k_stride, Index j_stride, Index depth, Index width, Index padded,
                Bf16* __restrict out) {
  static_assert(std::endian::native == std::endian::little, "a word's low half is its first bf16");
  if (depth == 0) return;
  Bf16Pair* words = reinterpret_cast<Bf16Pair*>(out);
  const Index pairs = (depth + 1) / 2, whole = depth / 2;
  if (k_stride == 1 && j_stride != 1) {
    // A column of contiguous k rounds in one vector loop into bf16 in order, which read as words are its pairs.
    thread_local std::vector<Bf16> rounded;
    rounded.resize(std::max(rounded.size(), static_cast<std::size_t>(2 * pairs)));
    rounded[2 * pairs - 1] = 0;
    const Bf16Pair* column_words = reinterpret_cast<const Bf16Pair*>(rounded.data());
    for (Index j = 0; j < width; ++j) {
      const float* column = in + j * j_stride;
#pragma omp simd
      for (Index k = 0; k < depth; ++k) rounded[k] = to_bf16(column[k]);
      for (Index kk = 0; kk < pairs; ++kk) words[kk * padded + j] = column_words[kk];
    }
  } else {
    for (Index kk = 0; kk < whole; ++kk)
      pack_pair_run<true>(in + 2 * kk * k_stride, in + (2 * kk + 1) * k_stride, j_stride, width, words + kk * padded);
    if (whole < pairs)
      pack_pair_run<false>(in + 2 * whole * k_stride, nullptr, j_stride, width, words + whole * padded);
  }
  for (Index kk = 0; kk < pairs; ++kk) std::fill(out + 2 * (kk * padded + width), out + 2 * (kk + 1) * padded, Bf16(0));
}

// block_product on bf16 pairs, accumulated in float as VDPBF16PS defines it: per pair, the odd member's product added
// first, then the even's, each addition rounded once (a product of two bf16 is exact in float).
template <RegisterBlock Block>
void block_product_bf16(const Bf16* __restrict u, const Bf16* __restrict v, Index pairs, float* __restrict out,
                        Index ld, Index rows, Index cols, bool accumulate) {
  constexpr Index G = TilePanels<float, Block>::kGroup, W = TilePanels<float, Block>::kPanel;
  alignas(64) float acc[G][W];
#if defined(__AVX512BF16__)
  if constexpr (W == 32) {
    __m512 sum[G][2];
    for (auto& r : sum) r[0] = r[1] = _mm512_setzero_ps();
    for (Index kk = 0; kk < pairs; ++kk) {
      const auto v0 = (__m512bh)_mm512_loadu_si512(v + kk * 2 * W),
                 v1 = (__m512bh)_mm512_loadu_si512(v + kk * 2 * W + W);
      for (Index r = 0; r < G; ++r) {
        std::uint32_t pair;
        std::memcpy(&pair, u + (kk * G + r) * 2, sizeof pair);
        const auto b = (__m512bh)_mm512_set1_epi32(int(pair));
        sum[r][0] = _mm512_dpbf16_ps(sum[r][0], b, v0);
        sum[r][1] = _mm512_dpbf16_ps(sum[r][1], b, v1);
      }
    }
    for (Index r = 0; r < G; ++r) _mm512_store_ps(acc[r], sum[r][0]), _mm512_store_ps(acc[r] + 16, sum[r][1]);
    store_block(acc, out, ld, rows, cols, accumulate);
    return;
  }
#endif
  for (auto& r : acc) std::fill_n(r, W, 0.0f);
  for (Index kk = 0; kk < pairs; ++kk)
    for (Index r = 0; r < G; ++r) {
      const float even = from_bf16(u[(kk * G + r) * 2]), odd = from_bf16(u[(kk * G + r) * 2 + 1]);
      const Bf16* vk = v + kk * 2 * W;
#pragma omp simd
      for (Index j = 0; j < W; ++j)
        acc[r][j] = std::fma(even, from_bf16(vk[2 * j]), std::fma(odd, from_bf16(vk[2 * j + 1]), acc[r][j]));
    }
  store_block(acc, out, ld, rows, cols, accumulate);
}

// copy_transposed of contiguous rows of a compile-time width: the inner copy unrolls into vector moves (with the
// width known only at run time, GCC made it a call of memcpy for every row of every panel).
template <Index Width, class T>
void copy_rows(const T* __restrict in, Index k_stride, Index depth, T* __restrict out) {
  for (Index k = 0; k < depth; ++k)
    for (Index j = 0; j < Width; ++j) out[k * Width + j] = in[k * k_stride + j];
}

// out[k][j] = in[k·k_stride + j·j_stride] for k < depth, j < width, and 0 for width ≤ j < padded. The writes run in
// order and the reads over at most kPanel streams, which stay in L1 however the input is laid out.
template <class T>
void copy_transposed(const T* __restrict in, Index k_stride, Index j_stride, Index depth, Index width, Index padded,
                     T* __restrict out) {
  // The widths of the register blocks' groups (6, 8) and panels (8, 16, 32)
  if (j_stride == 1 && width == padded) switch (width) {
      case 6: return copy_rows<6>(in, k_stride, depth, out);
      case 8: return copy_rows<8>(in, k_stride, depth, out);
      case 16: return copy_rows<16>(in, k_stride, depth, out);
      case 32: return copy_rows<32>(in, k_stride, depth, out);
      default: break;
    }
  for (Index k = 0; k < depth; ++k) {
    const T* row = in + k * k_stride;
    T* to = out + k * padded;
    for (Index j = 0; j < width; ++j) to[j] = row[j * j_stride];
    for (Index j = width; j < padded; ++j) to[j] = T(0);
  }
}

// C (row stride ldc) = A·B from operands packed as `Packed`, the driver of both formats, over slabs of at most
// `slab_depth` of the inner index (B's slab fits in L2): per slab, B's panels of kPanel columns packed once over the
// threads, then each group of kGroup rows packed on its thread (with B read in place, each thread's share of the groups
// through every slab). pack(in, k_stride, j_stride, depth, width, padded, out) lays out `depth` values per row or
// column (copy_transposed's contract); kernel(u, u_ld, v, v_ld, depth, out, rows, cols, resume, suspend) multiplies one
// group by one panel into out, continuing the accumulators of the slab before from resume and leaving its own in
// suspend (null: none). With `direct_rows`, a whole group of a row-major A is handed to the kernel in place (u_ld: A's
// row stride; 0: packed), with `direct_columns` every panel of a row-major B whose panels are all whole (v_ld: B's row
// stride, else kPanel): a group's or a panel's slab is a few KiB read in order, and packing it was a copy of all of an
// operand per product (for a weight's gradient over every token of the batch, as much time as its fmas on the sweeps'
// and small models).
template <class Packed, RegisterBlock Block, class T, class Pack, class Kernel>
void product_over_groups(StridedView<T> A, StridedView<T> B, Index depth, Index slab_depth, T* C, Index ldc,
                         const Pack& pack, const Kernel& kernel, bool direct_rows = false,
                         bool direct_columns = false) {
  constexpr Index G = TilePanels<T, Block>::kGroup, W = TilePanels<T, Block>::kPanel;
  using Buffer = std::vector<Packed, Eigen::aligned_allocator<Packed>>;  // grows only: no allocation once warm
  using Chains = std::vector<T, Eigen::aligned_allocator<T>>;
  const Index R = A.rows, O = B.cols, panels = (O + W - 1) / W, slabs = (depth + slab_depth - 1) / slab_depth;
  const Index groups_total = (R + G - 1) / G;
  constexpr bool native = std::is_same_v<Packed, T>;
  const bool columns_in_place = native && direct_columns && O % W == 0;
  thread_local Buffer calling_thread_columns;
  thread_local Chains calling_thread_chains;
  Buffer& columns = calling_thread_columns;  // the bodies below name a thread_local as their own thread's instance
  Chains& chains = calling_thread_chains;    // per group and panel, the accumulators between slabs
  const Index slab_max = std::min(depth, slab_depth);
  if (!columns_in_place) columns.resize(std::max(columns.size(), static_cast<std::size_t>(panels * slab_max * W)));
  if (slabs > 1) chains.resize(std::max(chains.size(), static_cast<std::size_t>(groups_total * panels * G * W)));
  // Group g's rows times every panel over slab s of k, from B's packed panels of that slab or B in place.
  const auto group_slab = [&](Index g, Index s) {
    thread_local Buffer packed_rows;
    const Index k0 = s * slab_depth, kd = std::min(slab_depth, depth - k0), r0 = g * G, nr = std::min(G, R - r0);
    const Packed* u = nullptr;
    Index u_ld = 0;
    if constexpr (native)
      if (direct_rows && nr == G) u = A.data + r0 * A.row_stride + k0, u_ld = A.row_stride;  // a partial one is padded
    if (!u) {
      packed_rows.resize(std::max(packed_rows.size(), static_cast<std::size_t>(kd * G)));
      pack(A.data + r0 * A.row_stride + k0 * A.col_stride, A.col_stride, A.row_stride, std::min(kd, A.cols - k0), nr, G,
           packed_rows.data());
      u = packed_rows.data();
    }
    for (Index p = 0; p < panels; ++p) {
      T* chain = slabs > 1 ? chains.data() + (g * panels + p) * G * W : nullptr;
      const Packed* v = nullptr;
      Index v_ld = W;
      if constexpr (native)
        if (columns_in_place) v = B.data + k0 * B.row_stride + p * W, v_ld = B.row_stride;
      if (!v) v = columns.data() + p * kd * W;
      kernel(u, u_ld, v, v_ld, kd, C + r0 * ldc + p * W, nr, std::min(W, O - p * W), s == 0 ? nullptr : chain,
             s == slabs - 1 ? nullptr : chain);
    }
  };
  if (columns_in_place) {
    // No slab needs B packed, so a thread takes a share of the groups through every slab: a weight's gradient has as
    // few groups as the layer has inputs (4 on the sweeps' model) and a slab per 128 tokens, and a parallel region
    // per slab cost as much as its fmas.
    const Index shares = std::min<Index>(groups_total, omp_get_max_threads());
    for_each_in_parallel(shares, [&](Index t) {
      for (Index s = 0; s < slabs; ++s)
        for (Index g = groups_total * t / shares; g < groups_total * (t + 1) / shares; ++g) group_slab(g, s);
    });
    return;
  }
  for (Index s = 0; s < slabs; ++s) {
    const Index k0 = s * slab_depth, kd = std::min(slab_depth, depth - k0);
    // In runs of 16 rows across every panel: a panel at a time read each row's 64 bytes from a new line and page.
    constexpr Index run = 16;
    for_each_in_parallel((kd + run - 1) / run, [&](Index c) {
      // within the slab and within B (bf16's depth pads B.rows to pairs)
      const Index k = k0 + c * run, rows = std::min({run, k0 + kd - k, B.rows - k});
      for (Index p = 0; p < panels; ++p)
        pack(B.data + k * B.row_stride + p * W * B.col_stride, B.row_stride, B.col_stride, rows, std::min(W, O - p * W),
             W, columns.data() + (p * kd + c * run) * W);
    });
    for_each_in_parallel(groups_total, [&](Index g) { group_slab(g, s); });
  }
}

template <class T>
using JitKernel = std::conditional_t<std::is_same_v<T, float>, libxsmm_smmfunction, libxsmm_dmmfunction>;

// libxsmm's kernel for one block of C in its column-major terms: C's block (panel × rows, ld ldc) = B's packed panel
// (panel × depth) · A's rows (depth × rows, ld rows_ld). With `resume` it continues the chains the block holds
// (libxsmm loads C before it sums over k), so a product split into slabs of k has the bits of an unsplit one.
template <class T>
JitKernel<T> jit_kernel(Index panel, Index rows, Index depth, Index rows_ld, Index ldc, bool resume) {
  const libxsmm_blasint m = panel, n = rows, k = depth, lda = panel, ldb = rows_ld, ld_out = ldc;
  const T alpha = 1, beta = resume ? 1 : 0;
  JitKernel<T> kernel = nullptr;
  if constexpr (std::is_same_v<T, float>)
    kernel = libxsmm_smmdispatch(m, n, k, &lda, &ldb, &ld_out, &alpha, &beta, nullptr, nullptr);
  else kernel = libxsmm_dmmdispatch(m, n, k, &lda, &ldb, &ld_out, &alpha, &beta, nullptr, nullptr);
  if (!kernel)
    throw std::runtime_error("libxsmm generated no kernel for a " + std::to_string(rows) + " x " +
                             std::to_string(depth) + " x " + std::to_string(panel) + " block (leading dimensions " +
                             std::to_string(rows_ld) + ", " + std::to_string(ldc) +
                             "; ATTNLAB_PRODUCT_KERNEL=packed uses the hand-written kernel)");
  return kernel;
}

// packed_product on libxsmm's kernels for a row-major A (read in place): B packed once per slab of k in panels of 256
// bytes' columns, or 128 where those divide C's width and 256 do not (a slab's panel in L2), then per block of 32 rows
// of C (over the threads) one kernel per panel. Every kernel is a whole panel wide, at least two AVX-512 vectors: on
// AVX-512 a kernel one vector wide splits its chains over k for some row counts (not the fma chain in order), so a
// partial last panel, like an accumulating product, is formed in a scratch of whole panels and then copied (or added)
// into C. (Padding the sweeps' 32- and 96-wide layers to 256 bytes halved their rate on an Intel Xeon.)
template <class T>
void jit_product(StridedView<T> A, StridedView<T> B, T* C, Index ldc, bool accumulate) {
  using Buffer = std::vector<T, Eigen::aligned_allocator<T>>;
  constexpr Index wide = 256 / Index(sizeof(T)), block_rows = 32, slab_depth = 512;
  const Index R = A.rows, O = B.cols, depth = A.cols;
  const Index W = O % wide != 0 && O % (wide / 2) == 0 ? wide / 2 : wide, panels = (O + W - 1) / W;
  thread_local Buffer calling_thread_columns, calling_thread_scratch;
  Buffer& columns = calling_thread_columns;  // the bodies below name a thread_local as their own thread's instance
  Buffer& scratch = calling_thread_scratch;
  columns.resize(std::max(columns.size(), static_cast<std::size_t>(panels * std::min(depth, slab_depth) * W)));
  const bool in_scratch = accumulate || O % W != 0;
  T* out = C;
  Index out_ld = ldc;
  if (in_scratch) {
    scratch.resize(std::max(scratch.size(), static_cast<std::size_t>(R * panels * W)));
    out = scratch.data(), out_ld = panels * W;
  }
  for (Index k0 = 0; k0 < depth; k0 += slab_depth) {
    const Index kd = std::min(slab_depth, depth - k0);
    constexpr Index run = 16;  // rows of B per task, across every panel (copy_transposed's streams stay in L1)
    for_each_in_parallel((kd + run - 1) / run, [&](Index c) {
      const Index k = k0 + c * run, rows = std::min(run, k0 + kd - k);
      for (Index p = 0; p < panels; ++p)
        copy_transposed(B.data + k * B.row_stride + p * W * B.col_stride, B.row_stride, B.col_stride, rows,
                        std::min(W, O - p * W), W, columns.data() + (p * kd + c * run) * W);
    });
    for_each_in_parallel((R + block_rows - 1) / block_rows, [&](Index b) {
      const Index r0 = b * block_rows, nr = std::min(block_rows, R - r0);
      const T* u = A.data + r0 * A.row_stride + k0;
      const Index u_ld = nr == 1 ? kd : A.row_stride;  // libxsmm takes no leading dimension under k, even for one row
      const auto kernel = jit_kernel<T>(W, nr, kd, u_ld, out_ld, k0 > 0);
      for (Index p = 0; p < panels; ++p) kernel(columns.data() + p * kd * W, u, out + r0 * out_ld + p * W);
    });
  }
  if (in_scratch)
    for_each_in_parallel(R, [&](Index r) {
      const T* from = scratch.data() + r * out_ld;
      T* to = C + r * ldc;
      if (accumulate) {
        for (Index j = 0; j < O; ++j) to[j] += from[j];
      } else {
        std::copy_n(from, O, to);
      }
    });
}

std::atomic<ProductKernel>& selected_product_kernel() {
  static std::atomic<ProductKernel> kernel = [] {
    const char* name = std::getenv("ATTNLAB_PRODUCT_KERNEL");
    return name ? parse_product_kernel(name) : ProductKernel::libxsmm;
  }();
  return kernel;
}

}  // namespace

ProductKernel parse_product_kernel(const std::string& name) {
  if (name == "libxsmm") return ProductKernel::libxsmm;
  if (name == "packed") return ProductKernel::packed;
  throw std::invalid_argument("ATTNLAB_PRODUCT_KERNEL must be libxsmm or packed (got '" + name + "')");
}
// Under AVX2 (FMA), libxsmm's kernels are fma chains; below it they multiply and add apart, so other bits.
ProductKernel product_kernel() {
  static const bool jit_fma = libxsmm_get_target_archid() >= LIBXSMM_X86_AVX2;
  return jit_fma ? selected_product_kernel().load() : ProductKernel::packed;
}
std::string to_string(ProductKernel kernel) { return kernel == ProductKernel::libxsmm ? "libxsmm" : "packed"; }
void set_product_kernel(ProductKernel kernel) { selected_product_kernel().store(kernel); }

template <class T>
void PackedColumns<T>::pack(const Matrix<T>& matrix, Index tile_cols) {
  const StridedView<T> V = view_of(matrix);
  if (V.cols < 1) throw std::invalid_argument("the tile product needs an inner size of at least 1");
  for_libxsmm_ = product_kernel() == ProductKernel::libxsmm;
  panel_ = for_libxsmm_ ? 256 / Index(sizeof(T)) : TilePanels<T>::kPanel;
  const Index N = V.rows, W = panel_, tiles = (N + tile_cols - 1) / tile_cols, panels = (tile_cols + W - 1) / W;
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
void PackedRows<T>::pack(const Matrix<T>& matrix, Index r0, Index nr) {
  const StridedView<T> U = view_of(matrix);
  rows_ = nr;
  in_place_ = product_kernel() == ProductKernel::libxsmm ? U.data + r0 * U.row_stride : nullptr;
  if (in_place_) return;
  constexpr Index G = TilePanels<T>::kGroup;
  const Index groups = (nr + G - 1) / G, depth = U.cols;
  data_.resize(static_cast<std::size_t>(groups * G * depth));
  for (Index g = 0; g < groups; ++g)
    copy_transposed(U.data + (r0 + g * G) * U.row_stride, U.col_stride, U.row_stride, depth, std::min(G, nr - g * G), G,
                    data_.data() + g * G * depth);
}

// On libxsmm's kernels, one per panel over all the rows; a partial last panel is formed whole in a scratch and its
// columns copied (out has no room past nc).
template <class T>
void tile_product(const PackedRows<T>& rows, const PackedColumns<T>& columns, Index c0, Index nc, T* out, Index ld) {
  if (rows.for_libxsmm() != columns.for_libxsmm())
    throw std::logic_error("tile_product: rows and columns were packed for different kernels");
  const Index depth = columns.depth(), nr = rows.rows(), W = columns.panel();
  const T* tile = columns.tile(c0);
  if (columns.for_libxsmm()) {
    const Index whole = nc / W;
    if (whole > 0) {
      const auto kernel = jit_kernel<T>(W, nr, depth, depth, ld, false);
      for (Index p = 0; p < whole; ++p) kernel(tile + p * W * depth, rows.data(), out + p * W);
    }
    if (whole * W < nc) {
      thread_local std::vector<T, Eigen::aligned_allocator<T>> scratch;
      scratch.resize(std::max(scratch.size(), static_cast<std::size_t>(nr * W)));
      jit_kernel<T>(W, nr, depth, depth, W, false)(tile + whole * W * depth, rows.data(), scratch.data());
      for (Index r = 0; r < nr; ++r) std::copy_n(scratch.data() + r * W, nc - whole * W, out + r * ld + whole * W);
    }
    return;
  }
  constexpr Index G = TilePanels<T>::kGroup;
  for (Index g = 0; g * G < nr; ++g)
    for (Index p = 0; p * W < nc; ++p)
      block_product(rows.data() + g * G * depth, tile + p * W * depth, depth, out + g * G * ld + p * W, ld,
                    std::min(G, nr - g * G), std::min(W, nc - p * W), false);
}

ProductPrecision parse_product_precision(const std::string& name) {
  if (name == "native") return ProductPrecision::native;
  if (name == "bf16") return ProductPrecision::bf16;
  throw std::invalid_argument("matmul must be native or bf16 (got '" + name + "')");
}

std::string to_string(ProductPrecision precision) { return precision == ProductPrecision::bf16 ? "bf16" : "native"; }

// packed_product with the register block `Block`.
template <RegisterBlock Block, class T>
void packed_product_by(StridedView<T> A, StridedView<T> B, T* C, Index ldc, bool accumulate,
                       ProductPrecision precision) {
  if (precision == ProductPrecision::bf16) {
    if constexpr (std::is_same_v<T, float>) {
      const Index pairs = (A.cols + 1) / 2;
      return product_over_groups<Bf16, Block>(
          A, B, 2 * pairs, 2 * pairs, C, ldc, pack_pairs,
          [&](const Bf16* u, Index, const Bf16* v, Index, Index, float* out, Index rows, Index cols, const float*,
              float*) { block_product_bf16<Block>(u, v, pairs, out, ldc, rows, cols, accumulate); });
    }
    throw std::invalid_argument("bf16 products take float operands, not double");
  }
  // A panel's slab in L1 (16 KiB): a deep product (a weight's gradient, over every token of the batch) streamed
  // B's panels from memory for every group of rows.
  constexpr Index slab_depth = 16384 / (TilePanels<T, Block>::kPanel * Index(sizeof(T)));
  product_over_groups<T, Block>(
      A, B, A.cols, slab_depth, C, ldc, copy_transposed<T>,
      [&](const T* u, Index u_ld, const T* v, Index v_ld, Index depth, T* out, Index rows, Index cols, const T* resume,
          T* suspend) {
        if (u_ld > 0)
          block_product<T, Block, true>(u, v, depth, out, ldc, rows, cols, accumulate, resume, suspend, u_ld, v_ld);
        else block_product<T, Block>(u, v, depth, out, ldc, rows, cols, accumulate, resume, suspend, 0, v_ld);
      },
      A.col_stride == 1, B.col_stride == 1);
}

template <class T>
void packed_product(StridedView<T> A, StridedView<T> B, T* C, Index ldc, bool accumulate, ProductPrecision precision,
                    RegisterBlock block) {
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
  // A transposed A (a weight's gradient xᵀ·dy) stays on the hand-written kernel, which packs A's groups as it goes:
  // 1.3-8x the rate of libxsmm's kernels on rows gathered for them (the trainer's shapes, AMD EPYC Zen 5).
  const bool rows_in_place = A.col_stride == 1 && (R == 1 || A.row_stride >= A.cols);
  if (precision == ProductPrecision::native && product_kernel() == ProductKernel::libxsmm && rows_in_place)
    return jit_product(A, B, C, ldc, accumulate);
  if (block == RegisterBlock::native) block = kNativeBlock;
  if (block == RegisterBlock::avx512)
    return packed_product_by<RegisterBlock::avx512>(A, B, C, ldc, accumulate, precision);
  packed_product_by<RegisterBlock::avx2>(A, B, C, ldc, accumulate, precision);
}

template class PackedColumns<float>;
template class PackedColumns<double>;
template class PackedRows<float>;
template class PackedRows<double>;
template void tile_product(const PackedRows<float>&, const PackedColumns<float>&, Index, Index, float*, Index);
template void tile_product(const PackedRows<double>&, const PackedColumns<double>&, Index, Index, double*, Index);
template void packed_product(StridedView<float>, StridedView<float>, float*, Index, bool, ProductPrecision,
                             RegisterBlock);
template void packed_product(StridedView<double>, StridedView<double>, double*, Index, bool, ProductPrecision,
                             RegisterBlock);

}  // namespace attnlab
