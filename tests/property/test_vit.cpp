// The ViT trainer's hand-written backward passes against central finite differences, in double: each layer
// (linear, LayerNorm with and without affine, GELU, cross-entropy with label smoothing, the attention core
// for every registered activation, with prenorm and qk-layernorm) and the whole model for every activation
// family, every parameter.
#include <omp.h>
#include <attnlab/attention/row_map.hpp>
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/train/layers.hpp>
#include <attnlab/train/vit.hpp>

#include "support.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <span>
#include <vector>

using namespace attnlab;
using namespace attnlab::train;

namespace {

struct FiniteDifference {
  double step = 1e-6;  // relative to max(1, |value|)
  double rel = 1e-6;   // central differences: O(step²) truncation, O(ε/step) rounding
  double abs = 1e-8;   // plus this fraction of the largest gradient entry
  // plus this multiple of |fd(h) − fd(2h)|, which estimates 3× the truncation error of fd(h): periodic
  // activations on large logits have third derivatives that make O(step²) visible
  double truncation = 1.0;
};
constexpr FiniteDifference fd_tol{};

MatrixD random_matrix(Index rows, Index cols, std::uint64_t key, double sigma = 1.0) {
  MatrixD M(rows, cols);
  fill_gaussian(M, GaussianStream(test::seed(), hash_words({hash_string("test_vit"), key}), 0, StreamTag::A), sigma);
  return M;
}

// Every entry of `values` perturbed in turn: ∂loss/∂value by central differences against `analytic`.
::testing::AssertionResult matches_finite_differences(std::span<double> values, std::span<const double> analytic,
                                                      const std::function<double()>& loss, const std::string& what) {
  double scale = 0;
  for (double g : analytic) scale = std::max(scale, std::abs(g));
  double worst = 0;
  std::size_t worst_at = 0;
  double worst_fd = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double saved = values[i], h = fd_tol.step * std::max(1.0, std::abs(saved));
    const auto central = [&](double step) {
      values[i] = saved + step;
      const double up = loss();
      values[i] = saved - step;
      const double down = loss();
      values[i] = saved;
      return (up - down) / (2 * step);
    };
    const double fd = central(h);
    double limit = fd_tol.abs * std::max(1.0, scale) + fd_tol.rel * std::abs(fd);
    if (std::abs(analytic[i] - fd) > limit) limit += fd_tol.truncation * std::abs(fd - central(2 * h));
    const double ratio = std::abs(analytic[i] - fd) / limit;
    if (ratio > worst) worst = ratio, worst_at = i, worst_fd = fd;
  }
  if (worst <= 1) return ::testing::AssertionSuccess() << what << ": worst " << 100 * worst << "% of the limit";
  return ::testing::AssertionFailure() << what << ": entry " << worst_at << " analytic " << analytic[worst_at]
                                       << " vs finite difference " << worst_fd << " (" << 100 * worst
                                       << "% of the limit; " << values.size() << " entries)";
}

std::span<double> span_of(MatrixD& M) { return {M.data(), static_cast<std::size_t>(M.size())}; }

// ⟨G, Y⟩ for a fixed random G: the scalar loss whose gradient wrt Y is G.
double contract(const MatrixD& G, const MatrixD& Y) { return G.cwiseProduct(Y).sum(); }

}  // namespace

TEST(VitLayers, LinearBackwardMatchesFiniteDifferences) {
  MatrixD x = random_matrix(7, 5, 1), W = random_matrix(5, 3, 2), b = random_matrix(1, 3, 3);
  const MatrixD G = random_matrix(7, 3, 4);
  const auto loss = [&] {
    MatrixD y;
    linear_forward(x, W.data(), b.data(), 3, y);
    return contract(G, y);
  };
  MatrixD dx, dW = MatrixD::Zero(5, 3), db = MatrixD::Zero(1, 3);
  linear_backward(G, x, W.data(), &dx, dW.data(), db.data());
  EXPECT_TRUE(matches_finite_differences(span_of(x), span_of(dx), loss, "dx"));
  EXPECT_TRUE(matches_finite_differences(span_of(W), span_of(dW), loss, "dW"));
  EXPECT_TRUE(matches_finite_differences(span_of(b), span_of(db), loss, "db"));
}

TEST(VitLayers, LayerNormBackwardMatchesFiniteDifferences) {
  for (bool affine : {true, false}) {
    SCOPED_TRACE(affine ? "affine" : "no affine");
    MatrixD x = random_matrix(6, 9, 5, 2.0), w = random_matrix(1, 9, 6), b = random_matrix(1, 9, 7);
    const MatrixD G = random_matrix(6, 9, 8);
    const auto loss = [&] {
      MatrixD y;
      VectorD mean, rstd;
      layernorm_forward(x, affine ? w.data() : nullptr, affine ? b.data() : nullptr, 1e-6, y, mean, rstd);
      return contract(G, y);
    };
    MatrixD y, dx, dw = MatrixD::Zero(1, 9), db = MatrixD::Zero(1, 9);
    VectorD mean, rstd;
    layernorm_forward(x, affine ? w.data() : nullptr, affine ? b.data() : nullptr, 1e-6, y, mean, rstd);
    layernorm_backward(G, x, affine ? w.data() : nullptr, mean, rstd, dx, affine ? dw.data() : nullptr,
                       affine ? db.data() : nullptr);
    EXPECT_TRUE(matches_finite_differences(span_of(x), span_of(dx), loss, "dx"));
    if (affine) {
      EXPECT_TRUE(matches_finite_differences(span_of(w), span_of(dw), loss, "dw"));
      EXPECT_TRUE(matches_finite_differences(span_of(b), span_of(db), loss, "db"));
    }
  }
}

