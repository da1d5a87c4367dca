#pragma once
// The Thrust engine, written once and compiled twice: for OpenMP by the C++ compiler (thrust_omp.cpp)
// and for CUDA by nvcc (cuda_engine.cu). A System supplies the vectors, the execution policy, the
// strided-batched GEMM and optionally a fused elementwise kernel.
//
// Per batch of trials: X, Q, K from the CPU engine's Philox streams; U = XQ and V = XK; then, per
// activation, statistics of every row of ϕ(M), M = UVᵀ, reduced into per-trial squared norms. Rows
// are processed in slabs of R rows whose logits are held column-major (R×N), so memory stays
// O(R·N) and N×N is never formed unless R = N. Every reduction runs in a fixed order (one functor
// call per output, columns in fixed chunks), so results do not depend on the thread count.
#include "backends.hpp"
#include "thrust_functors.hpp"

#include <attnlab/accel/engine.hpp>
#include <attnlab/core/rng.hpp>

#include <thrust/copy.h>
#include <thrust/for_each.h>
#include <thrust/iterator/counting_iterator.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace attnlab::accel::engine {

template <class Sys, class F>
void for_each_index(Sys& sys, I n, const F& f) {
  if (n > 0) thrust::for_each(sys.policy(), thrust::counting_iterator<I>(0), thrust::counting_iterator<I>(n), f);
}

template <class T, class V>
T* raw(V& v) {
  return thrust::raw_pointer_cast(v.data());
}

// Every buffer of one batch, allocated once.
template <class Sys, class T>
struct Workspace {
  typename Sys::template vector<T> X, Q, K, U, V, slab;
  typename Sys::template vector<double> x2, u2, v2, probabilities, augmented, G1, G2;  // probabilities: float only
  typename Sys::template vector<RowStats> partial, rows;
  typename Sys::template vector<SoftmaxSums> softmax_partial, softmax_rows;
  typename Sys::template vector<AttentionNormsSquared> row_blocks, norms;
};

// `v` holding n entries; storage that must grow is released first, so the peak is the new size, not old + new.
template <class Vector>
void fit(Vector& v, I n) {
  if (static_cast<I>(v.capacity()) < n) Vector().swap(v);
  v.resize(n);
}

// How a problem's trials are batched: per_batch trials at once, logits in slabs of R rows.
struct Plan {
  I per_batch, R;
  bool any_softmax, any_slab;
};

constexpr I kChunk = 256;  // columns per partial row sum

