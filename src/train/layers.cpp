#include <attnlab/attention/row_map.hpp>
#include <attnlab/core/parallel.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/core/tile_product.hpp>
#include <attnlab/core/vmath.hpp>
#include <attnlab/train/layers.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

namespace attnlab::train {

namespace {

// The elementwise passes go over the threads in chunks of this many values, each chunk one vector loop (a `parallel
// for simd` left GCC calling the scalar erfc and exp on two threads); over_chunks takes flat values, over_row_chunks
// whole rows of `cols` values.
constexpr Index kElementChunk = 16384;
template <class Body>
void over_chunks(Index n, const Body& body) {
  for_each_chunk(n, kElementChunk, body);
}
template <class Body>
void over_row_chunks(Index rows, Index cols, const Body& body) {
  for_each_chunk(rows, std::max<Index>(1, kElementChunk / cols), body);
}

// sum += m's column sums, over the threads in strips of 16 columns where m is large (a bias's gradient was a serial
// pass over all of dy). Eigen sums each packet of columns over the rows on its own and the columns past the last
// packet one by one, so strips that start at whole packets give each column the whole matrix's order and bits. Into
// an aligned temporary first: Eigen vectorises a reduction assigned to an unaligned Map with a peeled head, which
// changes the summation order with the buffer's address.
template <class T, class Expr>
void add_column_sums(const Expr& m, T* sum) {
  constexpr Index kStrip = 16;
  static_assert(kStrip % Eigen::internal::packet_traits<T>::size == 0, "a strip starts at a whole packet");
  const Index strip = m.size() < kElementChunk ? std::max<Index>(1, m.cols()) : kStrip;
  for_each_chunk(m.cols(), strip, [&](Index c0, Index c1) {
    Eigen::Map<RowVector<T>>(sum + c0, c1 - c0) += RowVector<T>(m.middleCols(c0, c1 - c0).colwise().sum());
  });
}

}  // namespace

template <class T>
void linear_forward(const Matrix<T>& x, const T* W, const T* b, Index O, Matrix<T>& y, ProductPrecision precision) {
  y.resize(x.rows(), O);
  packed_product(view_of(x), view_of(W, x.cols(), O), y.data(), O, false, precision);
  if (b)
    over_row_chunks(y.rows(), O, [&](Index r0, Index r1) {
      y.middleRows(r0, r1 - r0).rowwise() += Eigen::Map<const RowVector<T>>(b, O);
    });
}

template <class T>
void add(const Matrix<T>& a, const Matrix<T>& b, Matrix<T>& out) {
  if (a.rows() != b.rows() || a.cols() != b.cols())
    throw std::invalid_argument(text("add: ", a.rows(), "x", a.cols(), " and ", b.rows(), "x", b.cols()));
  out.resize(a.rows(), a.cols());
  const T *pa = a.data(), *pb = b.data();
  T* po = out.data();
  over_chunks(a.size(), [=](Index i0, Index i1) {
#pragma omp simd
    for (Index i = i0; i < i1; ++i) po[i] = pa[i] + pb[i];
  });
}

template <class T>
void linear_backward(const Matrix<T>& dy, const Matrix<T>& x, const T* W, Matrix<T>* dx, T* dW, T* db,
                     ProductPrecision precision) {
  const StridedView<T> w = view_of(W, x.cols(), dy.cols());
  if (dx) {
    dx->resize(dy.rows(), x.cols());
    packed_product(view_of(dy), w.transposed(), dx->data(), x.cols(), false, precision);
  }
  packed_product(view_of(x).transposed(), view_of(dy), dW, dy.cols(), true, precision);
  if (db) add_column_sums(dy, db);
}

namespace {

// The larger of two norms, NaN if either is: a head whose norm is NaN must reach the bounds' check, not vanish.
double max_keeping_nan(double a, double b) { return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b); }

// One row (or head segment) of LayerNorm: z = (x − mean)·rstd, returning (mean, rstd).
template <class T, class In, class Out>
std::pair<T, T> standardise(const In& x, double eps, Out&& z) {
  const T mean = x.mean();
  const T var = (x.array() - mean).square().mean();
  const T rstd = T(1) / std::sqrt(var + T(eps));
  z = (x.array() - mean) * rstd;
  return {mean, rstd};
}

// dx of z = (x − mean)·rstd given dz and z: rstd·(dz − mean(dz) − z·mean(dz∘z)).
template <class T, class G, class Z, class Out>
void standardise_backward(const G& dz, const Z& z, T rstd, Out&& dx) {
  const T mean_g = dz.mean(), mean_gz = (dz.array() * z.array()).mean();
  dx = rstd * (dz.array() - mean_g - z.array() * mean_gz);
}

}  // namespace

