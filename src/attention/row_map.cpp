#include <attnlab/attention/row_map.hpp>
#include <attnlab/core/text.hpp>

#include <omp.h>

#include <stdexcept>

namespace attnlab {

void RowJacobian::jvp(const double* t, double* out) const {
  const Index n = diag.size();
  Eigen::Map<VectorD> o(out, n);
  const Eigen::Map<const VectorD> v(t, n);
  o = diag.cwiseProduct(v);
  for (int k = 0; k < rank; ++k) o += left[k] * right[k].dot(v);
}

void RowJacobian::vjp(const double* t, double* out) const {
  const Index n = diag.size();
  Eigen::Map<VectorD> o(out, n);
  const Eigen::Map<const VectorD> v(t, n);
  o = diag.cwiseProduct(v);
  for (int k = 0; k < rank; ++k) o += right[k] * left[k].dot(v);
}

double RowJacobian::frob2() const {
  // Σ_j J_jj² + Σ_j Σ_{m≠j} (Σ_k l_kj r_km)², with each Σ_{m≠j} r_km r_lm summed from the other entries
  // only (prefix + suffix): expanding ‖diag + low rank‖² instead cancels catastrophically when one entry
  // dominates (one-hot softmax rows, sirenmax at a pole).
  const Index n = diag.size();
  double f = 0;  // Σ_j J_jj², as diagonal() without its allocation
  for (Index j = 0; j < n; ++j) {
    double jj = diag[j];
    for (int k = 0; k < rank; ++k) jj += left[k][j] * right[k][j];
    f += jj * jj;
  }
  thread_local VectorD others;
  others.resize(n);
  for (int k = 0; k < rank; ++k)
    for (int l = k; l < rank; ++l) {
      double before = 0;
      for (Index j = 0; j < n; ++j) others[j] = before, before += right[k][j] * right[l][j];
      double after = 0;
      for (Index j = n - 1; j >= 0; --j) others[j] += after, after += right[k][j] * right[l][j];
      f += (k == l ? 1 : 2) * (left[k].cwiseProduct(left[l])).dot(others);
    }
  return f;
}

double RowJacobian::frob2_times(const MatrixD& W, const VectorD& w2) const {
  return attnlab::frob2_times(std::span<const RowJacobian>(this, 1), W, w2)[0];
}

VectorD frob2_times(std::span<const RowJacobian> rows, const MatrixD& W, const VectorD& w2) {
  const Index nr = static_cast<Index>(rows.size()), n = W.rows();
  const int rank = rows.empty() ? 0 : rows[0].rank;
  MatrixD sq(nr, n);
  std::array<MatrixD, 3> right, scaled_left;  // rows r_k and a∘l_k of every row Jacobian
  for (int k = 0; k < rank; ++k) right[k].resize(nr, n), scaled_left[k].resize(nr, n);
  for (Index i = 0; i < nr; ++i) {
    const auto& J = rows[static_cast<std::size_t>(i)];
    sq.row(i) = J.diag.cwiseAbs2().transpose();
    for (int k = 0; k < rank; ++k) {
      right[k].row(i) = J.right[k].transpose();
      scaled_left[k].row(i) = J.diag.cwiseProduct(J.left[k]).transpose();
    }
  }
  VectorD f = sq * w2;
  std::array<MatrixD, 3> wr;
  for (int k = 0; k < rank; ++k) wr[k] = right[k] * W;
  for (int k = 0; k < rank; ++k) {
    f += 2 * (scaled_left[k] * W).cwiseProduct(wr[k]).rowwise().sum();
    for (int l = 0; l < rank; ++l)
      for (Index i = 0; i < nr; ++i) {
        const auto& J = rows[static_cast<std::size_t>(i)];
        f[i] += J.left[k].dot(J.left[l]) * wr[k].row(i).dot(wr[l].row(i));
      }
  }
  return f;
}

VectorD RowJacobian::diagonal() const {
  VectorD d = diag;
  for (int k = 0; k < rank; ++k) d += left[k].cwiseProduct(right[k]);
  return d;
}

MatrixD RowJacobian::times(const MatrixD& W) const {
  MatrixD out = diag.asDiagonal() * W;
  for (int k = 0; k < rank; ++k) out += left[k] * (W.transpose() * right[k]).transpose();
  return out;
}

MatrixD RowJacobian::dense() const {
  MatrixD J = diag.asDiagonal();
  for (int k = 0; k < rank; ++k) J += left[k] * right[k].transpose();
  return J;
}

namespace {

// z = (x − x̄)/σ with σ = sqrt(var x + a²·eps)/a (a = 1, or the logit scale c for demo.py's placement), and
// its Jacobian P = (I − 11ᵀ/n − w zzᵀ)/σ with w = 1/((n−1)a²).
struct Prenorm {
  VectorD z;
  double sigma = 1;
  double zz_weight = 1;
};

double prenorm_gain(const Activation& a) { return a.transforms.prenorm_before_scaling ? logit_scale(a) : 1.0; }

void standardise(const double* x, Index n, double eps, double gain, Prenorm& out) {
  if (n < 2) throw std::invalid_argument(text("prenorm needs rows of at least 2 entries (got ", n, ")"));
  const Eigen::Map<const VectorD> v(x, n);
  const double mean = v.mean();
  const double var = (v.array() - mean).square().sum() / double(n - 1);
  out.sigma = std::sqrt(var + gain * gain * eps) / gain;
  out.z = (v.array() - mean) / out.sigma;
  out.zz_weight = 1 / (double(n - 1) * gain * gain);
}

// J_z·P with P symmetric: diag(a)P adds two rank-one terms, l rᵀP = l (Pr)ᵀ.
void compose_with_prenorm(const Prenorm& pn, RowJacobian& J) {
  const Index n = J.diag.size();
  const double inv = 1 / pn.sigma;
  for (int k = 0; k < J.rank; ++k) {
    const double mean = J.right[k].mean(), along = J.right[k].dot(pn.z) * pn.zz_weight;
    J.right[k] = inv * (J.right[k].array() - mean).matrix() - (inv * along) * pn.z;
  }
  const int r = J.rank;
  J.left[r] = -J.diag * (inv / double(n));
  J.right[r] = VectorD::Ones(n);
  J.left[r + 1] = -J.diag.cwiseProduct(pn.z) * (inv * pn.zz_weight);
  J.right[r + 1] = pn.z;
  J.rank = r + 2;
  J.diag *= inv;
}

// g and g' of a row x into g and dg; returns Σg.
template <RowNormalised F>
double row_terms(const double* x, Index n, double logit_scale, double* g, double* dg) {
  RowConstants constants{.shift = 0.0, .logit_scale = logit_scale};
  if constexpr (F == RowNormalised::softmax) constants.shift = Eigen::Map<const VectorD>(x, n).maxCoeff();
#pragma omp simd
  for (Index j = 0; j < n; ++j) evaluate_row<F>(x[j], constants, g[j], dg[j]);
  double G = 0;
#pragma omp simd reduction(+ : G)
  for (Index j = 0; j < n; ++j) G += g[j];
  return G;
}

// The first index of the largest |v_j| (the last if none compares equal: a NaN row), by a vectorised maximum and a
// scan eight entries at a time: Eigen's maxCoeff(&index) is scalar.
Index largest_magnitude(const VectorD& v) {
  const Index n = v.size();
  const double largest = v.cwiseAbs().maxCoeff();
  Index at = 0;
  for (; at + 8 <= n; at += 8) {
    bool hit = false;
    for (int k = 0; k < 8; ++k) hit |= std::abs(v[at + k]) == largest;
    if (hit) break;
  }
  while (at < n - 1 && !(std::abs(v[at]) == largest)) ++at;
  return at;
}

// ‖J‖_F² = Σ_j r_j²(1 − s_j)² + Σ_j s_j² Σ_{m≠j} r_m² with s = g/G, r = g'/G, where two sums could cancel:
// 1 − s_j = (G − g_j)/G at the largest g_j is taken from the sum of the other g; and Σ_{m≠j} r_m² is the sum of the
// others at the largest |r_j| (the top) and R + r_top² − r_j² elsewhere, R = Σ_{m≠top} r_m², where r_j² ≤ (R +
// r_top²)/2 keeps the subtraction within a factor 2.
RowNorms normalised_row_norms(const VectorD& g, const VectorD& dg, double G) {
  const Index n = g.size();
  const Index top_g = largest_magnitude(g), top_r = largest_magnitude(dg);
  double frob2 = 0, diagonal = 0, others_g = 0, R = 0, S = 0, T = 0;
#pragma omp simd reduction(+ : frob2, diagonal, others_g, R, S, T)
  for (Index j = 0; j < n; ++j) {
    const double s = g[j] / G, r = dg[j] / G, s2 = s * s, r2 = r * r, jj = r * ((G - g[j]) / G);
    frob2 += s2;
    diagonal += j == top_g ? 0.0 : jj * jj;
    others_g += j == top_g ? 0.0 : g[j];
    R += j == top_r ? 0.0 : r2;
    S += j == top_r ? 0.0 : s2;
    T += j == top_r ? 0.0 : s2 * r2;
  }
  const double jj_top = dg[top_g] / G * (others_g / G), s_top = g[top_r] / G, r_top = dg[top_r] / G;
  return {frob2, diagonal + jj_top * jj_top + s_top * s_top * R + (R + r_top * r_top) * S - T};
}

}  // namespace

void elementwise_terms(const ElementwiseActivation& a, const double* s, Index n, double* h, double* dh) {
  if (a.fn == Elementwise::formula) return a.formula->evaluate(s, n, h, dh);
  with_elementwise(a.fn, a.p, [&]<Elementwise F, int P>() {
#pragma omp simd
    for (Index j = 0; j < n; ++j) evaluate<F, P>(s[j], a.p, h[j], dh[j]);
  });
}

double row_terms(const RowActivation& a, const double* x, Index n, double* g, double* dg) {
  if (a.fn == RowNormalised::formula) {
    a.formula->evaluate(x, n, g, dg);
    return Eigen::Map<const VectorD>(g, n).sum();
  }
  return with_row_normalised(a.fn, [&]<RowNormalised F>() { return row_terms<F>(x, n, a.logit_scale, g, dg); });
}

void row_forward(const Activation& act, const double* x, Index n, double* y, RowJacobian* J, double* scale_grad) {
  thread_local Prenorm pn;
  const double* z = x;
  if (act.transforms.prenorm) {
    standardise(x, n, act.transforms.prenorm_eps, prenorm_gain(act), pn);
    z = pn.z.data();
  }
  if (J) {
    J->diag.resize(n);
    J->rank = 0;
  }
  if (const auto* e = std::get_if<ElementwiseActivation>(&act.fn)) {
    thread_local VectorD h, dh;
    h.resize(n);
    dh.resize(n);
    elementwise_terms(*e, z, n, h.data(), dh.data());
    for (Index j = 0; j < n; ++j) {
      y[j] = e->out_scale * h[j];
      if (J) J->diag[j] = e->out_scale * dh[j];
      if (scale_grad) scale_grad[j] = h[j];
    }
  } else {
    if (scale_grad) throw std::invalid_argument("a learned scale applies to elementwise activations only");
    const auto& row = std::get<RowActivation>(act.fn);
    thread_local VectorD dg;
    dg.resize(n);
    const double G = row_terms(row, z, n, y, dg.data());
    for (Index j = 0; j < n; ++j) y[j] /= G;
    if (J) {
      J->diag = dg / G;
      J->left[0] = -Eigen::Map<const VectorD>(y, n);
      J->right[0] = J->diag;
      J->rank = 1;
    }
  }
  if (J && act.transforms.prenorm) compose_with_prenorm(pn, *J);
}

RowNorms normalised_row_norms(const RowActivation& a, const double* x, Index n) {
  if (n == 0) return {};
  thread_local VectorD g, dg;
  g.resize(n);
  dg.resize(n);
  const double G = row_terms(a, x, n, g.data(), dg.data());
  return normalised_row_norms(g, dg, G);
}

namespace {

template <Elementwise F, int P>
void elementwise_row(const ElementwiseActivation& a, const double* s, const double* t, Index n, double* y, double* jt) {
  const double os = a.out_scale;
#pragma omp simd
  for (Index j = 0; j < n; ++j) {
    double h, dh;
    evaluate<F, P>(s[j], a.p, h, dh);
    y[j] = os * h;
    jt[j] = os * dh * t[j];
  }
}

// Jt = (g'∘t − s (g'·t))/G
template <RowNormalised F>
void normalised_row(const double* x, const double* t, Index n, double logit_scale, double* y, double* jt) {
  RowConstants constants{.shift = 0.0, .logit_scale = logit_scale};
  if constexpr (F == RowNormalised::softmax) constants.shift = Eigen::Map<const VectorD>(x, n).maxCoeff();
  double G = 0, dgt = 0;
#pragma omp simd reduction(+ : G, dgt)
  for (Index j = 0; j < n; ++j) {
    double g, dg;
    evaluate_row<F>(x[j], constants, g, dg);
    y[j] = g;
    jt[j] = dg * t[j];
    G += g;
    dgt += jt[j];
  }
  const double inv = 1 / G;
#pragma omp simd
  for (Index j = 0; j < n; ++j) {
    y[j] *= inv;
    jt[j] = (jt[j] - y[j] * dgt) * inv;
  }
}

}  // namespace

void activation_rows(const Activation& a, const MatrixD& S, const MatrixD& T, MatrixD& Y, MatrixD& JT) {
  if (S.rows() != T.rows() || S.cols() != T.cols())
    throw std::invalid_argument(
        text("activation_rows: S is ", S.rows(), "x", S.cols(), " but T is ", T.rows(), "x", T.cols()));
  const Index rows = S.rows(), n = S.cols();
  if (a.transforms.prenorm && n < 2)  // checked here: an exception cannot leave the parallel loop
    throw std::invalid_argument(text("prenorm needs rows of at least 2 entries (got ", n, ")"));
  Y.resize(rows, n);
  JT.resize(rows, n);
  // row(x, t, y, jt) on every row; with prenorm on z = (s − s̄)/σ and its tangent ż = P t.
  const double gain = prenorm_gain(a);
  const auto each_row = [&](auto&& row) {
    if (a.transforms.prenorm) {
#pragma omp parallel for schedule(static) if (!omp_in_parallel() && rows * n > 4096)
      for (Index i = 0; i < rows; ++i) {
        thread_local Prenorm pn;
        thread_local VectorD dz;
        standardise(S.row(i).data(), n, a.transforms.prenorm_eps, gain, pn);
        const Eigen::Map<const VectorD> t(T.row(i).data(), n);
        const double along = pn.z.dot(t) * pn.zz_weight;
        dz = ((t.array() - t.mean()) - along * pn.z.array()) / pn.sigma;
        row(pn.z.data(), dz.data(), Y.row(i).data(), JT.row(i).data());
      }
    } else {
#pragma omp parallel for schedule(static) if (!omp_in_parallel() && rows * n > 4096)
      for (Index i = 0; i < rows; ++i) row(S.row(i).data(), T.row(i).data(), Y.row(i).data(), JT.row(i).data());
    }
  };
  if (const auto* e = std::get_if<ElementwiseActivation>(&a.fn); e && e->fn == Elementwise::formula) {
    each_row([&](const double* s, const double* t, double* y, double* jt) {
      thread_local VectorD dh;
      dh.resize(n);
      e->formula->evaluate(s, n, y, dh.data());
      for (Index j = 0; j < n; ++j) y[j] *= e->out_scale, jt[j] = e->out_scale * dh[j] * t[j];
    });
  } else if (const auto* f = std::get_if<RowActivation>(&a.fn); f && f->fn == RowNormalised::formula) {
    each_row([&](const double* x, const double* t, double* y, double* jt) {
      thread_local VectorD dg;
      dg.resize(n);
      const double G = row_terms(*f, x, n, y, dg.data());
      double dgt = 0;
      for (Index j = 0; j < n; ++j) dgt += (jt[j] = dg[j] * t[j]);
      for (Index j = 0; j < n; ++j) y[j] /= G, jt[j] = (jt[j] - y[j] * dgt) / G;
    });
  } else if (const auto* e = std::get_if<ElementwiseActivation>(&a.fn)) {
    with_elementwise(e->fn, e->p, [&]<Elementwise F, int P>() {
      each_row(
          [&](const double* s, const double* t, double* y, double* jt) { elementwise_row<F, P>(*e, s, t, n, y, jt); });
    });
  } else {
    const auto& f = std::get<RowActivation>(a.fn);
    with_row_normalised(f.fn, [&]<RowNormalised F>() {
      each_row([&](const double* s, const double* t, double* y, double* jt) {
        normalised_row<F>(s, t, n, f.logit_scale, y, jt);
      });
    });
  }
}

}  // namespace attnlab