// The slab budget bounds the logits held at once; the memory limit (this process's share of the device: its memory
// over the ranks of the node on it) bounds every buffer, X, Q, K, U and V included, which grow with N·D + D·d.
template <class Sys, class T>
Plan plan_batches(Sys& sys, const Problem& p, const Options& o) {
  const I N = p.N, D = p.D, d = p.d, A = static_cast<I>(p.activations.size()), W = d + D + 2;
  const I budget = o.slab_elements > 0 ? o.slab_elements : Sys::default_slab_elements;
  // Whole trials per slab while N² fits the budget; otherwise one trial at a time in slabs of rows.
  const I slab_batch = std::clamp<I>(budget / (N * N), 1, std::min<I>(std::max<I>(p.trials, 1), Sys::max_batch));
  const I R = N * N <= budget ? N : std::max<I>(1, budget / N);
  const I chunks = (N + kChunk - 1) / kChunk, row_blocks = (N + kRowBlock - 1) / kRowBlock;
  Plan plan{.per_batch = 1, .R = R, .any_softmax = false, .any_slab = false};
  bool any_fused = false;
  for (const auto& a : p.activations) {
    const bool fused = Sys::has_fused && o.fused && !a.softmax;
    plan.any_softmax |= a.softmax;
    plan.any_slab |= !fused;
    any_fused |= fused;
  }
  const auto b = [](auto entries, std::size_t size) { return double(entries) * double(size); };
  double bytes = b(N * D + 2 * D * d + 2 * N * d, sizeof(T)) + b(3 * N, sizeof(double)) + b(N, sizeof(RowStats)) +
                 b(row_blocks + A, sizeof(AttentionNormsSquared));
  if (plan.any_slab) bytes += b(R * N, sizeof(T)) + b(chunks * R, sizeof(RowStats));
  if (any_fused) bytes += b(fused_column_splits(N) * N, sizeof(RowStats));
  if (plan.any_softmax)
    bytes += b(std::is_same_v<T, float> ? R * N : 0, sizeof(double)) + b(N * W + 2 * R * W, sizeof(double)) +
             b(chunks * R + R, sizeof(SoftmaxSums));
  // The ranks of the node whose node rank maps to this device (o.device mod the devices present).
  const int devices = std::max(1, sys.device_count()), ranks = std::max(1, o.ranks_on_node);
  const int sharing = std::max(1, ranks / devices + (o.device % devices < ranks % devices ? 1 : 0));
  const double limit = o.memory_bytes > 0 ? double(o.memory_bytes) : 0.9 * sys.memory_bytes() / sharing;
  if (bytes > limit) {
    char line[320];
    std::snprintf(line, sizeof line,
                  "N: %lld (with D = %lld, d = %lld) needs %.3g GB of buffers for one trial on %s, more than this "
                  "process's %.3g GB share of it (%d process%s on it)",
                  static_cast<long long>(N), static_cast<long long>(D), static_cast<long long>(d), bytes / 1e9,
                  sys.memory_name().c_str(), limit / 1e9, sharing, sharing == 1 ? "" : "es");
    throw std::invalid_argument(line);
  }
  plan.per_batch = std::min<I>(slab_batch, static_cast<I>(limit / bytes));
  return plan;
}

template <class Sys, class T>
void draw_batch(Sys& sys, const Problem& p, std::uint32_t first, I nb, Workspace<Sys, T>& w) {
  const StreamKey key = stream_key(p.seed, p.configuration);
  const I N = p.N, D = p.D, d = p.d;
  for_each_index(sys, nb * N * D, GaussianEntries<T>{key, first, StreamTag::X, p.sigma_x, N * D, raw<T>(w.X)});
  for_each_index(sys, nb * D * d, GaussianEntries<T>{key, first, StreamTag::Q, p.sigma_t, D * d, raw<T>(w.Q)});
  for_each_index(sys, nb * D * d, GaussianEntries<T>{key, first, StreamTag::K, p.sigma_t, D * d, raw<T>(w.K)});
}

// Row-major U = X·Q is column-major Uᵀ = Qᵀ·Xᵀ, with the same buffers.
template <class Sys, class T>
void project(Sys& sys, const T* X, const T* W, T* out, I nb, I N, I D, I d) {
  sys.gemm(GemmArgs<T>{.trans_a = false,
                       .trans_b = false,
                       .m = d,
                       .n = N,
                       .k = D,
                       .alpha = T(1),
                       .A = W,
                       .lda = d,
                       .stride_a = D * d,
                       .B = X,
                       .ldb = D,
                       .stride_b = N * D,
                       .beta = T(0),
                       .C = out,
                       .ldc = d,
                       .stride_c = N * d,
                       .batch = nb});
}

template <class Sys, class T>
void slab_rows_elementwise(Sys& sys, const ActivationParams& a, I nb, I N, I R, I r0, I chunk, Workspace<Sys, T>& w) {
  const I chunks = (N + chunk - 1) / chunk;
  with_elementwise(a.fn, a.p, [&]<Elementwise F, int P>() {
    for_each_index(sys, nb * chunks * R,
                   ElementwiseChunk<T, F, P>{raw<T>(w.slab), R, N, chunk, chunks, raw<double>(w.v2), raw<double>(w.x2),
                                             a, raw<RowStats>(w.partial)});
  });
  for_each_index(sys, nb * R, CombineChunks{raw<RowStats>(w.partial), R, chunks, r0, N, raw<RowStats>(w.rows)});
}