template <class T>
void layernorm_forward(const Matrix<T>& x, const T* w, const T* b, double eps, Matrix<T>& y, Vector<T>& mean,
                       Vector<T>& rstd) {
  const Index R = x.rows(), C = x.cols();
  y.resize(R, C);
  mean.resize(R);
  rstd.resize(R);
#pragma omp parallel for schedule(static) if (!omp_in_parallel() && R * C > 16384)
  for (Index r = 0; r < R; ++r) {
    std::tie(mean(r), rstd(r)) = standardise<T>(x.row(r), eps, y.row(r));
    if (w)
      y.row(r).array() = y.row(r).array() * Eigen::Map<const RowVector<T>>(w, C).array() +
                         Eigen::Map<const RowVector<T>>(b, C).array();
  }
}

template <class T>
void layernorm_backward(const Matrix<T>& dy, const Matrix<T>& x, const T* w, const Vector<T>& mean,
                        const Vector<T>& rstd, Matrix<T>& dx, T* dw, T* db) {
  const Index R = x.rows(), C = x.cols();
  dx.resize(R, C);
  thread_local std::vector<T> z_buffer;  // grows only: a warm step allocates nothing
  z_buffer.resize(std::max(z_buffer.size(), static_cast<std::size_t>(R * C)));
  Map<T> z(z_buffer.data(), R, C);
#pragma omp parallel for schedule(static) if (!omp_in_parallel() && R * C > 16384)
  for (Index r = 0; r < R; ++r) {
    z.row(r) = (x.row(r).array() - mean(r)) * rstd(r);
    if (w) {
      thread_local RowVector<T> g;
      g = dy.row(r).cwiseProduct(Eigen::Map<const RowVector<T>>(w, C));
      standardise_backward(g, z.row(r), rstd(r), dx.row(r));
    } else {
      standardise_backward(dy.row(r), z.row(r), rstd(r), dx.row(r));
    }
  }
  if (dw) add_column_sums(dy.cwiseProduct(z), dw);
  if (db) add_column_sums(dy, db);
}

namespace {

template <class T>
void gelu_values(Index n, T* __restrict y, const T* __restrict x) {
#pragma omp simd
  for (Index i = 0; i < n; ++i) {
    const double v = x[i];
    y[i] = T(v * 0.5 * vmath::erfc(-v * 0.70710678118654752));
  }
}

// dx = dy ∘ (Φ(x) + x φ(x))
template <class T>
void gelu_gradients(Index n, T* __restrict dx, const T* __restrict x, const T* __restrict dy) {
#pragma omp simd
  for (Index i = 0; i < n; ++i) {
    const double v = x[i];
    const double cdf = 0.5 * vmath::erfc(-v * 0.70710678118654752),
                 pdf = 0.39894228040143268 * vmath::exp(-0.5 * v * v);
    dx[i] = T(double(dy[i]) * (cdf + v * pdf));
  }
}

// GELU's loops run over whole blocks of kGeluBlock values and the rest through a zero-padded block: every value goes
// through the same vector variants of erfc and exp (a loop's epilogue calls narrower or scalar ones, whose last bits
// can differ), so a value's GELU does not depend on where it lies, and the last block's readout rows (vit.cpp) get the
// bits they get among all tokens.
constexpr Index kGeluBlock = 16;
static_assert(kElementChunk % kGeluBlock == 0);

template <class T, class... In>
void in_whole_blocks(void (*loop)(Index, T*, const In*...), Index n, T* out, const In*... in) {
  const Index whole = n - n % kGeluBlock;
  loop(whole, out, in...);
  if (whole == n) return;
  struct alignas(64) Block {
    T v[kGeluBlock] = {};
  };
  const auto padded = [&](const T* from) {
    Block b;
    std::copy(from + whole, from + n, b.v);
    return b;
  };
  Block result;
  loop(kGeluBlock, result.v, padded(in).v...);
  std::copy(result.v, result.v + (n - whole), out + whole);
}

}  // namespace