TEST(VitLayers, GeluBackwardMatchesFiniteDifferences) {
  MatrixD x = random_matrix(4, 11, 9, 2.0);
  const MatrixD G = random_matrix(4, 11, 10);
  const auto loss = [&] {
    MatrixD y;
    gelu_forward(x, y);
    return contract(G, y);
  };
  MatrixD dx;
  gelu_backward(G, x, dx);
  EXPECT_TRUE(matches_finite_differences(span_of(x), span_of(dx), loss, "dx"));
  // GELU(x) = x Φ(x): at x = 1, Φ(1) = 0.841344746068543 (erfc(−1/√2)/2).
  MatrixD one = MatrixD::Ones(1, 1), y;
  gelu_forward(one, y);
  EXPECT_TRUE(test::close(y(0, 0), 0.5 * std::erfc(-1 / std::sqrt(2.0)), test::tol.exact_rel, 0));
}

// A value's GELU and its gradient are the same bits wherever it lies: alone, at the start of a matrix and in its last
// partial block of 16 (where a loop's epilogue would call a narrower or scalar erfc and exp). In double, where
// libmvec's and libm's erfc part in the last bits, and in float.
template <class T>
void expect_gelu_independent_of_position() {
  const Index n = 16 * 3 + 7;
  const Matrix<T> x = random_matrix(1, n, 17, 2.0).cast<T>(), g = random_matrix(1, n, 18).cast<T>();
  Matrix<T> y, dx;
  gelu_forward(x, y);
  gelu_backward(g, x, dx);
  for (Index i = 0; i < n; ++i) {
    const Matrix<T> xi = x.col(i), gi = g.col(i);
    Matrix<T> yi, dxi;
    gelu_forward(xi, yi);
    gelu_backward(gi, xi, dxi);
    ASSERT_EQ(yi(0, 0), y(0, i)) << "GELU of entry " << i;
    ASSERT_EQ(dxi(0, 0), dx(0, i)) << "GELU's gradient at entry " << i;
  }
}
TEST(VitLayers, GeluOfAValueDoesNotDependOnWhereItLies) {
  expect_gelu_independent_of_position<double>();
  expect_gelu_independent_of_position<float>();
}

// The residual stream's adds and the biases over the threads in chunks: Eigen's elementwise results, bit for bit, on
// 1 and 2 threads, over sizes that span several chunks and end in a partial one.
TEST(VitLayers, ChunkedElementwisePassesAreEigensForAnyThreadCount) {
  const int saved_threads = omp_get_max_threads();
  const Matrix<float> a = random_matrix(301, 97, 20).cast<float>(), b = random_matrix(301, 97, 21).cast<float>();
  const Matrix<float> x = random_matrix(301, 24, 22).cast<float>(), W = random_matrix(24, 97, 23).cast<float>();
  const RowVector<float> bias = random_matrix(1, 97, 24).cast<float>();
  Matrix<float> unbiased;
  linear_forward(x, W.data(), static_cast<const float*>(nullptr), 97, unbiased);
  const Matrix<float> biased = unbiased.rowwise() + bias;
  for (const int threads : {1, 2}) {
    omp_set_num_threads(threads);
    Matrix<float> sum, in_place = a, y;
    add(a, b, sum);
    add(in_place, b, in_place);
    linear_forward(x, W.data(), bias.data(), 97, y);
    EXPECT_TRUE(sum == Matrix<float>(a + b)) << threads << " threads";
    EXPECT_TRUE(in_place == sum) << threads << " threads, out = a";
    EXPECT_TRUE(y == biased) << threads << " threads";
  }
  omp_set_num_threads(saved_threads);
  Matrix<float> out;
  EXPECT_THROW(add(a, x, out), std::invalid_argument) << "301x97 and 301x24";
}

// The bias and LayerNorm gradients summed in strips of columns over the threads are Eigen's whole-matrix column sums,
// bit for bit, for widths of whole strips, a partial last strip and under one vector, and for a matrix too small to
// split.
TEST(VitLayers, StripedColumnSumsAreEigensForAnyThreadCount) {
  const int saved_threads = omp_get_max_threads();
  for (const Index C : {1, 10, 32, 42, 192}) {
    const Index R = (C < 16 ? 16384 : 2048) + 3;  // past the size at which the sums are split
    const Matrix<float> dy = random_matrix(R, C, 30).cast<float>(), x = random_matrix(R, 24, 31).cast<float>();
    const Matrix<float> W = random_matrix(24, C, 32).cast<float>(), w = random_matrix(1, C, 33).cast<float>();
    Matrix<float> y, ln_dx;
    Vector<float> mean, rstd;
    layernorm_forward(dy, w.data(), w.data(), 1e-6, y, mean, rstd);
    const Matrix<float> z = (dy.array().colwise() - mean.array()).colwise() * rstd.array();
    const RowVector<float> start = random_matrix(1, C, 34).cast<float>();
    for (const Index rows : {R, Index(5)}) {
      const Matrix<float> part = dy.topRows(rows), x_part = x.topRows(rows);
      const RowVector<float> expected_db = start + RowVector<float>(part.colwise().sum()),
                             expected_ln_dw = start +
                                              RowVector<float>(part.cwiseProduct(z.topRows(rows)).colwise().sum());
      for (const int threads : {1, 2}) {
        omp_set_num_threads(threads);
        const auto where = text(rows, " x ", C, ", ", threads, " threads");
        RowVector<float> db = start, ln_dw = start, ln_db = start, dW(24 * C);
        linear_backward(part, x_part, W.data(), static_cast<Matrix<float>*>(nullptr), dW.data(), db.data());
        layernorm_backward(part, part, static_cast<const float*>(nullptr), mean, rstd, ln_dx, ln_dw.data(),
                           ln_db.data());
        EXPECT_TRUE(db == expected_db) << where << ": the bias's gradient";
        EXPECT_TRUE(ln_db == expected_db) << where << ": LayerNorm's bias";
        EXPECT_TRUE(ln_dw == expected_ln_dw) << where << ": LayerNorm's weight";
      }
    }
  }
  omp_set_num_threads(saved_threads);
}