template <class Sys, class T>
void slab_rows_softmax(Sys& sys, const ActivationParams& a, I nb, I N, I D, I d, I R, I r0, I chunk,
                       Workspace<Sys, T>& w) {
  const I chunks = (N + chunk - 1) / chunk, W = d + D + 2;
  const T* M = raw<T>(w.slab);
  double* S = std::is_same_v<T, double> ? reinterpret_cast<double*>(raw<T>(w.slab)) : raw<double>(w.probabilities);
  for_each_index(sys, nb * chunks * R,
                 SoftmaxChunk<T>{M, R, N, chunk, chunks, a.logit_scale, raw<SoftmaxSums>(w.softmax_partial)});
  for_each_index(
      sys, nb * R,
      CombineSoftmaxChunks{raw<SoftmaxSums>(w.softmax_partial), R, chunks, raw<SoftmaxSums>(w.softmax_rows)});
  for_each_index(sys, nb * R * N, Probabilities<T>{M, S, R, N, a.logit_scale, raw<SoftmaxSums>(w.softmax_rows)});
  // G = S·A with S col-major R×N and A = augmented, row-major N×W (col-major W×N, transposed).
  const auto times_augmented = [&](double* G) {
    sys.gemm(GemmArgs<double>{.trans_a = false,
                              .trans_b = true,
                              .m = R,
                              .n = W,
                              .k = N,
                              .alpha = 1.0,
                              .A = S,
                              .lda = R,
                              .stride_a = R * N,
                              .B = raw<double>(w.augmented),
                              .ldb = W,
                              .stride_b = N * W,
                              .beta = 0.0,
                              .C = G,
                              .ldc = R,
                              .stride_c = R * W,
                              .batch = nb});
  };
  times_augmented(raw<double>(w.G1));
  for_each_index(sys, nb * R * N, Square{S});
  times_augmented(raw<double>(w.G2));
  for_each_index(sys, nb * R,
                 SoftmaxRows{raw<double>(w.G1), raw<double>(w.G2), raw<SoftmaxSums>(w.softmax_rows), R, d, D, r0, N,
                             raw<RowStats>(w.rows)});
}

