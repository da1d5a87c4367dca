#include <attnlab/norms/attention_norms.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <vector>

namespace attnlab {
namespace {

template <class T>
struct Streamed {
  Index N = 0;
  Matrix<T> U, V;      // XQ, XK
  VectorD x2, u2, v2;  // ‖x_i‖², ‖u_i‖², ‖v_i‖²
};

// Per-thread buffers reused across calls: the large per-trial arrays are not reallocated (no page faults).
template <class T>
Streamed<T>& workspace() {
  thread_local Streamed<T> ws;
  return ws;
}

template <class T>
Matrix<T>& tile_buffer(Index rows, Index cols) {
  thread_local Matrix<T> tile;
  if (tile.rows() != rows || tile.cols() != cols) tile.resize(rows, cols);
  return tile;
}

// U = XQ, V = XK and the row norms, in parallel over row blocks unless already in a parallel region.
template <class T>
const Streamed<T>& prepare(const Matrix<T>& X, const Matrix<T>& Q, const Matrix<T>& K) {
  auto& st = workspace<T>();
  const Index N = X.rows(), rows = 256, blocks = (N + rows - 1) / rows;
  st.N = N;
  st.U.resize(N, Q.cols());
  st.V.resize(N, K.cols());
  st.x2.resize(N);
  st.u2.resize(N);
  st.v2.resize(N);
#pragma omp parallel for schedule(static) if (!omp_in_parallel() && blocks > 1)
  for (Index b = 0; b < blocks; ++b) {
    const Index r0 = b * rows, nr = std::min(rows, N - r0);
    const auto x = X.middleRows(r0, nr);
    st.U.middleRows(r0, nr).noalias() = x * Q;
    st.V.middleRows(r0, nr).noalias() = x * K;
    st.x2.segment(r0, nr) = x.template cast<double>().rowwise().squaredNorm();
    st.u2.segment(r0, nr) = st.U.middleRows(r0, nr).template cast<double>().rowwise().squaredNorm();
    st.v2.segment(r0, nr) = st.V.middleRows(r0, nr).template cast<double>().rowwise().squaredNorm();
  }
  return st;
}

// One block of rows of the elementwise estimator: S tiles live only in `tile`.
template <class T, Elementwise F, int P>
AttentionNormsSquared elementwise_rows(const Streamed<T>& st, const ElementwiseActivation& a, Index r0, Index nr,
                                       Matrix<T>& tile) {
  AttentionNormsSquared acc;
  const double ls = a.logit_scale, os = a.out_scale;
  const double dlogit2 = ls * ls;  // ∂S/∂M squared
  std::vector<double> rq(static_cast<std::size_t>(nr), 0.0), rk(static_cast<std::size_t>(nr), 0.0);
  for (Index c0 = 0; c0 < st.N; c0 += tile.cols()) {
    const Index nc = std::min(tile.cols(), st.N - c0);
    auto t = tile.topLeftCorner(nr, nc);
    t.noalias() = st.U.middleRows(r0, nr) * st.V.middleRows(c0, nc).transpose();
    const double* v2 = st.v2.data() + c0;
    const double* x2 = st.x2.data() + c0;
    for (Index i = 0; i < nr; ++i) {
      const T* m = tile.data() + i * tile.cols();
      double f2 = 0, j2 = 0, q = 0, k = 0;
#pragma omp simd reduction(+ : f2, j2, q, k)
      for (Index j = 0; j < nc; ++j) {
        double h, dh;
        evaluate<F, P>(ls * static_cast<double>(m[j]), a.p, h, dh);
        const double phi = os * h;
        const double g = os * dh;  // ∂ϕ/∂S
        const double g2 = g * g;
        f2 += phi * phi;
        j2 += g2;
        q += g2 * v2[j];
        k += g2 * x2[j];
      }
      acc.frob2 += f2;
      acc.jac2 += j2;
      rq[static_cast<std::size_t>(i)] += q;
      rk[static_cast<std::size_t>(i)] += k;
    }
  }
  for (Index i = 0; i < nr; ++i) {
    acc.qgrad2 += dlogit2 * st.x2[r0 + i] * rq[static_cast<std::size_t>(i)];
    acc.kgrad2 += dlogit2 * st.u2[r0 + i] * rk[static_cast<std::size_t>(i)];
  }
  return acc;
}

// Row i of g/Σg with g = g(c·m): P_ij = s_j and R_ij = g'_j/G (for softmax R = P).
void normalise_rows(RowNormalised f, MatrixD& P, MatrixD& R) {
  R.resize(P.rows(), P.cols());
  for (Index i = 0; i < P.rows(); ++i) {
    const double shift = f == RowNormalised::softmax ? P.row(i).maxCoeff() : 0.0;
    for (Index j = 0; j < P.cols(); ++j) evaluate_row(f, P(i, j), shift, P(i, j), R(i, j));
    const double G = P.row(i).sum();
    P.row(i) /= G;
    R.row(i) /= G;
  }
}

// One block of full rows of a row-normalised estimator (a row needs all its logits). With
// J_jl = δ_jl R_j − s_j R_l and w = Σ_l R_l v_l, Σ_j ‖Σ_l J_jl v_l‖² = Σ_j R_j²‖v_j‖² − 2 w·Σ_j s_j R_j v_j + ‖w‖² Σ_j s_j².
template <class T>
AttentionNormsSquared row_normalised_block(const MatrixD& Xd, const MatrixD& Vd, const Streamed<T>& st,
                                           const RowActivation& a, Index r0, Index nr, Matrix<T>& tile) {
  const double c = a.logit_scale;
  auto t = tile.topLeftCorner(nr, st.N);
  t.noalias() = st.U.middleRows(r0, nr) * st.V.transpose();
  MatrixD P = (c * t.template cast<double>()).eval(), R;
  normalise_rows(a.fn, P, R);
  const MatrixD R2 = R.array().square().matrix(), PR = P.cwiseProduct(R);
  const MatrixD wv = R * Vd, yv = PR * Vd, wx = R * Xd, yx = PR * Xd;
  const VectorD rv2 = R2 * st.v2, rx2 = R2 * st.x2;
  AttentionNormsSquared acc;
  for (Index i = 0; i < nr; ++i) {
    const double s2 = P.row(i).squaredNorm(), r2 = R2.row(i).sum();
    acc.frob2 += s2;
    acc.jac2 += r2 - 2 * P.row(i).dot(R2.row(i)) + s2 * r2;
    const double spread_v = rv2[i] - 2 * wv.row(i).dot(yv.row(i)) + wv.row(i).squaredNorm() * s2;
    const double spread_x = rx2[i] - 2 * wx.row(i).dot(yx.row(i)) + wx.row(i).squaredNorm() * s2;
    acc.qgrad2 += c * c * st.x2[r0 + i] * std::max(0.0, spread_v);
    acc.kgrad2 += c * c * st.u2[r0 + i] * std::max(0.0, spread_x);
  }
  return acc;
}

template <class T, class Block>
AttentionNormsSquared over_row_blocks(Index N, Index block_rows, Index tile_cols, const Block& block) {
  const Index blocks = (N + block_rows - 1) / block_rows;
  std::vector<AttentionNormsSquared> partial(static_cast<std::size_t>(blocks));
#pragma omp parallel if (!omp_in_parallel() && blocks > 1)
  {
    auto& tile = tile_buffer<T>(block_rows, tile_cols);
#pragma omp for schedule(dynamic)
    for (Index b = 0; b < blocks; ++b) {
      const Index r0 = b * block_rows;
      partial[static_cast<std::size_t>(b)] = block(r0, std::min(block_rows, N - r0), tile);
    }
  }
  AttentionNormsSquared total;  // summed in block order: identical for any thread count
  for (const auto& p : partial) {
    total.frob2 += p.frob2;
    total.jac2 += p.jac2;
    total.qgrad2 += p.qgrad2;
    total.kgrad2 += p.kgrad2;
  }
  return total;
}

template <class T, Elementwise F, int P = 0>
AttentionNormsSquared elementwise_norms(const Streamed<T>& st, const ElementwiseActivation& a, TileShape tile) {
  const Index cols = std::min(tile.cols, st.N), rows = std::min(tile.rows, st.N);
  return over_row_blocks<T>(st.N, rows, cols, [&](Index r0, Index nr, Matrix<T>& buf) {
    return elementwise_rows<T, F, P>(st, a, r0, nr, buf);
  });
}

template <class T>
AttentionNormsSquared elementwise_norms(const Streamed<T>& st, const ElementwiseActivation& a, TileShape tile) {
  using E = Elementwise;
  switch (a.fn) {
    case E::power:
      switch (a.p) {  // small powers unrolled at compile time
        case 1: return elementwise_norms<T, E::power, 1>(st, a, tile);
        case 2: return elementwise_norms<T, E::power, 2>(st, a, tile);
        case 3: return elementwise_norms<T, E::power, 3>(st, a, tile);
        case 4: return elementwise_norms<T, E::power, 4>(st, a, tile);
        case 5: return elementwise_norms<T, E::power, 5>(st, a, tile);
        default: return elementwise_norms<T, E::power>(st, a, tile);
      }
    case E::relu: return elementwise_norms<T, E::relu>(st, a, tile);
    case E::relu2: return elementwise_norms<T, E::relu2>(st, a, tile);
    case E::gelu: return elementwise_norms<T, E::gelu>(st, a, tile);
    case E::softplus: return elementwise_norms<T, E::softplus>(st, a, tile);
    case E::identity: return elementwise_norms<T, E::identity>(st, a, tile);
    case E::relu6: return elementwise_norms<T, E::relu6>(st, a, tile);
    case E::sigmoid: return elementwise_norms<T, E::sigmoid>(st, a, tile);
    case E::elu: return elementwise_norms<T, E::elu>(st, a, tile);
    case E::tanh: return elementwise_norms<T, E::tanh>(st, a, tile);
    case E::exp: return elementwise_norms<T, E::exp>(st, a, tile);
  }
  throw std::logic_error("unreachable elementwise function");
}

}  // namespace

template <class T>
AttentionNormsSquared attention_norms_streamed(const Matrix<T>& X, const Matrix<T>& Q, const Matrix<T>& K,
                                               const Activation& activation, TileShape tile) {
  const auto& st = prepare(X, Q, K);
  if (const auto* a = std::get_if<ElementwiseActivation>(&activation)) return elementwise_norms(st, *a, tile);
  const auto& row = std::get<RowActivation>(activation);
  const MatrixD Xd = X.template cast<double>(), Vd = st.V.template cast<double>();
  // Row blocks hold whole rows: keep a block near 2 MB.
  const Index rows = std::clamp<Index>((Index{1} << 18) / std::max<Index>(st.N, 1), 1, tile.rows);
  return over_row_blocks<T>(st.N, rows, st.N, [&](Index r0, Index nr, Matrix<T>& buf) {
    return row_normalised_block<T>(Xd, Vd, st, row, r0, nr, buf);
  });
}

RowNorms row_norms(RowNormalised f, const double* logits, Index n) {
  MatrixD P = Eigen::Map<const RowVector<double>>(logits, n), R;
  normalise_rows(f, P, R);
  const double s2 = P.squaredNorm(), r2 = R.squaredNorm();
  return {s2, r2 - 2 * P.row(0).dot(R.array().square().matrix().row(0)) + s2 * r2};
}

RowNorms softmax_row_norms(const double* logits, Index n) { return row_norms(RowNormalised::softmax, logits, n); }

RowNorms softmax_matrix_norms(const MatrixD& A) {
  RowNorms total;
  for (Index i = 0; i < A.rows(); ++i) {
    const auto r = softmax_row_norms(A.row(i).data(), A.cols());
    total.frob2 += r.frob2;
    total.jac2 += r.jac2;
  }
  return total;
}

template AttentionNormsSquared attention_norms_streamed(const Matrix<float>&, const Matrix<float>&, const Matrix<float>&,
                                                        const Activation&, TileShape);
template AttentionNormsSquared attention_norms_streamed(const Matrix<double>&, const Matrix<double>&,
                                                        const Matrix<double>&, const Activation&, TileShape);

}  // namespace attnlab