template <class T>
void gelu_forward(const Matrix<T>& x, Matrix<T>& y) {
  y.resize(x.rows(), x.cols());
  const T* in = x.data();
  T* out = y.data();
  over_chunks(x.size(), [in, out](Index i0, Index i1) { in_whole_blocks(gelu_values<T>, i1 - i0, out + i0, in + i0); });
}

template <class T>
void gelu_backward(const Matrix<T>& dy, const Matrix<T>& x, Matrix<T>& dx) {
  dx.resize(x.rows(), x.cols());
  const T *in = x.data(), *g = dy.data();
  T* out = dx.data();
  over_chunks(x.size(), [in, g, out](Index i0, Index i1) {
    in_whole_blocks(gelu_gradients<T>, i1 - i0, out + i0, in + i0, g + i0);
  });
}

namespace {

// Below this many multiply-adds per pass a thread team costs more than it saves (and, on a loaded machine,
// a time slice per region).
bool worth_threads(const AttentionShape& s) {
  return !omp_in_parallel() && s.batch > 1 &&
         double(s.batch) * double(s.tokens) * double(s.tokens) * double(s.dim) > 2e5;
}

void check_attention_shape(const AttentionShape& s, Index rows, Index cols, const char* what) {
  if (s.dim % s.heads != 0)
    throw std::invalid_argument(text("attention: dim ", s.dim, " is not divisible by ", s.heads, " heads"));
  if (rows != s.batch * s.tokens || cols != 3 * s.dim)
    throw std::invalid_argument(
        text("attention: ", what, " is ", rows, "x", cols, ", expected ", s.batch * s.tokens, "x", 3 * s.dim));
}

}  // namespace