TEST(VitLayers, CrossEntropyBackwardMatchesFiniteDifferences) {
  for (double smoothing : {0.0, 0.1}) {
    SCOPED_TRACE(text("smoothing ", smoothing));
    MatrixD logits = random_matrix(5, 4, 11, 3.0);
    const std::vector<int> labels{0, 3, 1, 1, 2};
    MatrixD probabilities, dlogits;
    const auto loss = [&] {
      return cross_entropy_forward(logits, std::span<const int>(labels), smoothing, probabilities);
    };
    const double value = loss();
    cross_entropy_backward(probabilities, std::span<const int>(labels), smoothing, dlogits);
    EXPECT_TRUE(matches_finite_differences(span_of(logits), span_of(dlogits), loss, "dlogits"));
    // The loss of uniform logits is log C whatever the labels and the smoothing.
    MatrixD flat = MatrixD::Zero(5, 4);
    EXPECT_TRUE(test::close(cross_entropy_forward(flat, std::span<const int>(labels), smoothing, probabilities),
                            std::log(4.0), test::tol.exact_rel, 0));
    EXPECT_GT(value, 0);
  }
}

// Every registered activation, plain and with each transform, through the attention core.
std::vector<std::string> attention_activation_names() {
  std::vector<std::string> out;
  for (const auto& info : activation_registry())
    for (const char* suffix : {"", "+prenorm", "+prenorm-released", "+qkln"}) out.push_back(info.name + suffix);
  return out;
}

TEST(VitLayers, AttentionBackwardMatchesFiniteDifferencesForEveryActivation) {
  const Index B = 2, N = 5, D = 6, heads = 2;
  const AttentionShape shape{B, N, D, heads};
  for (const auto& name : attention_activation_names()) {
    SCOPED_TRACE(name);
    auto spec = ActivationSpec::parse(name);
    spec.p = 3;
    spec.k = KScale::parse("sqrtN");
    Activation activation = spec.resolve(N, D / heads);
    const bool learned = find_activation(spec.name).learned_scale;
    // Logits of order 1 (sinmax-constant's 10x and the periodic poles make larger ones a rough landscape).
    MatrixD qkv = random_matrix(B * N, 3 * D, 12, 0.7);
    const MatrixD G = random_matrix(B * N, D, 13);
    double theta = learned ? 0.8 : 1.0;
    const auto loss = [&] {
      if (learned) std::get<ElementwiseActivation>(activation.fn).out_scale = theta;
      MatrixD out;
      AttentionCache<double> cache;
      attention_forward(qkv, shape, activation, out, cache);
      return contract(G, out);
    };
    loss();
    MatrixD out, dqkv;
    AttentionCache<double> cache;
    attention_forward(qkv, shape, activation, out, cache);
    double dtheta = 0;
    attention_backward(G, qkv, shape, activation, cache, dqkv, learned ? &dtheta : nullptr);
    EXPECT_TRUE(matches_finite_differences(span_of(qkv), span_of(dqkv), loss, "dqkv"));
    if (learned) {
      std::vector<double> g{dtheta};
      EXPECT_TRUE(matches_finite_differences(std::span<double>(&theta, 1), g, loss, "dtheta"));
    }
  }
}

// The attention output and dqkv of every (image, head) formed and differentiated densely: the whole T × T matrix
// through row_forward's structured Jacobian.
std::pair<MatrixD, MatrixD> dense_attention(const MatrixD& qkv, const MatrixD& G, const AttentionShape& s,
                                            const Activation& activation) {
  const Index N = s.tokens, D = s.dim, dh = s.head_dim();
  MatrixD out(s.batch * N, D), dqkv(s.batch * N, 3 * D);
  for (Index b = 0; b < s.batch; ++b)
    for (Index h = 0; h < s.heads; ++h) {
      const MatrixD q = qkv.block(b * N, h * dh, N, dh), k = qkv.block(b * N, D + h * dh, N, dh);
      const MatrixD v = qkv.block(b * N, 2 * D + h * dh, N, dh), g = G.block(b * N, h * dh, N, dh);
      const MatrixD argument = logit_scale(activation) * q * k.transpose();
      MatrixD phi(N, N), dargument(N, N);
      const MatrixD dphi = g * v.transpose();
      RowJacobian J;
      VectorD x(N), y(N), t(N), out_row(N);
      for (Index i = 0; i < N; ++i) {
        x = argument.row(i).transpose();
        row_forward(activation, x.data(), N, y.data(), &J);
        phi.row(i) = y.transpose();
        t = dphi.row(i).transpose();
        J.vjp(t.data(), out_row.data());
        dargument.row(i) = logit_scale(activation) * out_row.transpose();
      }
      out.block(b * N, h * dh, N, dh) = phi * v;
      dqkv.block(b * N, h * dh, N, dh) = dargument * k;
      dqkv.block(b * N, D + h * dh, N, dh) = dargument.transpose() * q;
      dqkv.block(b * N, 2 * D + h * dh, N, dh) = phi.transpose() * g;
    }
  return {out, dqkv};
}