template <class Sys, class T>
std::vector<AttentionNormsSquared> trial_norms(Sys& sys, Workspace<Sys, T>& w, const Problem& p, const Options& o,
                                               const Progress& progress) {
  const I N = p.N, D = p.D, d = p.d, A = static_cast<I>(p.activations.size()), W = d + D + 2;
  const Plan plan = plan_batches<Sys, T>(sys, p, o);
  const I per_batch = plan.per_batch, R = plan.R, chunk = kChunk, chunks = (N + chunk - 1) / chunk;
  const auto fused = [&](const ActivationParams& a) { return Sys::has_fused && o.fused && !a.softmax; };
  fit(w.X, per_batch * N * D);
  fit(w.Q, per_batch * D * d);
  fit(w.K, per_batch * D * d);
  fit(w.U, per_batch * N * d);
  fit(w.V, per_batch * N * d);
  fit(w.x2, per_batch * N);
  fit(w.u2, per_batch * N);
  fit(w.v2, per_batch * N);
  fit(w.rows, per_batch * N);
  const I row_blocks = (N + kRowBlock - 1) / kRowBlock;
  fit(w.row_blocks, per_batch * row_blocks);
  fit(w.norms, per_batch * A);
  if (plan.any_slab) {
    fit(w.slab, per_batch * R * N);
    fit(w.partial, per_batch * chunks * R);
  }
  if (plan.any_softmax) {
    if constexpr (std::is_same_v<T, float>) fit(w.probabilities, per_batch * R * N);
    fit(w.augmented, per_batch * N * W);
    fit(w.G1, per_batch * R * W);
    fit(w.G2, per_batch * R * W);
    fit(w.softmax_partial, per_batch * chunks * R);
    fit(w.softmax_rows, per_batch * R);
  }
  std::vector<AttentionNormsSquared> out;
  // 64-bit: in 32 bits the end of a block that ends at trial 2³² − 1, and a batch stepping past it, wrap to 0.
  const I end = I{p.first_trial} + I{p.trials};
  for (I first = p.first_trial; first < end; first += per_batch) {
    const I nb = std::min<I>(per_batch, end - first);
    draw_batch(sys, p, static_cast<std::uint32_t>(first), nb, w);
    project(sys, raw<T>(w.X), raw<T>(w.Q), raw<T>(w.U), nb, N, D, d);
    project(sys, raw<T>(w.X), raw<T>(w.K), raw<T>(w.V), nb, N, D, d);
    for_each_index(sys, nb * N, RowSquaredNorms<T>{raw<T>(w.X), D, raw<double>(w.x2)});
    for_each_index(sys, nb * N, RowSquaredNorms<T>{raw<T>(w.U), d, raw<double>(w.u2)});
    for_each_index(sys, nb * N, RowSquaredNorms<T>{raw<T>(w.V), d, raw<double>(w.v2)});
    if (plan.any_softmax)
      for_each_index(
          sys, nb * N * W,
          Augmented<T>{raw<T>(w.V), raw<T>(w.X), raw<double>(w.v2), raw<double>(w.x2), d, D, raw<double>(w.augmented)});
    for (I ai = 0; ai < A; ++ai) {
      const auto& a = p.activations[static_cast<std::size_t>(ai)];
      if (fused(a)) {
        if constexpr (Sys::has_fused) sys.fused_elementwise_rows(a, nb, N, d, w);
      } else {
        for (I r0 = 0; r0 < N; r0 += R) {
          const I rows = std::min(R, N - r0);
          // Slab (col-major rows × N) = U[r0 : r0 + rows] · Vᵀ, U row-major seen as col-major d × N.
          sys.gemm(GemmArgs<T>{.trans_a = true,
                               .trans_b = false,
                               .m = rows,
                               .n = N,
                               .k = d,
                               .alpha = T(1),
                               .A = raw<T>(w.U) + r0 * d,
                               .lda = d,
                               .stride_a = N * d,
                               .B = raw<T>(w.V),
                               .ldb = d,
                               .stride_b = N * d,
                               .beta = T(0),
                               .C = raw<T>(w.slab),
                               .ldc = rows,
                               .stride_c = rows * N,
                               .batch = nb});
          if (a.softmax) slab_rows_softmax(sys, a, nb, N, D, d, rows, r0, chunk, w);
          else slab_rows_elementwise(sys, a, nb, N, rows, r0, chunk, w);
        }
      }
      for_each_index(sys, nb * row_blocks,
                     CombineRowBlocks{raw<RowStats>(w.rows), raw<double>(w.x2), raw<double>(w.u2), N, row_blocks,
                                      a.logit_scale * a.logit_scale, raw<AttentionNormsSquared>(w.row_blocks)});
      for_each_index(sys, nb,
                     CombineBlocks{raw<AttentionNormsSquared>(w.row_blocks), row_blocks,
                                   raw<AttentionNormsSquared>(w.norms), A, ai});
    }
    out.resize(out.size() + static_cast<std::size_t>(nb * A));
    thrust::copy(w.norms.begin(), w.norms.begin() + nb * A, out.end() - nb * A);
    if (progress) progress(static_cast<std::uint32_t>(first + nb - I{p.first_trial}), p.trials);
  }
  return out;
}

template <class Sys, class T>
Sample draw(Sys& sys, const Problem& p, std::uint32_t trial) {
  Workspace<Sys, T> w;
  w.X.resize(p.N * p.D);
  w.Q.resize(p.D * p.d);
  w.K.resize(p.D * p.d);
  draw_batch(sys, p, trial, 1, w);
  const auto widen = [](const auto& v) {
    std::vector<T> host(v.size());
    thrust::copy(v.begin(), v.end(), host.begin());
    return std::vector<double>(host.begin(), host.end());
  };
  return {widen(w.X), widen(w.Q), widen(w.K)};
}