namespace {

// Attention is formed a block of query rows at a time and never kept: the backward recomputes each block from q and
// k (flash-attention style), so a step holds one block of ϕ per thread, not the B·heads·T² values of every head.
constexpr Index kRowBlock = 64;

// The logits of rows i0 … i0 + rows − 1 of one image and head: scale · q_rows kᵀ.
template <class T, class QRows, class K>
void attention_logits(T scale, const QRows& q_rows, const K& k, Matrix<T>& phi) {
  phi.resize(q_rows.rows(), k.rows());
  phi.noalias() = q_rows * k.transpose();
  phi *= scale;
}

// m4/m2² − 3 of a row's values about their mean (0 for a Gaussian; a constant row has none: 0).
template <class Row>
double excess_kurtosis(const Row& row) {
  const auto x = row.template cast<double>();
  const double mean = x.mean();
  const double m2 = (x.array() - mean).square().mean(), m4 = (x.array() - mean).square().square().mean();
  return m2 > 0 ? m4 / (m2 * m2) - 3 : 0.0;
}

// ϕ of the logits in `phi`, row by row, through the whole-row path: with `J`, each row's Jacobian is handed to
// `each_row(i, J, h)` (h: the learned scale's h(argument), when `h_value` is wanted). Prenorm and the recorded
// norms take this path.
template <class T, class EachRow>
void activation_by_rows(const Activation& activation, Matrix<T>& phi, RowJacobian* J, bool h_value,
                        EachRow&& each_row) {
  thread_local VectorD x, y, h;
  const Index N = phi.cols();
  x.resize(N), y.resize(N), h.resize(N);
  for (Index i = 0; i < phi.rows(); ++i) {
    x = phi.row(i).transpose().template cast<double>();
    row_forward(activation, x.data(), N, y.data(), J, h_value ? h.data() : nullptr);
    phi.row(i) = y.transpose().template cast<T>();
    if (J) each_row(i, *J, h);
  }
}

// The same without prenorm in vector loops over each row (in double, softmax in T): the logits in `phi` become ϕ, and
// with `grad` (dϕ on entry) each row of it becomes Jᵀ dϕ, the gradient of the logits; `dtheta` gathers Σ dϕ∘h for a
// learned scale. Jᵀt is r∘t for elementwise ϕ (r = ϕ') and r∘(t − s·t) for ϕ = s = g/Σg (r = g'/Σg).
template <class T>
void activation_in_place(const Activation& activation, Matrix<T>& phi, Matrix<T>* grad, double* dtheta);

// The same for a formula, a row at a time through its tape in double.
template <class T>
void formula_in_place(const ElementwiseActivation& e, Matrix<T>& phi, Matrix<T>* grad, double* dtheta) {
  thread_local VectorD s, h, dh;
  const Index N = phi.cols();
  s.resize(N), h.resize(N), dh.resize(N);
  double th = 0;
  for (Index i = 0; i < phi.rows(); ++i) {
    T* x = phi.row(i).data();
    s = Eigen::Map<const RowVector<T>>(x, N).template cast<double>().transpose();
    e.formula->evaluate(s.data(), N, h.data(), dh.data());
    for (Index j = 0; j < N; ++j) x[j] = T(e.out_scale * h[j]);
    if (!grad) continue;
    T* t = grad->row(i).data();
    for (Index j = 0; j < N; ++j) {
      th += double(t[j]) * h[j];
      t[j] = T(e.out_scale * dh[j] * double(t[j]));
    }
  }
  if (dtheta) *dtheta += th;
}

template <class T>
void formula_in_place(const RowActivation& r, Matrix<T>& phi, Matrix<T>* grad) {
  thread_local VectorD s, g, dg;
  const Index N = phi.cols();
  s.resize(N), g.resize(N), dg.resize(N);
  for (Index i = 0; i < phi.rows(); ++i) {
    T* x = phi.row(i).data();
    s = Eigen::Map<const RowVector<T>>(x, N).template cast<double>().transpose();
    const double inv = 1 / row_terms(r, s.data(), N, g.data(), dg.data());
    double st = 0;
    for (Index j = 0; j < N; ++j) {
      x[j] = T(g[j] * inv);
      if (grad) st += g[j] * inv * double((*grad)(i, j));
    }
    if (!grad) continue;
    T* t = grad->row(i).data();
    for (Index j = 0; j < N; ++j) t[j] = T(dg[j] * inv * (double(t[j]) - st));
  }
}

template <class T>
void activation_in_place(const Activation& activation, Matrix<T>& phi, Matrix<T>* grad, double* dtheta) {
  const Index rows = phi.rows(), N = phi.cols();
  // Separate loops with and without the gradient, so that each vectorises (through libmvec's exp, sin, cos).
  const auto each_row = [&](auto&& forward, auto&& backward) {
    for (Index i = 0; i < rows; ++i)
      if (grad) backward(phi.row(i).data(), grad->row(i).data());
      else forward(phi.row(i).data());
  };
  if (const auto* e = std::get_if<ElementwiseActivation>(&activation.fn); e && e->fn == Elementwise::formula) {
    formula_in_place(*e, phi, grad, dtheta);
    return;
  }
  if (const auto* r = std::get_if<RowActivation>(&activation.fn); r && r->fn == RowNormalised::formula) {
    formula_in_place(*r, phi, grad);
    return;
  }
  if (const auto* e = std::get_if<ElementwiseActivation>(&activation.fn)) {
    const double os = e->out_scale;
    const int p = e->p;
    with_elementwise(e->fn, p, [&]<Elementwise F, int P>() {
      double th = 0;
      each_row(
          [&](T* x) {
#pragma omp simd
            for (Index j = 0; j < N; ++j) {
              double h, dh;
              evaluate<F, P>(double(x[j]), p, h, dh);
              x[j] = T(os * h);
            }
          },
          [&](T* x, T* t) {
#pragma omp simd reduction(+ : th)
            for (Index j = 0; j < N; ++j) {
              double h, dh;
              evaluate<F, P>(double(x[j]), p, h, dh);
              const double tj = double(t[j]);
              x[j] = T(os * h);
              t[j] = T(os * dh * tj);
              th += tj * h;
            }
          });
      if (dtheta) *dtheta += th;
    });
    return;
  }
  const auto& row = std::get<RowActivation>(activation.fn);
  if (row.fn == RowNormalised::softmax) {
    // In T itself (16 float lanes, libmvec's expf, as PyTorch's float softmax): g = g' = e^{x − max}.
    const auto exp_shifted = [N](T* x) {
      const T top = Eigen::Map<const RowVector<T>>(x, N).maxCoeff();
      T G = 0;
#pragma omp simd reduction(+ : G)
      for (Index j = 0; j < N; ++j) {
        x[j] = vmath::exp(x[j] - top);
        G += x[j];
      }
      return G;
    };
    each_row(
        [&](T* x) {
          const T inv = 1 / exp_shifted(x);
#pragma omp simd
          for (Index j = 0; j < N; ++j) x[j] *= inv;
        },
        [&](T* x, T* t) {
          const T inv = 1 / exp_shifted(x);
          T st = 0;
#pragma omp simd reduction(+ : st)
          for (Index j = 0; j < N; ++j) {
            x[j] *= inv;
            st += x[j] * t[j];
          }
#pragma omp simd
          for (Index j = 0; j < N; ++j) t[j] = x[j] * (t[j] - st);
        });
    return;
  }
  with_row_normalised(row.fn, [&]<RowNormalised F>() {
    thread_local VectorD g_buffer, dg_buffer;
    g_buffer.resize(N), dg_buffer.resize(N);
    double *g = g_buffer.data(), *dg = dg_buffer.data();
    const RowConstants c{.shift = 0.0, .logit_scale = row.logit_scale};
    each_row(
        [&](T* x) {
          double G = 0;
#pragma omp simd reduction(+ : G)
          for (Index j = 0; j < N; ++j) {
            double dg_j;
            evaluate_row<F>(double(x[j]), c, g[j], dg_j);
            G += g[j];
          }
          const double inv = 1 / G;
#pragma omp simd
          for (Index j = 0; j < N; ++j) x[j] = T(g[j] * inv);
        },
        [&](T* x, T* t) {
          double G = 0, gt = 0;
#pragma omp simd reduction(+ : G, gt)
          for (Index j = 0; j < N; ++j) {
            double g_j, dg_j;
            evaluate_row<F>(double(x[j]), c, g_j, dg_j);
            g[j] = g_j, dg[j] = dg_j;
            G += g_j;
            gt += g_j * double(t[j]);
          }
          const double inv = 1 / G, st = gt * inv;
#pragma omp simd
          for (Index j = 0; j < N; ++j) {
            x[j] = T(g[j] * inv);
            t[j] = T(dg[j] * inv * (double(t[j]) - st));
          }
        });
  });
}

}  // namespace