// The attention core forms ϕ a block of query rows at a time in vector loops (the whole-row path with prenorm) and
// recomputes it in the backward: against the dense reference, with more tokens than one block holds, for every
// registered activation, plain and with prenorm; in double to 1e-12, and in float (softmax computed in float, the
// rest in double from float logits) against the reference at the same float-rounded inputs to 1000 u, u = 2⁻²⁴:
// the logits' rounding (a few u) times ϕ's condition, largest for sinmax, whose Σ sin x may nearly cancel
// (measured: 2e-7 for most, 1e-5 for sinmax and sirenmax with prenorm).
TEST(VitLayers, AttentionRowBlocksEqualTheWholeMatrix) {
  const Index B = 2, N = 150, D = 8, heads = 2;
  const AttentionShape shape{B, N, D, heads};
  const MatrixD qkv = random_matrix(B * N, 3 * D, 15, 0.5), G = random_matrix(B * N, D, 16);
  const Matrix<float> qkv_float = qkv.cast<float>(), G_float = G.cast<float>();
  const double float_tolerance = 1000 * std::ldexp(1.0, -24);
  for (const auto& info : activation_registry())
    for (const char* suffix : {"", "+prenorm"}) {
      const std::string name = info.name + suffix;
      SCOPED_TRACE(name);
      const Activation activation = ActivationSpec::parse(name).resolve(N, D / heads);
      MatrixD out, dqkv;
      AttentionCache<double> cache;
      attention_forward(qkv, shape, activation, out, cache);
      attention_backward(G, qkv, shape, activation, cache, dqkv);
      const auto [out_dense, dqkv_dense] = dense_attention(qkv, G, shape, activation);
      EXPECT_TRUE(test::close((out - out_dense).norm(), 0, 0, 1e-12 * out_dense.norm()));
      EXPECT_TRUE(test::close((dqkv - dqkv_dense).norm(), 0, 0, 1e-12 * dqkv_dense.norm()));

      Matrix<float> out_float, dqkv_float;
      AttentionCache<float> cache_float;
      attention_forward(qkv_float, shape, activation, out_float, cache_float);
      attention_backward(G_float, qkv_float, shape, activation, cache_float, dqkv_float);
      const auto [out_rounded, dqkv_rounded] = dense_attention(qkv_float.cast<double>(), G_float.cast<double>(), shape,
                                                               activation);
      EXPECT_TRUE(
          test::close((out_float.cast<double>() - out_rounded).norm(), 0, 0, float_tolerance * out_rounded.norm()));
      EXPECT_TRUE(
          test::close((dqkv_float.cast<double>() - dqkv_rounded).norm(), 0, 0, float_tolerance * dqkv_rounded.norm()));
    }
}

// With norms recorded: ‖ϕ‖_F of each (image, head) block and the Frobenius norm of its row-block Jacobian, the share
// of its entries with N|∂ϕ_j/∂x_j| < kSaturatedGradient and its rows' mean excess kurtosis, against dense references
// built from q kᵀ and finite differences of single rows.
TEST(VitLayers, AttentionNormsAreTheMeanBlockNorms) {
  const Index B = 2, N = 4, D = 4, heads = 2;
  const AttentionShape shape{B, N, D, heads};
  for (const char* name : {"softmax", "poly"}) {
    SCOPED_TRACE(name);
    const Activation activation = ActivationSpec::parse(name).resolve(N, D / heads);
    const MatrixD qkv = 3 * random_matrix(B * N, 3 * D, 14);  // logits large enough that some entries saturate
    MatrixD out;
    AttentionCache<double> cache;
    AttentionNormSums sums;
    attention_forward(qkv, shape, activation, out, cache, &sums);
    ASSERT_EQ(sums.count, B * heads);
    const Index dh = D / heads;
    double phi = 0, jacobian = 0, saturated = 0, kurtosis = 0, nearest = HUGE_VAL;
    for (Index block = 0; block < B * heads; ++block) {
      const Index b = block / heads, h = block % heads;
      const MatrixD argument = logit_scale(activation) * qkv.block(b * N, h * dh, N, dh) *
                               qkv.block(b * N, D + h * dh, N, dh).transpose();
      double phi2 = 0, j2 = 0;
      for (Index i = 0; i < N; ++i) {
        VectorD x = argument.row(i).transpose(), y(N), yp(N), ym(N);
        row_forward(activation, x.data(), N, y.data());
        phi2 += y.squaredNorm();
        const VectorD centred = x.array() - x.mean();
        const double m2 = centred.array().square().mean(), m4 = centred.array().pow(4).mean();
        kurtosis += (m4 / (m2 * m2) - 3) / double(N);
        for (Index j = 0; j < N; ++j) {  // column j of the row's Jacobian by central differences
          const double h = 1e-6;
          x(j) += h;
          row_forward(activation, x.data(), N, yp.data());
          x(j) -= 2 * h;
          row_forward(activation, x.data(), N, ym.data());
          x(j) += h;
          j2 += ((yp - ym) / (2 * h)).squaredNorm();
          const double gradient = double(N) * std::abs((yp(j) - ym(j)) / (2 * h));
          saturated += gradient < kSaturatedGradient ? 1.0 / double(N * N) : 0;
          nearest = std::min(nearest, std::abs(gradient - kSaturatedGradient));
        }
      }
      phi += std::sqrt(phi2);
      jacobian += std::sqrt(j2);
    }
    EXPECT_TRUE(test::close(sums.phi, phi, test::tol.exact_rel, 0));
    EXPECT_TRUE(test::close(sums.jacobian, jacobian, test::tol.finite_diff_rel, 0));
    EXPECT_TRUE(test::close(sums.kurtosis, kurtosis, test::tol.exact_rel, 1e-12));
    ASSERT_GT(nearest, 1e-6) << "an entry sits on the saturation level: its count would hang on rounding";
    EXPECT_EQ(sums.saturated, saturated);
    EXPECT_GT(saturated, 0) << "no entry saturated: the comparison would be vacuous";
    EXPECT_LT(saturated, double(B * heads)) << "every entry saturated: the comparison would be vacuous";
  }
}

