#include <attnlab/attention/row_map.hpp>
#include <attnlab/core/parallel.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/core/tile_product.hpp>
#include <attnlab/norms/attention_norms.hpp>

#include <omp.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <span>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "lanes.hpp"

namespace attnlab {
namespace {

template <class T>
struct Streamed {
  Index N = 0;
  Matrix<T> U, V;              // XQ, XK (layer-normed with qk-layernorm)
  PackedColumns<T> columns;    // V packed for the tiles of S
  VectorD x2, u2, v2;          // ‖x_i‖², ‖u_i‖², ‖v_i‖²
  VectorD u_isigma, v_isigma;  // qk-layernorm: 1/σ of each raw q_i and k_i
  bool qk_layernorm = false;
};

// LayerNorm without affine of each row of W in place; returns the 1/σ of each row.
template <class T>
void layernorm_rows(Eigen::Ref<Matrix<T>> W, Eigen::Ref<VectorD> isigma, double eps) {
  for (Index i = 0; i < W.rows(); ++i) {
    const Eigen::ArrayXd w = W.row(i).template cast<double>().transpose().array();
    const double mu = w.mean();
    isigma[i] = 1 / std::sqrt((w - mu).square().mean() + eps);
    W.row(i) = ((w - mu) * isigma[i]).template cast<T>().transpose();
  }
}

// The squared norm of each row in double. Eigen's cast-then-reduce leaves float rows to a scalar loop (7% of a float
// trial at N = 1024), so float sums its rows in one vector loop; double keeps Eigen's order, and so its bits.
template <class Rows>
void squared_row_norms(const Rows& W, Eigen::Ref<VectorD> out) {
  if constexpr (std::is_same_v<typename Rows::Scalar, double>) {
    out = W.rowwise().squaredNorm();
  } else {
    for (Index i = 0; i < W.rows(); ++i) {
      const auto* w = W.row(i).data();
      double s = 0;
#pragma omp simd reduction(+ : s)
      for (Index k = 0; k < W.cols(); ++k) s += double(w[k]) * double(w[k]);
      out[i] = s;
    }
  }
}

// Per-thread buffers reused across calls: the large per-trial arrays are not reallocated (no page faults).
template <class T>
Streamed<T>& workspace() {
  thread_local Streamed<T> ws;
  return ws;
}

// This thread's rows [r0, r0 + nr) of U, packed for the tile product.
template <class T>
const PackedRows<T>& packed_rows(const Streamed<T>& st, Index r0, Index nr) {
  thread_local PackedRows<T> rows;
  rows.pack(st.U, r0, nr);
  return rows;
}

template <class T>
Matrix<T>& tile_buffer(Index rows, Index cols) {
  thread_local Matrix<T> tile;
  if (tile.rows() != rows || tile.cols() != cols) tile.resize(rows, cols);
  return tile;
}

// U = XQ, V = XK (packed_product: the fma chains Eigen's GEMM forms, at the tile product's rate) and the row norms,
// in parallel over row blocks unless already in a parallel region; V packed for tiles of tile_cols columns.
template <class T>
const Streamed<T>& prepare(const Matrix<T>& X, const Matrix<T>& Q, const Matrix<T>& K, const Transforms& t,
                           Index tile_cols) {
  auto& st = workspace<T>();
  const Index N = X.rows(), rows = 256, blocks = (N + rows - 1) / rows;
  st.N = N;
  st.qk_layernorm = t.qk_layernorm;
  st.u_isigma.resize(t.qk_layernorm ? N : 0);
  st.v_isigma.resize(t.qk_layernorm ? N : 0);
  st.U.resize(N, Q.cols());
  st.V.resize(N, K.cols());
  st.x2.resize(N);
  st.u2.resize(N);
  st.v2.resize(N);
  packed_product(view_of(X), view_of(Q), st.U.data(), st.U.cols());
  packed_product(view_of(X), view_of(K), st.V.data(), st.V.cols());
  for_each_in_parallel(blocks, [&](Index b) {
    const Index r0 = b * rows, nr = std::min(rows, N - r0);
    const auto x = X.middleRows(r0, nr);
    if (t.qk_layernorm) {
      layernorm_rows<T>(st.U.middleRows(r0, nr), st.u_isigma.segment(r0, nr), t.qk_eps);
      layernorm_rows<T>(st.V.middleRows(r0, nr), st.v_isigma.segment(r0, nr), t.qk_eps);
    }
    squared_row_norms(x, st.x2.segment(r0, nr));
    squared_row_norms(st.U.middleRows(r0, nr), st.u2.segment(r0, nr));
    squared_row_norms(st.V.middleRows(r0, nr), st.v2.segment(r0, nr));
  });
  st.columns.pack(st.V, tile_cols);
  return st;
}

// Calls body(c0, nc) once `tile` holds the rows [r0, r0 + nr) of S in its columns [c0, c0 + nc), tile by tile.
template <class T, class Body>
void for_each_tile(const Streamed<T>& st, Index r0, Index nr, Matrix<T>& tile, const Body& body) {
  const auto& u = packed_rows(st, r0, nr);
  for (Index c0 = 0; c0 < st.N; c0 += st.columns.tile_cols()) {
    const Index nc = std::min(st.columns.tile_cols(), st.N - c0);
    tile_product(u, st.columns, c0, nc, tile.data(), tile.cols());
    body(c0, nc);
  }
}

// Over one row m of a tile, ϕ = os·h(ls·m_j): Σϕ, Σϕ², Σϕ'², and with GRADIENTS Σϕ'²v2_j and Σϕ'²x2_j, in double.
struct RowSums {
  double sum = 0, f2 = 0, j2 = 0, q = 0, k = 0;
};
// A formula's h and h' over one row of a tile, by its tape; the fused loops below read them where a built-in h is
// evaluated entry by entry.
struct FormulaRow {
  const double* h = nullptr;
  const double* dh = nullptr;
};
template <Elementwise F, class T>
FormulaRow formula_row(const ElementwiseActivation& a, const T* m, Index n, double ls) {
  if constexpr (F != Elementwise::formula) return {};
  thread_local std::vector<double> s, h, dh;  // capacity kept
  s.resize(static_cast<std::size_t>(n)), h.resize(s.size()), dh.resize(s.size());
#pragma omp simd
  for (Index j = 0; j < n; ++j) s[static_cast<std::size_t>(j)] = ls * static_cast<double>(m[j]);
  a.formula->evaluate(s.data(), n, h.data(), dh.data());
  return {h.data(), dh.data()};
}
template <Elementwise F, int P>
inline void entry(const FormulaRow& row, Index j, double s, int p, double& h, double& dh) {
  if constexpr (F == Elementwise::formula) h = row.h[j], dh = row.dh[j];
  else evaluate<F, P>(s, p, h, dh);
}

// x^p's row sums with the scales taken out of the loop: ϕ = C·m^p and ∂ϕ/∂S = D·m^(p−1) with C = os·ls^p and
// D = os·p·ls^(p−1), so an entry costs 6 multiplies where scaling it costs 10 (x³: 40% of the pass over a tile). The
// unscaled powers (and the scales) leave double's range sooner than the scaled entries: unless every sum, before and
// after scaling, is finite and at least DBL_MIN/ε (where no entry lost more than ε of the sum to subnormals), the row
// returns nullopt and is summed entry by entry, scaled.
template <int P, bool GRADIENTS, class T>
std::optional<RowSums> power_row_sums(const ElementwiseActivation& a, const T* m, Index n, const double* v2,
                                      const double* x2) {
  const int p = P > 0 ? P : a.p;
  double f2 = 0, j2 = 0, q = 0, k = 0, sum = 0;
#pragma omp simd reduction(+ : f2, j2, q, k, sum)
  for (Index j = 0; j < n; ++j) {
    const double mj = static_cast<double>(m[j]);
    double r = 1;  // m^(p−1)
    for (int e = 1; e < p; ++e) r *= mj;
    const double h = r * mj, r2 = r * r;
    sum += h;
    f2 += h * h;
    j2 += r2;
    if constexpr (GRADIENTS) {
      q += r2 * v2[j];
      k += r2 * x2[j];
    }
  }
  double ls_p1 = 1;  // ls^(p−1)
  for (int e = 1; e < p; ++e) ls_p1 *= a.logit_scale;
  const double C = a.out_scale * ls_p1 * a.logit_scale, D = a.out_scale * p * ls_p1;
  const RowSums scaled{C * sum, C * (C * f2), D * (D * j2), D * (D * q), D * (D * k)};
  constexpr double normal = std::numeric_limits<double>::min() / std::numeric_limits<double>::epsilon();
  const auto in_range = [](double x) { return x >= normal && x <= std::numeric_limits<double>::max(); };
  const bool folds = std::isfinite(scaled.sum) && in_range(f2) && in_range(j2) && in_range(scaled.f2) &&
                     in_range(scaled.j2) &&
                     (!GRADIENTS || (in_range(q) && in_range(k) && in_range(scaled.q) && in_range(scaled.k)));
  if (!folds) return std::nullopt;
  return scaled;
}

template <Elementwise F, int P, bool GRADIENTS, class T>
RowSums double_row_sums(const ElementwiseActivation& a, const T* m, Index n, const double* v2, const double* x2) {
  if constexpr (F == Elementwise::power)
    if (const auto r = power_row_sums<P, GRADIENTS>(a, m, n, v2, x2)) return *r;
  const double ls = a.logit_scale, os = a.out_scale;
  const auto row = formula_row<F>(a, m, n, ls);
  double f2 = 0, j2 = 0, q = 0, k = 0, sum = 0;
#pragma omp simd reduction(+ : f2, j2, q, k, sum)
  for (Index j = 0; j < n; ++j) {
    double h, dh;
    entry<F, P>(row, j, ls * static_cast<double>(m[j]), a.p, h, dh);
    const double phi = os * h;
    sum += phi;
    const double g = os * dh;  // ∂ϕ/∂S
    const double g2 = g * g;
    f2 += phi * phi;
    j2 += g2;
    if constexpr (GRADIENTS) {
      q += g2 * v2[j];
      k += g2 * x2[j];
    }
  }
  return {sum, f2, j2, q, k};
}

// One block of rows of the elementwise estimator: S tiles live only in `tile`. With qk-layernorm the
// LayerNorm Jacobians P_i = (I − 11ᵀ/d − y_i y_iᵀ/d)/σ_i enter through ‖P_i v_j‖² and ‖P_j u_i‖², which
// for mean-zero u, v and m = u_i·v_j are (‖v_j‖² − m²(2/d − ‖u_i‖²/d²))/σ_i² and its mirror image.
// Without GRADIENTS the sums of the Q- and K-gradients are skipped and left 0.
template <class T, Elementwise F, int P, bool QKLN, bool GRADIENTS>
AttentionNormsSquared elementwise_rows(const Streamed<T>& st, const ElementwiseActivation& a, Index r0, Index nr,
                                       Matrix<T>& tile) {
  AttentionNormsSquared acc;
  const double ls = a.logit_scale;
  const double dlogit2 = ls * ls;  // ∂S/∂M squared
  const double inv_d = 1.0 / double(st.U.cols());
  // qk-layernorm's per-column weights: ‖x_j‖²/σ_j² and that times (2/d − ‖v_j‖²/d²)
  thread_local VectorD kx, kv;
  if constexpr (QKLN) {
    kx = st.x2.cwiseProduct(st.v_isigma.cwiseAbs2());
    kv = kx.cwiseProduct((2 * inv_d - st.v2.array() * inv_d * inv_d).matrix());
  }
  thread_local std::vector<double> rq, rk, rs;  // capacity kept: no allocation once warm
  rq.assign(static_cast<std::size_t>(nr), 0.0);
  rk.assign(static_cast<std::size_t>(nr), 0.0);
  rs.assign(static_cast<std::size_t>(nr), 0.0);
  for_each_tile(st, r0, nr, tile, [&](Index c0, Index nc) {
    const double* v2 = st.v2.data() + c0;
    const double* x2 = st.x2.data() + c0;
    for (Index i = 0; i < nr; ++i) {
      const T* m = tile.data() + i * tile.cols();
      RowSums r;
      if constexpr (QKLN) {
        const double os = a.out_scale;
        double f2 = 0, j2 = 0, q = 0, k = 0, sum = 0;
        const double u2 = st.u2[r0 + i], beta = 2 * inv_d - u2 * inv_d * inv_d;
        const double *kxj = kx.data() + c0, *kvj = kv.data() + c0;
        const auto row = formula_row<F>(a, m, nc, ls);
#pragma omp simd reduction(+ : f2, j2, q, k, sum)
        for (Index j = 0; j < nc; ++j) {
          const double mm = static_cast<double>(m[j]);
          double h, dh;
          entry<F, P>(row, j, ls * mm, a.p, h, dh);
          const double g2 = os * os * dh * dh;
          sum += os * h;
          f2 += os * os * h * h;
          j2 += g2;
          if constexpr (GRADIENTS) {
            q += g2 * (v2[j] - mm * mm * beta);
            k += g2 * (kxj[j] * u2 - mm * mm * kvj[j]);
          }
        }
        r = {sum, f2, j2, q, k};
      } else {
        r = double_row_sums<F, P, GRADIENTS>(a, m, nc, v2, x2);
      }
      acc.frob2 += r.f2;
      acc.jac2 += r.j2;
      rq[static_cast<std::size_t>(i)] += r.q;
      rk[static_cast<std::size_t>(i)] += r.k;
      rs[static_cast<std::size_t>(i)] += r.sum;
    }
  });
  for (Index i = 0; i < nr; ++i) {
    acc.sum += rs[static_cast<std::size_t>(i)];
    acc.row_sum2 += rs[static_cast<std::size_t>(i)] * rs[static_cast<std::size_t>(i)];
    const double qrow = QKLN ? st.u_isigma[r0 + i] * st.u_isigma[r0 + i] : 1.0;
    acc.qgrad2 += dlogit2 * st.x2[r0 + i] * qrow * rq[static_cast<std::size_t>(i)];
    acc.kgrad2 += dlogit2 * (QKLN ? 1.0 : st.u2[r0 + i]) * rk[static_cast<std::size_t>(i)];
  }
  return acc;
}

// The block of elementwise_rows for a piecewise polynomial on float tiles, without qk-layernorm: h and h' in float,
// each row of a tile summed per lane in float (at most tile.cols()/16 terms a lane). A row's Σϕ goes across its lanes
// (for ΣϕΣϕ); the other sums stay in their lanes, widened to double and weighted by their row's factor, over the rows
// and tiles. A row whose float sums overflow is summed again in double.
template <Elementwise F, int P, bool GRADIENTS>
AttentionNormsSquared float_elementwise_rows(const Streamed<float>& st, const ElementwiseActivation& a, Index r0,
                                             Index nr, Matrix<float>& tile) {
  using lanes::Floats, lanes::Doubles;
  const double ls = a.logit_scale, os = a.out_scale, dlogit2 = ls * ls;
  const float lsf = static_cast<float>(ls);
  thread_local Eigen::VectorXf v2f, x2f;
  thread_local std::vector<double> rs;  // Σϕ of each row, over the tiles; capacity kept
  v2f = st.v2.cast<float>();
  x2f = st.x2.cast<float>();
  rs.assign(static_cast<std::size_t>(nr), 0.0);
  AttentionNormsSquared acc;     // the rows summed in double
  Doubles f2{}, j2{}, q{}, k{};  // the other rows' lanes, of h and h' (os and dlogit2 applied at the end)
  for_each_tile(st, r0, nr, tile, [&](Index c0, Index nc) {
    for (Index i = 0; i < nr; ++i) {
      const float* m = tile.data() + i * tile.cols();
      Floats row_h{}, row_h2{}, row_dh2{}, row_q{}, row_k{};
      // keep: true, or a mask of the lanes in the row
      const auto add = [&](Floats s, Floats v2j, Floats x2j, auto keep) {
        Floats h, dh;
        evaluate<F, P>(lsf * s, a.p, h, dh);
        h = keep ? h : Floats{};
        dh = keep ? dh : Floats{};
        const Floats dh2 = dh * dh;
        row_h += h;
        row_h2 += h * h;
        row_dh2 += dh2;
        if constexpr (GRADIENTS) {
          row_q += dh2 * v2j;
          row_k += dh2 * x2j;
        }
      };
      const float *v2 = v2f.data() + c0, *x2 = x2f.data() + c0;
      Index j = 0;
      for (; j + lanes::kWidth <= nc; j += lanes::kWidth)
        add(lanes::load(m + j), GRADIENTS ? lanes::load(v2 + j) : Floats{}, GRADIENTS ? lanes::load(x2 + j) : Floats{},
            true);
      if (const Index rest = nc - j; rest > 0)
        add(lanes::load_first(m + j, rest), lanes::load_first(v2 + j, rest), lanes::load_first(x2 + j, rest),
            lanes::first_lanes(rest));
      // 0·(the other sums) adds nothing, or NaN where one of them is not finite
      const float row_sum = lanes::sum(row_h + 0 * (row_h2 + row_dh2 + row_q + row_k));
      if (std::isfinite(row_sum)) {
        rs[static_cast<std::size_t>(i)] += os * row_sum;
        f2 += lanes::widened_halves(row_h2);
        j2 += lanes::widened_halves(row_dh2);
        if constexpr (GRADIENTS) {
          q += st.x2[r0 + i] * lanes::widened_halves(row_q);
          k += st.u2[r0 + i] * lanes::widened_halves(row_k);
        }
      } else {
        const auto r = double_row_sums<F, P, GRADIENTS>(a, m, nc, st.v2.data() + c0, st.x2.data() + c0);
        rs[static_cast<std::size_t>(i)] += r.sum;
        acc.frob2 += r.f2;
        acc.jac2 += r.j2;
        acc.qgrad2 += dlogit2 * st.x2[r0 + i] * r.q;
        acc.kgrad2 += dlogit2 * st.u2[r0 + i] * r.k;
      }
    }
  });
  acc.frob2 += os * os * lanes::sum(f2);
  acc.jac2 += os * os * lanes::sum(j2);
  acc.qgrad2 += dlogit2 * os * os * lanes::sum(q);
  acc.kgrad2 += dlogit2 * os * os * lanes::sum(k);
  for (const double row_sum : rs) {
    acc.sum += row_sum;
    acc.row_sum2 += row_sum * row_sum;
  }
  return acc;
}

// K-side of qk-layernorm for any row Jacobian J (∂ϕ/∂S of row i, m its unscaled logits):
//   Σ_j ‖Σ_l J_jl x̃_l ⊗ (u_i − v_l m_l/d)‖² = ‖u_i‖²‖JX̃‖² − (2/d)⟨JX̃, J diag(m²) X̃⟩ + tr(J G Jᵀ)/d²
// with x̃_l = x_l/σ_l and G = diag(m) K₂ diag(m), K₂_ll' = (x̃_l·x̃_l')(v_l·v_l'). K₂ is applied as
// K₂w = rowsum((X̃ B) ∘ V), B = X̃ᵀ diag(w) V, so nothing N×N is formed: O(N·D·d) per row.
double qk_layernorm_k_spread(const RowJacobian& J, const VectorD& m, const MatrixD& Xt, const VectorD& xt2,
                             const MatrixD& Vd, double u2) {
  const double inv_d = 1.0 / double(Vd.cols());
  const VectorD m2 = m.cwiseAbs2();
  const MatrixD JX = J.times(Xt), JDX = J.times(m2.asDiagonal() * Xt);
  const auto G = [&](const VectorD& y) -> VectorD {
    const VectorD w = m.cwiseProduct(y);
    const MatrixD B = Xt.transpose() * (w.asDiagonal() * Vd);
    return m.cwiseProduct(((Xt * B).cwiseProduct(Vd)).rowwise().sum());
  };
  std::array<VectorD, 3> Gr;
  for (int k = 0; k < J.rank; ++k) Gr[k] = G(J.right[k]);
  const VectorD Gdiag = m2.cwiseProduct(xt2).cwiseProduct(Vd.rowwise().squaredNorm());
  double trace = J.diag.cwiseAbs2().dot(Gdiag);
  for (int k = 0; k < J.rank; ++k) {
    trace += 2 * J.diag.cwiseProduct(J.left[k]).dot(Gr[k]);
    for (int l = 0; l < J.rank; ++l) trace += J.left[k].dot(J.left[l]) * J.right[k].dot(Gr[l]);
  }
  return u2 * JX.squaredNorm() - 2 * inv_d * JX.cwiseProduct(JDX).sum() + inv_d * inv_d * trace;
}

// One block of full rows for row-normalised ϕ or any ϕ with prenorm (a row needs all its logits), from
// each row's structured Jacobian: Σ_j ‖Σ_l J_jl w_l‖² = ‖J W‖_F² for W = V (Q side) and X (K side), with `gradients`.
template <class T>
AttentionNormsSquared row_block(const MatrixD& Xd, const MatrixD& Vd, const MatrixD& Xt, const VectorD& xt2,
                                const Streamed<T>& st, const Activation& a, bool gradients, Index r0, Index nr,
                                Matrix<T>& tile) {
  const double c = logit_scale(a), inv_d = 1.0 / double(Vd.cols());
  const auto& u = packed_rows(st, r0, nr);
  for (Index c0 = 0; c0 < st.N; c0 += st.columns.tile_cols())
    tile_product(u, st.columns, c0, std::min(st.columns.tile_cols(), st.N - c0), tile.data() + c0, tile.cols());
  const auto t = tile.topLeftCorner(nr, st.N);
  // without gradients or prenorm a row-normalised row needs only its two norms
  const auto* normalised = std::get_if<RowActivation>(&a.fn);
  const bool norms_only = !gradients && normalised && !a.transforms.prenorm;
  thread_local std::vector<RowJacobian> J;
  thread_local VectorD x, phi;
  if (J.size() < static_cast<std::size_t>(nr)) J.resize(static_cast<std::size_t>(nr));  // never shrunk: no reallocation
  x.resize(st.N);
  phi.resize(st.N);
  AttentionNormsSquared acc;
  for (Index i = 0; i < nr; ++i) {
    x = c * t.row(i).template cast<double>().transpose();
    if (norms_only) {
      const auto r = normalised_row_norms(*normalised, x.data(), st.N);
      acc.frob2 += r.frob2;
      acc.jac2 += r.jac2;
      const double row_sum = std::isfinite(r.frob2) ? 1.0
                                                    : r.frob2;  // Σs = 1; not finite where the Jacobian path's is not
      acc.sum += row_sum;
      acc.row_sum2 += row_sum * row_sum;
      continue;
    }
    auto& Ji = J[static_cast<std::size_t>(i)];
    row_forward(a, x.data(), st.N, phi.data(), &Ji);
    acc.frob2 += phi.squaredNorm();
    acc.jac2 += Ji.frob2();
    const double row_sum = phi.sum();
    acc.sum += row_sum;
    acc.row_sum2 += row_sum * row_sum;
  }
  if (!gradients) return acc;
  const std::span<const RowJacobian> rows(J.data(), static_cast<std::size_t>(nr));
  const VectorD spread_v = frob2_times(rows, Vd, st.v2);
  const VectorD spread_x = st.qk_layernorm ? VectorD() : frob2_times(rows, Xd, st.x2);
  for (Index i = 0; i < nr; ++i) {
    const auto& Ji = J[static_cast<std::size_t>(i)];
    double q = spread_v[i], k = 0;
    if (st.qk_layernorm) {
      const VectorD m = t.row(i).template cast<double>().transpose();
      VectorD Jm(st.N);
      Ji.jvp(m.data(), Jm.data());
      const double u2 = st.u2[r0 + i], is = st.u_isigma[r0 + i];
      q = is * is * (q - (2 * inv_d - u2 * inv_d * inv_d) * Jm.squaredNorm());
      k = qk_layernorm_k_spread(Ji, m, Xt, xt2, Vd, u2);
    } else {
      k = st.u2[r0 + i] * spread_x[i];
    }
    acc.qgrad2 += c * c * st.x2[r0 + i] * std::max(0.0, q);
    acc.kgrad2 += c * c * std::max(0.0, k);
  }
  return acc;
}

template <class T, class Block>
AttentionNormsSquared over_row_blocks(Index N, Index block_rows, Index tile_cols, const Block& block) {
  const Index blocks = (N + block_rows - 1) / block_rows;
  thread_local std::vector<AttentionNormsSquared> partial_buffer;  // the calling thread's; shared by the team below
  auto& partial = partial_buffer;
  partial.assign(static_cast<std::size_t>(blocks), {});
  for_each_in_parallel(blocks, [&](Index b) {
    const Index r0 = b * block_rows;
    partial[static_cast<std::size_t>(b)] = block(r0, std::min(block_rows, N - r0),
                                                 tile_buffer<T>(block_rows, tile_cols));
  });
  AttentionNormsSquared total;  // summed in block order: identical for any thread count
  for (const auto& p : partial) total += p;
  return total;
}

constexpr double kNegligible = 230;

// One row of a tile against its running maximum: the new maximum mx and, over the entries below it and within
// kNegligible, Σe, Σe², Σe³ with e = exp(x − mx); at_max counts the entries at mx. Every loop is free of branches and
// of conditional loads, which the vectoriser needs: comparisons select constants or stored values.
struct SoftmaxTileRow {
  double mx, e1, e2, e3, at_max;
};
template <class T>
SoftmaxTileRow softmax_tile_row(const T* __restrict m, Index nc, double c, double row_max, double* __restrict y,
                                double* __restrict e) {
  double tile_max = -std::numeric_limits<double>::infinity(), poison = 0;
  // a NaN or +∞ logit makes the row NaN, as exp(x − max) does on the whole-row path (−∞ is a 0 there too)
#pragma omp simd reduction(max : tile_max) reduction(+ : poison)
  for (Index j = 0; j < nc; ++j) {
    const double x = c * static_cast<double>(m[j]);
    tile_max = std::max(tile_max, x);
    poison += x <= std::numeric_limits<double>::max() ? 0.0 : 1.0;
  }
  const double mx = std::max(row_max, tile_max);
  // Separate passes: GCC 12 calls the vector exp only from a loop with nothing else in it. The clamp keeps the vector
  // exp off its scalar path for underflowing arguments.
#pragma omp simd
  for (Index j = 0; j < nc; ++j) {
    const double shifted = c * static_cast<double>(m[j]) - mx;
    y[j] = shifted;
    e[j] = shifted < -kNegligible ? -kNegligible : shifted;  // std::max's reference became a gather from the stack
  }
#pragma omp simd
  for (Index j = 0; j < nc; ++j) e[j] = vmath::exp(e[j]);
#pragma omp simd
  for (Index j = 0; j < nc; ++j) e[j] = y[j] > -kNegligible ? e[j] : 0.0;  // a NaN y too: e is now in [0, 1]
  // x < mx exactly when y < 0 (a difference of unequal doubles is never 0); a NaN y is not below
  double e1 = poison > 0 ? std::numeric_limits<double>::quiet_NaN() : 0.0, e2 = 0, e3 = 0, at_max = 0;
#pragma omp simd reduction(+ : e1, e2, e3, at_max)
  for (Index j = 0; j < nc; ++j) {
    const double below = y[j] < 0 ? 1.0 : 0.0, other = below * e[j], other2 = other * other;
    e1 += other;
    e2 += other2;
    e3 += other2 * other;
    at_max += 1.0 - below;
  }
  return {mx, e1, e2, e3, at_max};
}

// Softmax without its gradients, on the elementwise tile path, from sums streamed across the column tiles (rescaled
// when a row's maximum grows). With e_j = exp(x_j − max) the maximum's e is 1; over the other entries R = Σe,
// A2 = Σe², A3 = Σe³ and Z = 1 + R, so that ‖s‖² = (1 + A2)/Z² and
//   ‖diag(s) − ssᵀ‖_F² = (R² + Z²A2 − 2Z·A3 + 2A2 + A2²)/Z⁴,
// the sum of Σ_j s_j²(1 − s_j)² and Σ_{j≠l} s_j²s_l² with 1 − s_max = R/Z: nothing cancels when a row is one-hot
// (expanding Σs² − 2Σs³ + (Σs²)² would leave rounding of 1 where the answer is near 0). Row sums are 1. Entries more
// than kNegligible below their row's maximum count as 0 (e < 1e-99).
template <class T>
AttentionNormsSquared softmax_rows(const Streamed<T>& st, double c, Index r0, Index nr, Matrix<T>& tile) {
  struct RunningRow {
    double max = -std::numeric_limits<double>::infinity(), R = 0, A2 = 0, A3 = 0;
  };
  thread_local std::vector<RunningRow> rows;  // capacity kept: no allocation once warm
  thread_local std::vector<double> shifted, exps;
  rows.assign(static_cast<std::size_t>(nr), RunningRow{});
  shifted.resize(static_cast<std::size_t>(tile.cols()));
  exps.resize(static_cast<std::size_t>(tile.cols()));
  for_each_tile(st, r0, nr, tile, [&](Index, Index nc) {
    for (Index i = 0; i < nr; ++i) {
      auto& row = rows[static_cast<std::size_t>(i)];
      const auto [mx, e1, e2, e3, at_max] = softmax_tile_row(tile.data() + i * tile.cols(), nc, c, row.max,
                                                             shifted.data(), exps.data());
      double ties = at_max;  // entries equal to the maximum other than the maximum itself (each e = 1)
      if (mx > row.max) {    // the maximum is in this tile: the previous one joins the others with e = exp(old − new)
        const double r = std::exp(row.max - mx);
        row.R = (row.R + 1) * r;
        row.A2 = (row.A2 + 1) * r * r;
        row.A3 = (row.A3 + 1) * r * r * r;
        row.max = mx;
        ties -= 1;
      }
      row.R += e1 + ties;
      row.A2 += e2 + ties;
      row.A3 += e3 + ties;
    }
  });
  AttentionNormsSquared acc;
  for (const auto& [max, R, A2, A3] : rows) {
    const double Z = 1 + R, Z2 = Z * Z;
    acc.frob2 += (1 + A2) / Z2;
    acc.jac2 += (R * R + Z2 * A2 - 2 * Z * A3 + 2 * A2 + A2 * A2) / (Z2 * Z2);
  }
  acc.sum = acc.row_sum2 = static_cast<double>(nr);
  return acc;
}

template <class T>
AttentionNormsSquared elementwise_norms(const Streamed<T>& st, const ElementwiseActivation& a, TileShape tile,
                                        bool gradients) {
  const Index cols = std::min(tile.cols, st.N), rows = std::min(tile.rows, st.N);
  const auto streamed = [&]<Elementwise F, int P>() {
    return over_row_blocks<T>(st.N, rows, cols, [&](Index r0, Index nr, Matrix<T>& buf) {
      if constexpr (std::is_same_v<T, float> && kPiecewisePolynomial<F>)
        if (!st.qk_layernorm)
          return gradients ? float_elementwise_rows<F, P, true>(st, a, r0, nr, buf)
                           : float_elementwise_rows<F, P, false>(st, a, r0, nr, buf);
      if (gradients)
        return st.qk_layernorm ? elementwise_rows<T, F, P, true, true>(st, a, r0, nr, buf)
                               : elementwise_rows<T, F, P, false, true>(st, a, r0, nr, buf);
      return st.qk_layernorm ? elementwise_rows<T, F, P, true, false>(st, a, r0, nr, buf)
                             : elementwise_rows<T, F, P, false, false>(st, a, r0, nr, buf);
    });
  };
  if (a.fn == Elementwise::formula) return streamed.template operator()<Elementwise::formula, 0>();
  return with_elementwise(a.fn, a.p, streamed);
}

}  // namespace

template <class T>
AttentionNormsSquared attention_norms_streamed(const Matrix<T>& X, const Matrix<T>& Q, const Matrix<T>& K,
                                               const Activation& activation, TileShape tile, bool gradients) {
  // checked here: an exception cannot leave the parallel loops
  if (activation.transforms.prenorm && X.rows() < 2)
    throw std::invalid_argument(text("prenorm needs rows of at least 2 entries (got ", X.rows(), ")"));
  if (Q.cols() < 1)
    throw std::invalid_argument(text("the logits need an inner size d of at least 1 (got ", Q.cols(), ")"));
  const auto& st = prepare(X, Q, K, activation.transforms, std::clamp<Index>(X.rows(), 1, tile.cols));
  const auto* elementwise = std::get_if<ElementwiseActivation>(&activation.fn);
  if (elementwise && !activation.transforms.prenorm) return elementwise_norms(st, *elementwise, tile, gradients);
  const auto* row = std::get_if<RowActivation>(&activation.fn);
  if (!gradients && row && row->fn == RowNormalised::softmax && !activation.transforms.prenorm) {
    const Index cols = std::min(tile.cols, st.N), rows = std::min(tile.rows, st.N);
    return over_row_blocks<T>(st.N, rows, cols, [&](Index r0, Index nr, Matrix<T>& buf) {
      return softmax_rows<T>(st, row->logit_scale, r0, nr, buf);
    });
  }
  MatrixD Xd, Vd, Xt;  // Xt with qk-layernorm: x_l/σ_l, σ_l of the raw k_l
  VectorD xt2;
  if (gradients) {
    Xd = X.template cast<double>();
    Vd = st.V.template cast<double>();
  }
  if (gradients && st.qk_layernorm) {
    Xt = st.v_isigma.asDiagonal() * Xd;
    xt2 = st.x2.cwiseProduct(st.v_isigma.cwiseAbs2());
  }
  // Row blocks hold whole rows and, with gradients, several block-sized work matrices per thread: near 1 MB then;
  // without, up to 4 MB (64 rows up to N = 8192).
  const Index block_doubles = gradients ? Index{1} << 17 : Index{1} << 19;
  const Index rows = std::clamp<Index>(block_doubles / std::max<Index>(st.N, 1), 1, tile.rows);
  return over_row_blocks<T>(st.N, rows, st.N, [&](Index r0, Index nr, Matrix<T>& buf) {
    return row_block<T>(Xd, Vd, Xt, xt2, st, activation, gradients, r0, nr, buf);
  });
}

RowNorms row_norms(RowNormalised f, const double* logits, Index n) {
  thread_local RowJacobian J;
  thread_local VectorD s;
  s.resize(n);
  row_forward(Activation{RowActivation{f, 1.0}}, logits, n, s.data(), &J);
  return {s.squaredNorm(), J.frob2()};
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

template AttentionNormsSquared attention_norms_streamed(const Matrix<float>&, const Matrix<float>&,
                                                        const Matrix<float>&, const Activation&, TileShape, bool);
template AttentionNormsSquared attention_norms_streamed(const Matrix<double>&, const Matrix<double>&,
                                                        const Matrix<double>&, const Activation&, TileShape, bool);

}  // namespace attnlab