template <class T>
void attention_forward(const Matrix<T>& qkv, const AttentionShape& s, const Activation& activation, Matrix<T>& out,
                       AttentionCache<T>& cache, AttentionNormSums* norms) {
  check_attention_shape(s, qkv.rows(), qkv.cols(), "qkv");
  const Index B = s.batch, N = s.tokens, D = s.dim, H = s.heads, dh = s.head_dim();
  const T scale = T(logit_scale(activation));
  cache.q.resize(B * N, D);
  cache.k.resize(B * N, D);
  over_row_chunks(B * N, D, [&](Index r0, Index r1) {
    cache.q.middleRows(r0, r1 - r0) = qkv.block(r0, 0, r1 - r0, D);
    cache.k.middleRows(r0, r1 - r0) = qkv.block(r0, D, r1 - r0, D);
  });
  if (activation.transforms.qk_layernorm) {
    cache.q_rstd.resize(B * N * H);
    cache.k_rstd.resize(B * N * H);
#pragma omp parallel for schedule(static) if (worth_threads(s))
    for (Index r = 0; r < B * N; ++r)
      for (Index h = 0; h < H; ++h) {
        auto q = cache.q.row(r).segment(h * dh, dh);
        auto k = cache.k.row(r).segment(h * dh, dh);
        cache.q_rstd(r * H + h) = standardise<T>(RowVector<T>(q), activation.transforms.qk_eps, q).second;
        cache.k_rstd(r * H + h) = standardise<T>(RowVector<T>(k), activation.transforms.qk_eps, k).second;
      }
  }
  out.resize(B * N, D);
  std::vector<AttentionNormSums> per_image(static_cast<std::size_t>(B));
#pragma omp parallel for schedule(static) if (worth_threads(s))
  for (Index b = 0; b < B; ++b) {
    thread_local RowJacobian J;
    thread_local Matrix<T> phi;
    for (Index h = 0; h < H; ++h) {
      const auto k = std::as_const(cache.k).block(b * N, h * dh, N, dh);
      const auto v = qkv.block(b * N, 2 * D + h * dh, N, dh);
      double phi2 = 0, jacobian2 = 0, saturated = 0, kurtosis = 0;
      for (Index i0 = 0; i0 < N; i0 += kRowBlock) {
        const Index rows = std::min(kRowBlock, N - i0);
        attention_logits(scale, std::as_const(cache.q).block(b * N + i0, h * dh, rows, dh), k, phi);
        if (norms)
          for (Index i = 0; i < rows; ++i) kurtosis += excess_kurtosis(phi.row(i));
        if (norms || activation.transforms.prenorm)
          activation_by_rows(
              activation, phi, norms ? &J : nullptr, false,
              [&](Index, const RowJacobian& row_jacobian, const VectorD&) {
                jacobian2 += row_jacobian.frob2();
                saturated += double((double(N) * row_jacobian.diagonal().array().abs() < kSaturatedGradient).count());
              });
        else activation_in_place(activation, phi, static_cast<Matrix<T>*>(nullptr), nullptr);
        if (norms) phi2 += phi.template cast<double>().squaredNorm();
        out.block(b * N + i0, h * dh, rows, dh).noalias() = phi * v;
      }
      auto& sums = per_image[static_cast<std::size_t>(b)];
      sums.phi += std::sqrt(phi2);
      sums.jacobian += std::sqrt(jacobian2);
      sums.phi_max = max_keeping_nan(sums.phi_max, std::sqrt(phi2));
      sums.jacobian_max = max_keeping_nan(sums.jacobian_max, std::sqrt(jacobian2));
      sums.saturated += saturated / double(N * N), sums.kurtosis += kurtosis / double(N);
      ++sums.count;
    }
  }
  if (norms)
    for (const auto& p : per_image) {
      norms->phi += p.phi, norms->jacobian += p.jacobian, norms->count += p.count;
      norms->saturated += p.saturated, norms->kurtosis += p.kurtosis;
      norms->phi_max = max_keeping_nan(norms->phi_max, p.phi_max);
      norms->jacobian_max = max_keeping_nan(norms->jacobian_max, p.jacobian_max);
    }
}