namespace {

VitConfig tiny_config(const std::string& activation) {
  VitConfig c = VitConfig::preset("micro");
  c.image_h = 8, c.image_w = 6, c.channels = 2, c.classes = 3;
  c.patch_h = 4, c.patch_w = 2;  // rectangular: 2 × 3 = 6 patches
  c.dim = 8, c.heads = 2, c.mlp_hidden = 12;
  c.activation = ActivationSpec::parse(activation);
  c.activation.p = 3;
  c.activation.k = KScale::parse("sqrtN");
  return c;
}

}  // namespace

// The whole model, every parameter: softmax, a learned-scale power, an h/N^α, a periodic g/Σg, and both transforms;
// softmax again with the head reading the last token.
TEST(VitModel, GradientMatchesFiniteDifferencesForEveryFamily) {
  for (const char* name : {"softmax", "poly-learned", "relu", "sinsoftmax", "softmax+prenorm", "poly+qkln", "uniform",
                           "off", "softmax@last"}) {
    SCOPED_TRACE(name);
    const std::string spec = name;
    VitConfig config = tiny_config(spec.substr(0, spec.find('@')));
    if (spec.ends_with("@last")) config.readout = Readout::last;
    Vit<double> model(config);
    model.init(test::seed());
    // Larger weights than timm's 0.02 so that every layer's gradient is well above rounding.
    for (double& v : model.parameters()) v *= 10;
    const MatrixD images = random_matrix(3, config.pixels(), 15);
    const std::vector<int> labels{2, 0, 1};
    const auto loss = [&] { return model.forward(images, std::span<const int>(labels), 0.1); };
    loss();
    model.zero_grad();
    model.backward();
    const std::vector<double> analytic(model.gradients().begin(), model.gradients().end());
    EXPECT_TRUE(matches_finite_differences(model.parameters(), analytic, loss, "all parameters"));
  }
}

