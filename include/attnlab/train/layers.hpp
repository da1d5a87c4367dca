#pragma once
// The ViT's layers as forward/backward pairs on row-major matrices, llm.c style: each states its shapes;
// parameters are raw pointers into the model's one parameter buffer, their gradients pointers into the
// one gradient buffer. Backward passes accumulate (+=) into parameter gradients and overwrite the
// gradients of their inputs. The linear layers' products are core/tile_product.hpp's, one fma chain per entry, and
// attention's run over fixed blocks: the same numbers for any thread count.
#include <attnlab/attention/activation.hpp>
#include <attnlab/core/tile_product.hpp>
#include <attnlab/core/types.hpp>

#include <span>

namespace attnlab::train {

template <class T>
using Map = Eigen::Map<Matrix<T>>;
template <class T>
using ConstMap = Eigen::Map<const Matrix<T>>;

// y (R×O) = x (R×I) · W (I×O) + b (O); b may be null. The products take their operands as `precision` says
// (bf16: float only).
template <class T>
void linear_forward(const Matrix<T>& x, const T* W, const T* b, Index O, Matrix<T>& y,
                    ProductPrecision precision = ProductPrecision::native);
// dx = dy Wᵀ (skipped when dx is null), dW += xᵀ dy, db += Σ_rows dy (skipped when db is null).
template <class T>
void linear_backward(const Matrix<T>& dy, const Matrix<T>& x, const T* W, Matrix<T>* dx, T* dW, T* db,
                     ProductPrecision precision = ProductPrecision::native);

// out = a + b over the threads (the residual stream's adds); out may be a or b. std::invalid_argument when a and b
// differ in shape.
template <class T>
void add(const Matrix<T>& a, const Matrix<T>& b, Matrix<T>& out);

// Per row of x (R×C): y = (x − mean)·rstd ∘ w + b, rstd = 1/√(biased var + eps). w, b null: no affine.
template <class T>
void layernorm_forward(const Matrix<T>& x, const T* w, const T* b, double eps, Matrix<T>& y, Vector<T>& mean,
                       Vector<T>& rstd);
template <class T>
void layernorm_backward(const Matrix<T>& dy, const Matrix<T>& x, const T* w, const Vector<T>& mean,
                        const Vector<T>& rstd, Matrix<T>& dx, T* dw, T* db);

// Exact GELU x Φ(x), elementwise; backward: dx = dy ∘ (Φ(x) + x φ(x)).
template <class T>
void gelu_forward(const Matrix<T>& x, Matrix<T>& y);
template <class T>
void gelu_backward(const Matrix<T>& dy, const Matrix<T>& x, Matrix<T>& dx);

// Multi-head attention core on the fused projections qkv (B·T × 3D: [q | k | v], head h in columns
// h·dh … (h+1)·dh − 1 of each): per image and head, M = q kᵀ (T×T), ϕ = activation(logit_scale · M)
// row by row, out = ϕ v. With qk-layernorm q and k are first normalised over each head's dh entries.
struct AttentionShape {
  Index batch = 0, tokens = 0, dim = 0, heads = 1;
  Index head_dim() const { return dim / heads; }
};

// What the forward keeps for the backward: q and k, from which the backward recomputes ϕ a block of rows at a time.
template <class T>
struct AttentionCache {
  Matrix<T> q, k;            // B·T × D: q and k as they enter qkᵀ (normalised under qk-layernorm)
  Vector<T> q_rstd, k_rstd;  // B·T·heads: the qk-layernorm rstd per token and head
};

// Sums over images and heads of ‖ϕ(S)‖_F and of the Frobenius norm of ϕ's Jacobian with respect to its
// logits (row-block for row-normalised ϕ, diagonal for elementwise), and the largest of each; and of the share of
// saturated entries (N|∂ϕ_j/∂x_j| < kSaturatedGradient) and the rows' mean excess kurtosis of the logits x.
struct AttentionNormSums {
  double phi = 0, jacobian = 0;
  double phi_max = 0, jacobian_max = 0;
  double saturated = 0, kurtosis = 0;
  Index count = 0;
};

// PERIODIC's "gradient close to 0" as a number (its theory claims' periodic_saturated_entry): a hundredth of the
// uniform row's N|∂ϕ_j/∂x_j| = 1 - 1/N.
inline constexpr double kSaturatedGradient = 0.01;

template <class T>
void attention_forward(const Matrix<T>& qkv, const AttentionShape& shape, const Activation& activation, Matrix<T>& out,
                       AttentionCache<T>& cache, AttentionNormSums* norms = nullptr);
// dqkv (B·T × 3D) from dout (B·T × D); with a learned scale θ (ϕ = θ·h), *dtheta += ∂loss/∂θ.
template <class T>
void attention_backward(const Matrix<T>& dout, const Matrix<T>& qkv, const AttentionShape& shape,
                        const Activation& activation, const AttentionCache<T>& cache, Matrix<T>& dqkv,
                        double* dtheta = nullptr);

// Mean cross-entropy of softmax(logits) (B×C) against labels smoothed to (1 − ε)·onehot + ε/C; keeps the
// probabilities. Backward: dlogits = (p − target)/B.
template <class T>
double cross_entropy_forward(const Matrix<T>& logits, std::span<const int> labels, double smoothing,
                             Matrix<T>& probabilities);
template <class T>
void cross_entropy_backward(const Matrix<T>& probabilities, std::span<const int> labels, double smoothing,
                            Matrix<T>& dlogits);

}  // namespace attnlab::train