template <class T>
void attention_backward(const Matrix<T>& dout, const Matrix<T>& qkv, const AttentionShape& s,
                        const Activation& activation, const AttentionCache<T>& cache, Matrix<T>& dqkv, double* dtheta) {
  check_attention_shape(s, qkv.rows(), qkv.cols(), "qkv");
  const Index B = s.batch, N = s.tokens, D = s.dim, H = s.heads, dh = s.head_dim();
  const T scale = T(logit_scale(activation));
  dqkv.resize(B * N, 3 * D);
  std::vector<double> dtheta_per_image(static_cast<std::size_t>(B), 0.0);
#pragma omp parallel for schedule(static) if (worth_threads(s))
  for (Index b = 0; b < B; ++b) {
    thread_local RowJacobian J;
    thread_local VectorD t, g;
    thread_local Matrix<T> phi, dphi;
    t.resize(N), g.resize(N);
    for (Index h = 0; h < H; ++h) {
      const auto k = cache.k.block(b * N, h * dh, N, dh);
      const auto v = qkv.block(b * N, 2 * D + h * dh, N, dh);
      auto dv = dqkv.block(b * N, 2 * D + h * dh, N, dh);
      auto dk_head = dqkv.block(b * N, D + h * dh, N, dh);
      dv.setZero(), dk_head.setZero();
      for (Index i0 = 0; i0 < N; i0 += kRowBlock) {
        const Index rows = std::min(kRowBlock, N - i0);
        const auto q_rows = cache.q.block(b * N + i0, h * dh, rows, dh);
        const auto d_out = dout.block(b * N + i0, h * dh, rows, dh);
        dphi.noalias() = d_out * v.transpose();
        attention_logits(scale, q_rows, k, phi);
        // dϕ becomes the gradient of the argument row by row, as each row's Jacobian is formed.
        double* image_dtheta = dtheta ? &dtheta_per_image[static_cast<std::size_t>(b)] : nullptr;
        if (activation.transforms.prenorm)
          activation_by_rows(activation, phi, &J, dtheta != nullptr,
                             [&](Index i, const RowJacobian& row_jacobian, const VectorD& h_value) {
                               t = dphi.row(i).transpose().template cast<double>();
                               row_jacobian.vjp(t.data(), g.data());
                               dphi.row(i) = g.transpose().template cast<T>();
                               if (image_dtheta) *image_dtheta += t.dot(h_value);
                             });
        else activation_in_place(activation, phi, &dphi, image_dtheta);
        dv.noalias() += phi.transpose() * d_out;
        dphi *= scale;
        dqkv.block(b * N + i0, h * dh, rows, dh).noalias() = dphi * k;
        dk_head.noalias() += dphi.transpose() * q_rows;
      }
    }
  }
  if (activation.transforms.qk_layernorm) {
#pragma omp parallel for schedule(static) if (worth_threads(s))
    for (Index r = 0; r < B * N; ++r)
      for (Index h = 0; h < H; ++h) {
        auto gq = dqkv.row(r).segment(h * dh, dh);
        auto gk = dqkv.row(r).segment(D + h * dh, dh);
        standardise_backward(RowVector<T>(gq), cache.q.row(r).segment(h * dh, dh), cache.q_rstd(r * H + h), gq);
        standardise_backward(RowVector<T>(gk), cache.k.row(r).segment(h * dh, dh), cache.k_rstd(r * H + h), gk);
      }
  }
  if (dtheta)
    for (double v : dtheta_per_image) *dtheta += v;
}