namespace {

// The model's loss and gradients computed over every token of every block, as the trainer did before its last block
// ran on the readout rows alone: from the layers, with the parameters found by name.
template <class T>
std::pair<double, std::vector<T>> every_token_step(Vit<T>& model, const Matrix<T>& images, std::span<const int> labels,
                                                   double smoothing) {
  const VitConfig& c = model.config();
  std::vector<T> gradients(model.parameters().size(), T(0));
  const auto tensor = [&](std::span<T> buffer, const std::string& name) -> T* {
    for (const TensorInfo& t : model.tensors())
      if (t.name == name) return buffer.data() + t.offset;
    return nullptr;
  };
  const auto P = [&](const std::string& name) { return tensor(model.parameters(), name); };
  const auto G = [&](const std::string& name) { return tensor(gradients, name); };
  const Index B = images.rows(), N = c.tokens(), D = c.dim, read = c.readout_token();
  const Matrix<T> patches = extract_patches(images, c);
  Matrix<T> embedding;
  linear_forward(patches, P("patch_embed.proj.weight"), P("patch_embed.proj.bias"), D, embedding, c.matmul);
  const ConstMap<T> pos(P("pos_embed"), N, D);
  Matrix<T> x(B * N, D);
  for (Index b = 0; b < B; ++b) {
    x.row(b * N) = Eigen::Map<const RowVector<T>>(P("cls_token"), D) + pos.row(0);
    x.middleRows(b * N + 1, N - 1) = embedding.middleRows(b * (N - 1), N - 1) + pos.bottomRows(N - 1);
  }
  struct Saved {
    Matrix<T> input, ln1, qkv, attention, mid, ln2, hidden, gelu;
    Vector<T> m1, r1, m2, r2;
    AttentionCache<T> cache;
    Activation activation;
  };
  std::vector<Saved> saved(static_cast<std::size_t>(c.depth));
  const AttentionShape shape{B, N, D, c.heads};
  for (Index l = 0; l < c.depth; ++l) {
    const std::string b = text("blocks.", l, ".");
    Saved& s = saved[static_cast<std::size_t>(l)];
    s.activation = c.resolved_activation();
    if (const T* scale = P(b + "attn.scale")) std::get<ElementwiseActivation>(s.activation.fn).out_scale = *scale;
    s.input = x;
    layernorm_forward(s.input, P(b + "norm1.weight"), P(b + "norm1.bias"), c.ln_eps, s.ln1, s.m1, s.r1);
    linear_forward(s.ln1, P(b + "attn.qkv.weight"), P(b + "attn.qkv.bias"), 3 * D, s.qkv, c.matmul);
    attention_forward(s.qkv, shape, s.activation, s.attention, s.cache);
    linear_forward(s.attention, P(b + "attn.proj.weight"), P(b + "attn.proj.bias"), D, s.mid, c.matmul);
    add(s.mid, s.input, s.mid);
    layernorm_forward(s.mid, P(b + "norm2.weight"), P(b + "norm2.bias"), c.ln_eps, s.ln2, s.m2, s.r2);
    linear_forward(s.ln2, P(b + "mlp.fc1.weight"), P(b + "mlp.fc1.bias"), c.mlp_hidden, s.hidden, c.matmul);
    gelu_forward(s.hidden, s.gelu);
    linear_forward(s.gelu, P(b + "mlp.fc2.weight"), P(b + "mlp.fc2.bias"), D, x, c.matmul);
    add(x, s.mid, x);
  }
  Matrix<T> final_input(B, D), normed, logits, probabilities, dlogits, dnormed, dfinal;
  Vector<T> mean, rstd;
  for (Index b = 0; b < B; ++b) final_input.row(b) = x.row(b * N + read);
  layernorm_forward(final_input, P("norm.weight"), P("norm.bias"), c.ln_eps, normed, mean, rstd);
  linear_forward(normed, P("head.weight"), P("head.bias"), c.classes, logits, c.matmul);
  const double loss = cross_entropy_forward(logits, labels, smoothing, probabilities);

  cross_entropy_backward(probabilities, labels, smoothing, dlogits);
  linear_backward(dlogits, normed, P("head.weight"), &dnormed, G("head.weight"), G("head.bias"), c.matmul);
  layernorm_backward(dnormed, final_input, P("norm.weight"), mean, rstd, dfinal, G("norm.weight"), G("norm.bias"));
  Matrix<T> dx = Matrix<T>::Zero(B * N, D), dgelu, dhidden, dln2, dmid, dattention, dqkv, dln1, dinput;
  for (Index b = 0; b < B; ++b) dx.row(b * N + read) = dfinal.row(b);
  for (Index l = c.depth - 1; l >= 0; --l) {
    const std::string b = text("blocks.", l, ".");
    const Saved& s = saved[static_cast<std::size_t>(l)];
    linear_backward(dx, s.gelu, P(b + "mlp.fc2.weight"), &dgelu, G(b + "mlp.fc2.weight"), G(b + "mlp.fc2.bias"),
                    c.matmul);
    gelu_backward(dgelu, s.hidden, dhidden);
    linear_backward(dhidden, s.ln2, P(b + "mlp.fc1.weight"), &dln2, G(b + "mlp.fc1.weight"), G(b + "mlp.fc1.bias"),
                    c.matmul);
    layernorm_backward(dln2, s.mid, P(b + "norm2.weight"), s.m2, s.r2, dmid, G(b + "norm2.weight"),
                       G(b + "norm2.bias"));
    add(dmid, dx, dmid);
    linear_backward(dmid, s.attention, P(b + "attn.proj.weight"), &dattention, G(b + "attn.proj.weight"),
                    G(b + "attn.proj.bias"), c.matmul);
    double dtheta = 0;
    attention_backward(dattention, s.qkv, shape, s.activation, s.cache, dqkv, &dtheta);
    if (T* dscale = G(b + "attn.scale")) *dscale += T(dtheta);
    linear_backward(dqkv, s.ln1, P(b + "attn.qkv.weight"), &dln1, G(b + "attn.qkv.weight"), G(b + "attn.qkv.bias"),
                    c.matmul);
    layernorm_backward(dln1, s.input, P(b + "norm1.weight"), s.m1, s.r1, dinput, G(b + "norm1.weight"),
                       G(b + "norm1.bias"));
    add(dinput, dmid, dx);
  }
  Map<T> dpos(G("pos_embed"), N, D);
  Eigen::Map<RowVector<T>> dcls(G("cls_token"), D);
  Matrix<T> dpatch(B * (N - 1), D);
  for (Index b = 0; b < B; ++b) {
    dpos += dx.middleRows(b * N, N);
    dcls += dx.row(b * N);
    dpatch.middleRows(b * (N - 1), N - 1) = dx.middleRows(b * N + 1, N - 1);
  }
  linear_backward(dpatch, patches, P("patch_embed.proj.weight"), static_cast<Matrix<T>*>(nullptr),
                  G("patch_embed.proj.weight"), G("patch_embed.proj.bias"), c.matmul);
  return {loss, gradients};
}

}  // namespace

// The model's step, whose last block runs on the readout rows alone, has the bits of the step over every token: the
// same loss and every gradient entry, in float with native and bf16 products, for both readouts, a learned scale, a
// depth of one and two, a batch of one, 4 tokens (the fewest the row sums' argument holds for), 7 and 65.
TEST(VitModel, ReadoutRowsGiveTheBitsOfEveryToken) {
  struct Case {
    const char* activation;
    Readout readout;
    ProductPrecision matmul;
    Index depth, image_h, image_w, batch;  // 4 × 2 patches: (h/4)(w/2) + 1 tokens
  };
  for (const Case& k : {Case{"softmax", Readout::cls, ProductPrecision::native, 2, 8, 6, 5},
                        Case{"softmax", Readout::last, ProductPrecision::native, 1, 8, 6, 5},
                        Case{"poly-learned", Readout::cls, ProductPrecision::native, 2, 8, 6, 5},
                        Case{"poly+qkln", Readout::last, ProductPrecision::bf16, 2, 8, 6, 5},
                        Case{"softmax", Readout::last, ProductPrecision::bf16, 2, 4, 6, 5},
                        Case{"poly", Readout::cls, ProductPrecision::native, 2, 4, 6, 1},
                        Case{"softmax", Readout::cls, ProductPrecision::bf16, 2, 32, 16, 5},
                        Case{"poly", Readout::last, ProductPrecision::native, 2, 32, 16, 5}}) {
    VitConfig config = tiny_config(k.activation);
    config.readout = k.readout, config.matmul = k.matmul, config.depth = k.depth;
    config.image_h = k.image_h, config.image_w = k.image_w;
    SCOPED_TRACE(text(k.activation, ", readout ", to_string(k.readout), ", ", to_string(k.matmul), ", depth ", k.depth,
                      ", ", config.tokens(), " tokens, batch ", k.batch));
    Vit<float> model(config);
    model.init(test::seed());
    for (float& v : model.parameters()) v *= 10;  // gradients well above rounding in every layer
    const Matrix<float> images = random_matrix(k.batch, config.pixels(), 19).cast<float>();
    constexpr int kLabels[] = {2, 0, 1, 1, 2};
    const std::span<const int> labels(kLabels, static_cast<std::size_t>(k.batch));
    const double loss = model.forward(images, labels, 0.1);
    model.zero_grad();
    model.backward();
    const auto [expected_loss, expected] = every_token_step(model, images, labels, 0.1);
    EXPECT_EQ(loss, expected_loss);
    const std::span<const float> gradients = model.gradients();
    Index nonzero = 0;
    for (std::size_t i = 0; i < expected.size(); ++i) {
      ASSERT_EQ(gradients[i], expected[i]) << "gradient entry " << i << " of " << expected.size();
      nonzero += expected[i] != 0;
    }
    EXPECT_GT(nonzero, Index(expected.size()) / 2) << "most gradients zero: the comparison would be vacuous";
  }
}

