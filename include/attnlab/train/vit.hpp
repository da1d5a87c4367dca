#pragma once
// A Vision Transformer in the style of llm.c: every layer a forward/backward pair (train/layers.hpp), the
// parameters in one buffer and their gradients in another (zero_grad is one fill, AdamW one loop).
// Patch embedding with rectangular ph × pw patches, a cls token, learned position embeddings, pre-LN
// blocks (LN → multi-head attention with any registered activation → residual; LN → MLP with exact GELU
// → residual), a final LayerNorm of the cls token and a linear head.
#include <attnlab/attention/activation.hpp>
#include <attnlab/core/types.hpp>
#include <attnlab/train/layers.hpp>

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

namespace attnlab::train {

// How the Q and K columns of every block's qkv weight start (V and every other weight start as timm's):
//   timm    N(0, 0.02²), timm's ViT: logits S = c·q·k of variance c² d_h D² 0.02⁴, small (about 0.03 at D 32)
//   xavier  N(0, 1/D), variance 1/fan-in
//   unit    N(0, 1/(D √(c² d_h))), so that Var S = 1 at step 0: a token after the blocks' LayerNorm has ‖x‖² = D,
//           q = x W_q has entries of variance D σ², and S = c Σ_a q_a k_a over the d_h head dimensions has variance
//           c² d_h (D σ²)² (q and k independent), with c the activation's logit scale.
// With c = 1/√d_h (softmax, x^p inside) unit and xavier coincide. The draws are the same normals for every mode,
// scaled: runs that differ only in --init are paired.
enum class QkInit { timm, xavier, unit };
QkInit parse_qk_init(const std::string& name);  // throws std::invalid_argument naming the choices
std::string to_string(QkInit init);

// The token the head reads: the cls token (ViT's), or the last one (a sequence task's query, whose answer attention
// must fetch to it in one hop, as MQAR reads its query positions).
enum class Readout { cls, last };
Readout parse_readout(const std::string& name);  // throws std::invalid_argument naming the choices
std::string to_string(Readout readout);

// The model shapes --model names, stated once: timm's ViT-Tiny, and two small ones (micro for tests).
struct ModelPreset {
  const char* name;
  Index dim, depth, heads, mlp_hidden;
};
inline constexpr std::array<ModelPreset, 3> kModelPresets{
    {{"vit-tiny", 192, 12, 3, 768}, {"small", 64, 2, 2, 256}, {"micro", 16, 2, 2, 32}}};
// "vit-tiny, small or micro".
std::string model_preset_names();

struct VitConfig {
  Index image_h = 32, image_w = 32, channels = 1, classes = 10;
  Index patch_h = 4, patch_w = 4;
  Index dim = 64, depth = 2, heads = 2, mlp_hidden = 256;
  bool qkv_bias = true;
  double ln_eps = 1e-6;
  // Resolved with N = the number of patches (the papers' sequence length; the cls token is not counted)
  // and d = the head dimension.
  ActivationSpec activation = ActivationSpec::parse("softmax");
  QkInit qk_init = QkInit::timm;
  // The linear layers' products (qkv, proj, the MLP, the patch embedding and the head): native, or bf16 operands
  // accumulated in float (Vit<float> only). Attention's own products stay native.
  ProductPrecision matmul = ProductPrecision::native;
  Readout readout = Readout::cls;

  // The shape of one of kModelPresets. Throws on other names.
  static VitConfig preset(const std::string& name);
  Index patches() const { return (image_h / patch_h) * (image_w / patch_w); }
  Index tokens() const { return patches() + 1; }
  Index readout_token() const { return readout == Readout::cls ? 0 : tokens() - 1; }
  Index head_dim() const { return dim / heads; }
  Index patch_dim() const { return channels * patch_h * patch_w; }
  Index pixels() const { return channels * image_h * image_w; }
  bool learned_scale() const;
  double qk_weight_std() const;  // the standard deviation of the initial Q and K weights under qk_init
  Activation resolved_activation() const;
  void validate() const;  // throws std::invalid_argument naming the parameter
};

// One parameter tensor in the flat buffer: PyTorch's name (timm's ViT), the shape as stored here (row-major
// rows × cols; a Linear's weight is stored transposed, in × out) and its offset.
struct TensorInfo {
  std::string name;
  Index rows = 1, cols = 1, offset = 0;
  Index size() const { return rows * cols; }
};
std::vector<TensorInfo> parameter_tensors(const VitConfig& config);

// Pointers to every tensor of one buffer (parameters or gradients).
template <class T>
struct BlockTensors {
  T *ln1_w, *ln1_b, *qkv_w, *qkv_b, *proj_w, *proj_b, *ln2_w, *ln2_b, *fc1_w, *fc1_b, *fc2_w, *fc2_b, *scale;
};
template <class T>
struct VitTensors {
  T *patch_w, *patch_b, *cls, *pos;
  std::vector<BlockTensors<T>> blocks;
  T *norm_w, *norm_b, *head_w, *head_b;
};

// The standard deviation of timm's initial Linear weights (and so of Q and K at step 0).
inline constexpr double kInitWeightStd = 0.02;

// Per block, ‖ϕ(S)‖_F and the Frobenius norm of ϕ's Jacobian wrt its logits, averaged over images and heads,
// and the largest of each over them (the matrices a deterministic bound must hold for); the share of saturated
// entries and the logits' excess kurtosis per row, averaged (AttentionNormSums).
struct LayerNorms {
  double phi = 0, jacobian = 0;
  double phi_max = 0, jacobian_max = 0;
  double saturated_share = 0, logit_kurtosis = 0;
};

template <class T>
class Vit {
 public:
  explicit Vit(const VitConfig& config);