// Power iteration on SᵀS from the all-ones vector (S is positive, so its top singular vectors are too), v normalised
// each step: unnormalised it grows as σ₁^(2k), overflowing for a large dense kernel and underflowing to 0/0 for σ₁ < 1.
// Norms are taken on the host in index order, so the iterates are the same for any thread count.
template <class Sys>
SpectralResult gaussian_kernel_norm(Sys& sys, const std::vector<double>& Q, const std::vector<double>& K, I d,
                                    double tolerance, int max_iterations) {
  const I n = static_cast<I>(Q.size()) / d, m = static_cast<I>(K.size()) / d;
  typename Sys::template vector<double> q(Q.begin(), Q.end()), k(K.begin(), K.end()), v(m), u(n);
  std::vector<double> host(static_cast<std::size_t>(std::max(n, m)), 1.0);
  const auto norm = [](const std::vector<double>& x, I size) {
    double s = 0;
    for (I i = 0; i < size; ++i) s += x[static_cast<std::size_t>(i)] * x[static_cast<std::size_t>(i)];
    return std::sqrt(s);
  };
  const double scale = 1 / (2 * std::sqrt(double(d)));
  SpectralResult r;
  const auto set_unit_v = [&] {  // v ← host[0, m) / ‖host[0, m)‖
    const double v_norm = norm(host, m);
    for (I j = 0; j < m; ++j) host[static_cast<std::size_t>(j)] /= v_norm;
    thrust::copy(host.begin(), host.begin() + m, v.begin());
  };
  set_unit_v();
  for (r.iterations = 1; r.iterations <= max_iterations; ++r.iterations) {
    for_each_index(sys, n,
                   GaussianKernelTimes{raw<double>(q), raw<double>(k), raw<double>(v), m, d, scale, raw<double>(u)});
    thrust::copy(u.begin(), u.end(), host.begin());
    const double estimate = norm(host, n);  // ‖Sv‖ for unit v rises to σ₁
    const bool converged = std::abs(estimate - r.value) <= tolerance * estimate;
    r.value = estimate;
    if (converged) {
      r.converged = true;
      break;
    }
    for_each_index(sys, m,
                   GaussianKernelTimes{raw<double>(k), raw<double>(q), raw<double>(u), n, d, scale, raw<double>(v)});
    thrust::copy(v.begin(), v.end(), host.begin());
    set_unit_v();
  }
  r.iterations = std::min(r.iterations, max_iterations);
  return r;
}

// A System and the buffers of both precisions, kept across calls of accel::Engine (buffers only grow).
template <class Sys>
struct Session final : detail::Backend {
  Sys sys;
  bool has_fused_kernel() const override { return Sys::has_fused; }
  Workspace<Sys, float> single;
  Workspace<Sys, double> dual;
  // One precision's buffers at a time: the memory limit is for one workspace.
  std::vector<AttentionNormsSquared> trial_norms(const Problem& p, const Options& o,
                                                 const Progress& progress) override {
    if (p.single_precision) {
      dual = {};
      return engine::trial_norms(sys, single, p, o, progress);
    }
    single = {};
    return engine::trial_norms(sys, dual, p, o, progress);
  }
  void refuse_what_cannot_fit(const Problem& p, const Options& o) override {
    if (p.single_precision) plan_batches<Sys, float>(sys, p, o);
    else plan_batches<Sys, double>(sys, p, o);
  }
  Sample draw(const Problem& p, std::uint32_t trial) override {
    return p.single_precision ? engine::draw<Sys, float>(sys, p, trial) : engine::draw<Sys, double>(sys, p, trial);
  }
  SpectralResult gaussian_kernel_norm(const std::vector<double>& Q, const std::vector<double>& K, I d, double tolerance,
                                      int max_iterations) override {
    return engine::gaussian_kernel_norm(sys, Q, K, d, tolerance, max_iterations);
  }
};

}  // namespace attnlab::accel::engine