// With attention off every token runs through the blocks alone, so the head sees only the token it reads: under
// --readout last the last patch moves the logits and the first does not.
TEST(VitModel, ReadoutLastReadsTheLastToken) {
  VitConfig config = tiny_config("off");
  config.readout = Readout::last;
  Vit<double> model(config);
  model.init(test::seed());
  const MatrixD images = random_matrix(1, config.pixels(), 16);
  const std::vector<int> labels{0};
  const auto logits_with = [&](const MatrixD& x) {
    model.forward(x, std::span<const int>(labels), 0);
    return MatrixD(model.logits());
  };
  const MatrixD base = logits_with(images);
  const auto patch_pixel = [&](Index patch) {  // the first pixel of patch `patch` (row-major patches, channel 0)
    const Index per_row = config.image_w / config.patch_w;
    return (patch / per_row) * config.patch_h * config.image_w + (patch % per_row) * config.patch_w;
  };
  MatrixD first = images, last = images;
  first(0, patch_pixel(0)) += 1;
  last(0, patch_pixel(config.patches() - 1)) += 1;
  EXPECT_EQ((logits_with(first) - base).cwiseAbs().maxCoeff(), 0);
  EXPECT_GT((logits_with(last) - base).cwiseAbs().maxCoeff(), 1e-6);
}

// The controls train no Q or K: their gradients are exactly 0 (qkv's Q and K columns, weight and bias); uniform mixing
// still trains V, attention off neither V (its output is the projection's bias alone).
TEST(VitModel, ControlsLeaveQAndKUntrained) {
  for (const char* name : {"uniform", "off"}) {
    SCOPED_TRACE(name);
    const VitConfig config = tiny_config(name);
    Vit<double> model(config);
    model.init(test::seed());
    const MatrixD images = random_matrix(3, config.pixels(), 17);
    const std::vector<int> labels{2, 0, 1};
    model.forward(images, std::span<const int>(labels), 0.1);
    model.zero_grad();
    model.backward();
    const Index D = config.dim;
    double largest_v = 0;
    for (const auto& t : model.tensors())
      if (t.name.ends_with("attn.qkv.weight") || t.name.ends_with("attn.qkv.bias"))
        for (Index r = 0; r < t.rows; ++r) {
          const auto row = model.gradients().subspan(std::size_t(t.offset + r * t.cols), std::size_t(t.cols));
          for (Index c = 0; c < 2 * D; ++c)
            ASSERT_EQ(row[std::size_t(c)], 0.0) << t.name << " (" << r << ", " << c << ")";
          for (Index c = 2 * D; c < 3 * D; ++c) largest_v = std::max(largest_v, std::abs(row[std::size_t(c)]));
        }
    if (std::string(name) == "off") EXPECT_EQ(largest_v, 0.0);
    else EXPECT_GT(largest_v, 0.0);
  }
}

// --init scales the same normals: every block's Q and K columns are timm's draws times qk_weight_std() / 0.02
// (paired runs), V and every other tensor are timm's, and timm's draws have the standard deviation 0.02 within
// sampling error (4 standard errors of a sample deviation, σ/√(2n)).
TEST(VitModel, QkInitScalesQAndKAlone) {
  for (const char* name : {"softmax", "poly"}) {
    VitConfig config = VitConfig::preset("micro");
    config.activation = ActivationSpec::parse(name);
    config.activation.convention = Convention::none;  // poly's logit scale 1: unit differs from xavier
    Vit<double> timm(config);
    timm.init(test::seed());
    for (const QkInit init : {QkInit::xavier, QkInit::unit}) {
      SCOPED_TRACE(text(name, " ", to_string(init)));
      config.qk_init = init;
      Vit<double> model(config);
      model.init(test::seed());
      for (const auto& t : model.tensors()) {
        const auto at = [&](const Vit<double>& m) {
          return Eigen::Map<const MatrixD>(m.parameters().data() + t.offset, t.rows, t.cols);
        };
        if (t.name.ends_with("attn.qkv.weight")) {
          const Index D = config.dim;
          EXPECT_EQ(at(model).rightCols(D), at(timm).rightCols(D));
          EXPECT_TRUE(test::close(
              (at(model).leftCols(2 * D) - config.qk_weight_std() / kInitWeightStd * at(timm).leftCols(2 * D)).norm(),
              0, 0, 1e-15));
          const double n = double(t.rows * 2 * D), std = std::sqrt(at(timm).leftCols(2 * D).squaredNorm() / n);
          EXPECT_TRUE(test::close(std, kInitWeightStd, 0, 4 * kInitWeightStd / std::sqrt(2 * n)));
        } else {
          EXPECT_EQ(at(model), at(timm)) << t.name;
        }
      }
    }
  }
}