template <class T>
double cross_entropy_forward(const Matrix<T>& logits, std::span<const int> labels, double smoothing,
                             Matrix<T>& probabilities) {
  const Index B = logits.rows(), C = logits.cols();
  if (static_cast<Index>(labels.size()) != B)
    throw std::invalid_argument(text("cross entropy: ", labels.size(), " labels for ", B, " rows"));
  probabilities.resize(B, C);
  double total = 0;
  for (Index b = 0; b < B; ++b) {
    const int label = labels[static_cast<std::size_t>(b)];
    if (label < 0 || label >= C)
      throw std::invalid_argument(text("cross entropy: label ", label, " outside [0, ", C, ")"));
    const T top = logits.row(b).maxCoeff();
    const Eigen::Array<double, 1, Eigen::Dynamic> shifted = (logits.row(b).array() - top).template cast<double>();
    const double log_sum = std::log(shifted.exp().sum());
    probabilities.row(b) = (shifted - log_sum).exp().template cast<T>();
    // −Σ_c target_c log p_c with target = (1 − ε) onehot + ε/C.
    total -= (1 - smoothing) * (shifted(label) - log_sum) + smoothing / double(C) * (shifted - log_sum).sum();
  }
  return total / double(B);
}

template <class T>
void cross_entropy_backward(const Matrix<T>& probabilities, std::span<const int> labels, double smoothing,
                            Matrix<T>& dlogits) {
  const Index B = probabilities.rows(), C = probabilities.cols();
  dlogits = probabilities.array() - T(smoothing / double(C));
  for (Index b = 0; b < B; ++b) dlogits(b, labels[static_cast<std::size_t>(b)]) -= T(1 - smoothing);
  dlogits /= T(B);
}

#define ATTNLAB_INSTANTIATE_LAYERS(T)                                                                               \
  template void linear_forward<T>(const Matrix<T>&, const T*, const T*, Index, Matrix<T>&, ProductPrecision);       \
  template void linear_backward<T>(const Matrix<T>&, const Matrix<T>&, const T*, Matrix<T>*, T*, T*,                \
                                   ProductPrecision);                                                               \
  template void add<T>(const Matrix<T>&, const Matrix<T>&, Matrix<T>&);                                             \
  template void layernorm_forward<T>(const Matrix<T>&, const T*, const T*, double, Matrix<T>&, Vector<T>&,          \
                                     Vector<T>&);                                                                   \
  template void layernorm_backward<T>(const Matrix<T>&, const Matrix<T>&, const T*, const Vector<T>&,               \
                                      const Vector<T>&, Matrix<T>&, T*, T*);                                        \
  template void gelu_forward<T>(const Matrix<T>&, Matrix<T>&);                                                      \
  template void gelu_backward<T>(const Matrix<T>&, const Matrix<T>&, Matrix<T>&);                                   \
  template void attention_forward<T>(const Matrix<T>&, const AttentionShape&, const Activation&, Matrix<T>&,        \
                                     AttentionCache<T>&, AttentionNormSums*);                                       \
  template void attention_backward<T>(const Matrix<T>&, const Matrix<T>&, const AttentionShape&, const Activation&, \
                                      const AttentionCache<T>&, Matrix<T>&, double*);                               \
  template double cross_entropy_forward<T>(const Matrix<T>&, std::span<const int>, double, Matrix<T>&);             \
  template void cross_entropy_backward<T>(const Matrix<T>&, std::span<const int>, double, Matrix<T>&);

ATTNLAB_INSTANTIATE_LAYERS(float)
ATTNLAB_INSTANTIATE_LAYERS(double)

}  // namespace attnlab::train
