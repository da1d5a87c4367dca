#pragma once
// The Thrust engine's per-index operations (thrust_engine.hpp): each call computes one output, in a fixed order, so
// that a result does not depend on how the calls are spread over threads or the device.
#include <attnlab/accel/engine.hpp>
#include <attnlab/core/rng.hpp>

#include <cmath>
#include <cstdint>
#include <limits>

namespace attnlab::accel::engine {

using I = std::int64_t;

// Column-major C = alpha·op(A)·op(B) + beta·C for `batch` matrices at fixed strides (BLAS semantics).
template <class T>
struct GemmArgs {
  bool trans_a, trans_b;
  I m, n, k;
  T alpha;
  const T* A;
  I lda, stride_a;
  const T* B;
  I ldb, stride_b;
  T beta;
  T* C;
  I ldc, stride_c;
  I batch;
};

// The reference GEMM: one output entry per call, the sum over k in order.
template <class T>
struct GemmEntry {
  GemmArgs<T> g;
  ATTNLAB_HD void operator()(I idx) const {
    const I i = idx % g.m, j = (idx / g.m) % g.n, b = idx / (g.m * g.n);
    const T* A = g.A + b * g.stride_a;
    const T* B = g.B + b * g.stride_b;
    T acc = 0;
    for (I l = 0; l < g.k; ++l)
      acc += (g.trans_a ? A[i * g.lda + l] : A[l * g.lda + i]) * (g.trans_b ? B[l * g.ldb + j] : B[j * g.ldb + l]);
    T& c = g.C[b * g.stride_c + j * g.ldc + i];
    c = g.alpha * acc + (g.beta == T(0) ? T(0) : g.beta * c);
  }
};

// Entry e of trial first_trial + t of one matrix: the CPU engine's fill_gaussian, entry by entry.
template <class T>
struct GaussianEntries {
  StreamKey key;
  std::uint32_t first_trial;
  StreamTag tag;
  double sigma;
  I per_trial;
  T* out;
  ATTNLAB_HD void operator()(I idx) const {
    const auto trial = first_trial + static_cast<std::uint32_t>(idx / per_trial);
    out[idx] = GaussianStream(key, trial, tag).sample<T>(static_cast<std::uint64_t>(idx % per_trial), sigma);
  }
};

template <class T>
struct RowSquaredNorms {
  const T* A;
  I width;
  double* out;
  ATTNLAB_HD void operator()(I r) const {
    double s = 0;
    for (I c = 0; c < width; ++c) {
      const double v = static_cast<double>(A[r * width + c]);
      s += v * v;
    }
    out[r] = s;
  }
};

// Per row i of ϕ: Σ_j ϕ_ij, Σ_j ϕ_ij², Σ_j (∂ϕ_ij)², and the Q- and K-side spreads, so that
// ‖∂ϕ/∂Q‖² = c² Σ_i ‖x_i‖² q_i and ‖∂ϕ/∂K‖² = c² Σ_i ‖u_i‖² k_i (c the logit scale).
struct RowStats {
  double sum = 0, frob2 = 0, jac2 = 0, q = 0, k = 0;
};

ATTNLAB_HD inline void add(RowStats& a, const RowStats& b) {
  a.sum += b.sum;
  a.frob2 += b.frob2;
  a.jac2 += b.jac2;
  a.q += b.q;
  a.k += b.k;
}

// Elementwise ϕ over one chunk of columns of one slab row: q_i = Σ_j ϕ'² ‖v_j‖², k_i = Σ_j ϕ'² ‖x_j‖².
template <class T, Elementwise F, int P>
struct ElementwiseChunk {
  const T* M;  // slab of trial t at M + t·R·N, entry (i, j) at j·R + i
  I R, N, chunk, chunks;
  const double *v2, *x2;  // trial t at + t·N
  ActivationParams a;
  RowStats* out;  // [(t·chunks + c)·R + i]
  ATTNLAB_HD void operator()(I idx) const {
    const I i = idx % R, c = (idx / R) % chunks, t = idx / (R * chunks);
    const T* m = M + t * R * N;
    const double *v2t = v2 + t * N, *x2t = x2 + t * N;
    RowStats s;
    const I end = c * chunk + chunk < N ? c * chunk + chunk : N;
    for (I j = c * chunk; j < end; ++j) {
      double h, dh;
      evaluate<F, P>(a.logit_scale * static_cast<double>(m[j * R + i]), a.p, h, dh);
      const double phi = a.out_scale * h, g = a.out_scale * dh, g2 = g * g;
      s.sum += phi;
      s.frob2 += phi * phi;
      s.jac2 += g2;
      s.q += g2 * v2t[j];
      s.k += g2 * x2t[j];
    }
    out[idx] = s;
  }
};

// Sums the chunks of each row in chunk order: rows[t·N + r0 + i].
struct CombineChunks {
  const RowStats* partial;
  I R, chunks, r0, N;
  RowStats* rows;
  ATTNLAB_HD void operator()(I idx) const {
    const I i = idx % R, t = idx / R;
    RowStats s;
    for (I c = 0; c < chunks; ++c) add(s, partial[(t * chunks + c) * R + i]);
    rows[t * N + r0 + i] = s;
  }
};

// Softmax of x = c·m over a chunk, relative to the chunk's maximum: Z = Σ e^{x−max}, A2 = Σ e^{2(x−max)},
// A3 = Σ e^{3(x−max)}; chunks merge exactly by rescaling to the larger maximum.
struct SoftmaxSums {
  double max = -std::numeric_limits<double>::infinity(), z = 0, a2 = 0, a3 = 0;
};

ATTNLAB_HD inline void merge(SoftmaxSums& a, const SoftmaxSums& b) {
  if (b.z == 0) return;
  if (b.max > a.max) {
    const double r = ::exp(a.max - b.max);
    a = {b.max, a.z * r + b.z, a.a2 * r * r + b.a2, a.a3 * r * r * r + b.a3};
  } else {
    const double r = ::exp(b.max - a.max);
    a.z += b.z * r;
    a.a2 += b.a2 * r * r;
    a.a3 += b.a3 * r * r * r;
  }
}

template <class T>
struct SoftmaxChunk {
  const T* M;
  I R, N, chunk, chunks;
  double c;
  SoftmaxSums* out;  // [(t·chunks + chunk)·R + i]
  ATTNLAB_HD void operator()(I idx) const {
    const I i = idx % R, k = (idx / R) % chunks, t = idx / (R * chunks);
    const T* m = M + t * R * N;
    const I begin = k * chunk, end = begin + chunk < N ? begin + chunk : N;
    double mx = -std::numeric_limits<double>::infinity();
    for (I j = begin; j < end; ++j) mx = fmax(mx, c * static_cast<double>(m[j * R + i]));
    SoftmaxSums s{mx, 0, 0, 0};
    for (I j = begin; j < end; ++j) {
      const double e = ::exp(c * static_cast<double>(m[j * R + i]) - mx);
      s.z += e;
      s.a2 += e * e;
      s.a3 += e * e * e;
    }
    out[idx] = s;
  }
};

struct CombineSoftmaxChunks {
  const SoftmaxSums* partial;
  I R, chunks;
  SoftmaxSums* rows;  // [t·R + i]
  ATTNLAB_HD void operator()(I idx) const {
    const I i = idx % R, t = idx / R;
    SoftmaxSums s;
    for (I k = 0; k < chunks; ++k) merge(s, partial[(t * chunks + k) * R + i]);
    rows[idx] = s;
  }
};

// The slab's logits become probabilities s_ij = e^{c·m_ij − max_i}/Z_i, in double (in place where T is double).
template <class T>
struct Probabilities {
  const T* M;
  double* S;
  I R, N;
  double c;
  const SoftmaxSums* rows;
  ATTNLAB_HD void operator()(I idx) const {
    const I i = idx % R, t = idx / (R * N);
    const SoftmaxSums& s = rows[t * R + i];
    S[idx] = ::exp(c * static_cast<double>(M[idx]) - s.max) / s.z;
  }
};

struct Square {
  double* M;
  ATTNLAB_HD void operator()(I idx) const { M[idx] = M[idx] * M[idx]; }
};

// [V | X | ‖v‖² | ‖x‖²] row by row (N × (d + D + 2) per trial): one GEMM with the probabilities gives
// v̄_i and x̄_i, one with their squares Σ_j s_j² (v_j, x_j, ‖v_j‖², ‖x_j‖²).
template <class T>
struct Augmented {
  const T *V, *X;
  const double *v2, *x2;
  I d, D;
  double* out;
  ATTNLAB_HD void operator()(I idx) const {
    const I W = d + D + 2, c = idx % W, row = idx / W;
    out[idx] = c < d       ? static_cast<double>(V[row * d + c])
               : c < d + D ? static_cast<double>(X[row * D + c - d])
                           : (c == d + D ? v2[row] : x2[row]);
  }
};

// Softmax rows from G1 = S·[V|X|v2|x2] and G2 = (S∘S)·[…] (col-major R × W per trial):
// Σ_j s_j² ‖v_j − v̄_i‖² = Σ_j s_j² ‖v_j‖² − 2 v̄_i·Σ_j s_j² v_j + ‖v̄_i‖² Σ_j s_j², and the same for x. The terms
// nearly cancel where one token holds most of the weight, so G1 and G2 are always double: in float their rounding
// would swamp the spread.
struct SoftmaxRows {
  const double *G1, *G2;
  const SoftmaxSums* sums;
  I R, d, D, r0, N;
  RowStats* rows;  // [t·N + r0 + i]
  ATTNLAB_HD void operator()(I idx) const {
    const I i = idx % R, t = idx / R, W = d + D + 2;
    const double *g1 = G1 + t * R * W + i, *g2 = G2 + t * R * W + i;
    const SoftmaxSums& s = sums[idx];
    const double s2 = s.a2 / (s.z * s.z), s3 = s.a3 / (s.z * s.z * s.z);
    const auto spread = [&](I first, I width, I norm_column) {
      double cross = 0, mean2 = 0;
      for (I col = first; col < first + width; ++col) {
        const double mean = g1[col * R];
        cross += mean * g2[col * R];
        mean2 += mean * mean;
      }
      const double v = g2[norm_column * R] - 2 * cross + mean2 * s2;
      return v > 0 ? v : 0.0;
    };
    rows[t * N + r0 + i] = {1.0, s2, s2 - 2 * s3 + s2 * s2, spread(0, d, d + D), spread(d, D, d + D + 1)};
  }
};

// A trial's squared norms from its rows: rows in blocks of kRowBlock, each block summed in row order by one call
// (so N = 65,536 is 256 parallel sums, not one serial one), then the blocks in block order. A fixed order: the
// result does not depend on the thread count or the device.
constexpr I kRowBlock = 256;

struct CombineRowBlocks {
  const RowStats* rows;
  const double *x2, *u2;
  I N, blocks;
  double c2;                   // squared logit scale
  AttentionNormsSquared* out;  // [t·blocks + b]
  ATTNLAB_HD void operator()(I idx) const {
    const I b = idx % blocks, t = idx / blocks;
    const I end = (b + 1) * kRowBlock < N ? (b + 1) * kRowBlock : N;
    AttentionNormsSquared n;
    for (I i = t * N + b * kRowBlock; i < t * N + end; ++i) {
      const RowStats& r = rows[i];
      n.frob2 += r.frob2;
      n.jac2 += r.jac2;
      n.sum += r.sum;
      n.row_sum2 += r.sum * r.sum;
      n.qgrad2 += c2 * x2[i] * r.q;
      n.kgrad2 += c2 * u2[i] * r.k;
    }
    out[idx] = n;
  }
};

struct CombineBlocks {
  const AttentionNormsSquared* blocks_of;  // [t·blocks + b]
  I blocks;
  AttentionNormsSquared* out;
  I activations, activation;
  ATTNLAB_HD void operator()(I t) const {
    AttentionNormsSquared n;
    for (I b = 0; b < blocks; ++b) n += blocks_of[t * blocks + b];
    out[t * activations + activation] = n;
  }
};

// y = S v with SOFT's Gaussian kernel S_ij = exp(−‖a_i − b_j‖²/(2√d)), one row per call, entries made on
// the fly; S(B, A) = S(A, B)ᵀ gives the transpose product.
struct GaussianKernelTimes {
  const double *A, *B, *v;
  I rows_b, d;
  double scale;  // 1/(2√d)
  double* y;
  ATTNLAB_HD void operator()(I i) const {
    double acc = 0;
    for (I j = 0; j < rows_b; ++j) {
      double dist = 0;
      for (I c = 0; c < d; ++c) {
        const double diff = A[i * d + c] - B[j * d + c];
        dist += diff * diff;
      }
      acc += ::exp(-dist * scale) * v[j];
    }
    y[i] = acc;
  }
};

}  // namespace attnlab::accel::engine