// The unit rule against Monte-Carlo: tokens as the blocks' LayerNorm leaves them (mean 0, biased variance 1 over
// D), the first block's initial Q and K of one head, S = c q·k over pairs of distinct tokens; E S² over weights and
// tokens is 1 within 4 standard errors of the mean over 400 initialisations.
TEST(VitModel, UnitInitGivesLogitsOfUnitVariance) {
  for (const char* name : {"softmax", "poly"}) {
    VitConfig config = VitConfig::preset("micro");
    config.activation = ActivationSpec::parse(name);
    config.activation.convention = Convention::none;
    config.qk_init = QkInit::unit;
    SCOPED_TRACE(name);
    const Index D = config.dim, dh = config.head_dim();
    const double c = logit_scale(config.resolved_activation());
    std::vector<double> per_init;
    for (std::uint64_t r = 0; r < 400; ++r) {
      Vit<double> model(config);
      model.init(test::seed() + r);
      const auto& qkv = *std::find_if(model.tensors().begin(), model.tensors().end(),
                                      [](const TensorInfo& t) { return t.name == "blocks.0.attn.qkv.weight"; });
      const Eigen::Map<const MatrixD> W(model.parameters().data() + qkv.offset, qkv.rows, qkv.cols);
      MatrixD x = random_matrix(16, D, 1000 + r);
      for (Index i = 0; i < x.rows(); ++i) {
        x.row(i).array() -= x.row(i).mean();
        x.row(i) /= std::sqrt(x.row(i).squaredNorm() / double(D));
      }
      const MatrixD q = x * W.leftCols(dh), k = x * W.middleCols(D, dh);
      const MatrixD S = c * q * k.transpose();
      per_init.push_back((S.squaredNorm() - S.diagonal().squaredNorm()) / double(S.size() - S.rows()));
    }
    const Eigen::Map<const VectorD> v(per_init.data(), Index(per_init.size()));
    const double mean = v.mean(),
                 se = std::sqrt((v.array() - mean).square().sum() / double(v.size() - 1) / double(v.size()));
    EXPECT_TRUE(test::close(mean, 1.0, 0, 4 * se)) << "E S^2 = " << mean << " +- " << se;
  }
}

TEST(VitModel, PatchesFollowConv2dWeightOrder) {
  VitConfig c = tiny_config("softmax");
  MatrixD images(1, c.pixels());
  for (Index i = 0; i < c.pixels(); ++i) images(0, i) = double(i);
  const MatrixD patches = extract_patches(images, c);
  ASSERT_EQ(patches.rows(), c.patches());
  ASSERT_EQ(patches.cols(), c.patch_dim());
  // Patch 4 is grid row 1, column 1: pixels rows 4..7, columns 2..3; entry (channel 1, i = 2, j = 1).
  const Index channel = 1, i = 2, j = 1;
  EXPECT_EQ(patches(4, (channel * c.patch_h + i) * c.patch_w + j),
            double((channel * c.image_h + 4 + i) * c.image_w + 2 + j));
}

TEST(VitModel, ParameterLayoutCoversTheBufferOnce) {
  for (const char* preset : {"micro", "small", "vit-tiny"}) {
    VitConfig c = VitConfig::preset(preset);
    const auto tensors = parameter_tensors(c);
    Index offset = 0;
    for (const auto& t : tensors) {
      EXPECT_EQ(t.offset, offset) << t.name;
      offset += t.size();
    }
    EXPECT_EQ(Index(Vit<float>(c).parameters().size()), offset);
  }
  // timm's vit_tiny_patch16_224 has 5,717,416 parameters; at 32×32 with 4×4 patches and 1 channel and 10
  // classes: the same blocks (12 × 444,864), patch 16·192 + 192, cls 192, pos 65·192, norm 384, head 1,930.
  const auto tiny = parameter_tensors(VitConfig::preset("vit-tiny"));
  EXPECT_EQ(tiny.back().offset + tiny.back().size(), 12 * 444864 + 16 * 192 + 192 + 192 + 65 * 192 + 384 + 1930);
}

TEST(VitModel, BadConfigurationsNameTheParameter) {
  const auto rejects = [](VitConfig c, const std::string& word) {
    try {
      c.validate();
    } catch (const std::invalid_argument& e) {
      return std::string(e.what()).find(word) != std::string::npos ? ::testing::AssertionSuccess()
                                                                   : ::testing::AssertionFailure() << e.what();
    }
    return ::testing::AssertionFailure() << "accepted";
  };
  VitConfig c = VitConfig::preset("small");
  EXPECT_TRUE(rejects(
      [&] {
        auto x = c;
        x.heads = 3;
        return x;
      }(),
      "divisible"));
  EXPECT_TRUE(rejects(
      [&] {
        auto x = c;
        x.patch_h = 5;
        return x;
      }(),
      "tile"));
  EXPECT_TRUE(rejects(
      [&] {
        auto x = c;
        x.classes = 1;
        return x;
      }(),
      "classes"));
  EXPECT_TRUE(rejects(
      [&] {
        auto x = c;
        x.depth = 0;
        return x;
      }(),
      "depth"));
  EXPECT_THROW(VitConfig::preset("huge"), std::invalid_argument);
}