  const VitConfig& config() const { return config_; }
  const std::vector<TensorInfo>& tensors() const { return tensors_; }
  std::span<T> parameters() { return parameters_; }
  std::span<const T> parameters() const { return parameters_; }
  std::span<T> gradients() { return gradients_; }
  std::span<const T> gradients() const { return gradients_; }

  // timm's init: weights of Linear layers and the position embedding N(0, 0.02²) (timm truncates at ±2,
  // 100σ, which never binds), cls token N(0, 1e-12), biases 0, LayerNorm 1 and 0; the patch embedding as
  // PyTorch's Conv2d default, U(±1/√fan_in) for weight and bias; a learned scale at the activation's 1/k.
  void init(std::uint64_t seed);
  void zero_grad();

  // images: B × pixels (channel-major C × H × W per row); labels: B. Keeps what backward needs and returns
  // the mean (label-smoothed) cross-entropy. With record_norms, layer_norms() holds this batch's norms.
  double forward(const Matrix<T>& images, std::span<const int> labels, double label_smoothing = 0,
                 bool record_norms = false);
  // gradients += ∂loss/∂parameters of the last forward.
  void backward();

  const Matrix<T>& logits() const { return logits_; }
  const std::vector<LayerNorms>& layer_norms() const { return layer_norms_; }

 private:
  // The last block's mid, ln2, hidden, gelu and ln2's statistics hold its readout rows only (vit.cpp).
  struct BlockCache {
    Matrix<T> input, ln1, qkv, attention, mid, ln2, hidden, gelu;
    Vector<T> ln1_mean, ln1_rstd, ln2_mean, ln2_rstd;
    AttentionCache<T> attention_cache;
  };

  Activation block_activation(Index block) const;

  VitConfig config_;
  std::vector<TensorInfo> tensors_;
  std::vector<T, Eigen::aligned_allocator<T>> parameters_, gradients_;  // aligned: see linear_backward
  VitTensors<T> p_, g_;
  // The last forward's batch and everything its backward reads.
  std::vector<int> labels_;
  double label_smoothing_ = 0;
  Matrix<T> patches_, final_input_, final_normed_, logits_, probabilities_;
  Matrix<T> readout_attention_;  // the last block's attention output on its readout rows (thin_to_readout)
  Vector<T> final_mean_, final_rstd_;
  std::vector<BlockCache> blocks_;
  std::vector<LayerNorms> layer_norms_;
  // Buffers a step fills and forgets, kept from step to step: fresh ones cost a page fault per page (at N = 256 the
  // kernel's faults and the zeroing of new pages were 46% of a step).
  struct ForwardScratch {
    Matrix<T> patch_embedding, readout_input, readout_output;
  } forward_scratch_;
  struct BackwardScratch {
    Matrix<T> dlogits, dnormed, dfinal, dqkv, dln1, dinput, dpatch;
  } backward_scratch_;
  // A block's gradients from its output back to its attention: over all B·N token rows, and over the last block's
  // readout rows (thin_to_readout in vit.cpp), each in buffers of its own size.
  struct BlockGradients {
    Matrix<T> dout, dgelu, dhidden, dln2, dmid, dattention;
  } token_gradients_, readout_gradients_;
};

// The B × patches × patch_dim patch matrix (rows b·P + p) of images (B × pixels): patch (a, c) of the
// (H/ph) × (W/pw) grid, entry (channel, i, j) at index (channel·ph + i)·pw + j, as Conv2d's weight flattens.
template <class T>
Matrix<T> extract_patches(const Matrix<T>& images, const VitConfig& config);

}  // namespace attnlab::train
