#include <attnlab/core/rng.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/train/vit.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <type_traits>

namespace attnlab::train {

namespace {

// The loss reads one token per image, and every layer of the last block after attention works row by row: there they
// run on the readout rows alone, each followed by kReadoutStride − 1 filler rows, zero where they enter (6% of
// vit-tiny's linear products, 35% of a depth-2 model's at N = 65). The fillers' gradients are zero, so a sum over rows
// meets the same nonzero terms in the same order as over all B·N rows when N ≥ 4 (Eigen's column sums add rows in
// fours, bf16 products in pairs, and a weight gradient's fma chain over the rows skips only zeros): a step's bits are
// those of the whole block. Below 4 tokens (one or two patches) two readout rows can share a group of four.
constexpr Index kReadoutStride = 4;

template <class T>
void thin_to_readout(const Matrix<T>& all, Index tokens, Index read, Matrix<T>& thinned) {
  const Index B = all.rows() / tokens;
  thinned.setZero(B * kReadoutStride, all.cols());
  for (Index b = 0; b < B; ++b) thinned.row(b * kReadoutStride) = all.row(b * tokens + read);
}

template <class T>
void spread_from_readout(const Matrix<T>& thinned, Index tokens, Index read, Matrix<T>& all) {
  const Index B = thinned.rows() / kReadoutStride;
  all.setZero(B * tokens, thinned.cols());
  for (Index b = 0; b < B; ++b) all.row(b * tokens + read) = thinned.row(b * kReadoutStride);
}

}  // namespace

std::string model_preset_names() {
  std::string names;
  for (std::size_t i = 0; i < kModelPresets.size(); ++i)
    names += (i == 0 ? "" : i + 1 == kModelPresets.size() ? " or " : ", ") + std::string(kModelPresets[i].name);
  return names;
}

VitConfig VitConfig::preset(const std::string& name) {
  for (const auto& p : kModelPresets)
    if (name == p.name) {
      VitConfig c;
      c.dim = p.dim, c.depth = p.depth, c.heads = p.heads, c.mlp_hidden = p.mlp_hidden;
      return c;
    }
  throw std::invalid_argument(text("model must be ", model_preset_names(), " (got '", name, "')"));
}

QkInit parse_qk_init(const std::string& name) {
  if (name == "timm") return QkInit::timm;
  if (name == "xavier") return QkInit::xavier;
  if (name == "unit") return QkInit::unit;
  throw std::invalid_argument(text("init must be timm, xavier or unit (got '", name, "')"));
}

std::string to_string(QkInit init) {
  switch (init) {
    case QkInit::timm: return "timm";
    case QkInit::xavier: return "xavier";
    case QkInit::unit: return "unit";
  }
  throw std::logic_error("unreachable QkInit");
}

Readout parse_readout(const std::string& name) {
  if (name == "cls") return Readout::cls;
  if (name == "last") return Readout::last;
  throw std::invalid_argument(text("readout must be cls or last (got '", name, "')"));
}

std::string to_string(Readout readout) { return readout == Readout::cls ? "cls" : "last"; }

double VitConfig::qk_weight_std() const {
  const double D = double(dim);
  switch (qk_init) {
    case QkInit::timm: return kInitWeightStd;
    case QkInit::xavier: return 1 / std::sqrt(D);
    case QkInit::unit: {
      const double c = logit_scale(resolved_activation());
      return 1 / std::sqrt(D * std::sqrt(c * c * double(head_dim())));
    }
  }
  throw std::logic_error("unreachable QkInit");
}

bool VitConfig::learned_scale() const { return find_activation(activation.name).learned_scale; }

Activation VitConfig::resolved_activation() const { return activation.resolve(patches(), head_dim()); }

void VitConfig::validate() const {
  const auto positive = [](Index v, const char* what) {
    if (v < 1) throw std::invalid_argument(text(what, " must be at least 1 (got ", v, ")"));
  };
  positive(image_h, "image height");
  positive(image_w, "image width");
  positive(channels, "channels");
  positive(patch_h, "patch height");
  positive(patch_w, "patch width");
  positive(dim, "dim");
  positive(depth, "depth");
  positive(heads, "heads");
  positive(mlp_hidden, "mlp hidden size");
  if (classes < 2) throw std::invalid_argument(text("classes must be at least 2 (got ", classes, ")"));
  if (image_h % patch_h != 0 || image_w % patch_w != 0)
    throw std::invalid_argument(
        text("patch ", patch_h, "x", patch_w, " does not tile the ", image_h, "x", image_w, " image"));
  if (dim % heads != 0) throw std::invalid_argument(text("dim ", dim, " is not divisible by ", heads, " heads"));
  if (!(ln_eps > 0)) throw std::invalid_argument(text("layernorm eps must be positive (got ", ln_eps, ")"));
  activation.validate(patches(), head_dim());
}

std::vector<TensorInfo> parameter_tensors(const VitConfig& c) {
  std::vector<TensorInfo> out;
  Index offset = 0;
  const auto add = [&](std::string name, Index rows, Index cols) {
    out.push_back({std::move(name), rows, cols, offset});
    offset += rows * cols;
  };
  const Index D = c.dim;
  add("patch_embed.proj.weight", c.patch_dim(), D);
  add("patch_embed.proj.bias", 1, D);
  add("cls_token", 1, D);
  add("pos_embed", c.tokens(), D);
  for (Index l = 0; l < c.depth; ++l) {
    const std::string b = text("blocks.", l, ".");
    add(b + "norm1.weight", 1, D);
    add(b + "norm1.bias", 1, D);
    add(b + "attn.qkv.weight", D, 3 * D);
    if (c.qkv_bias) add(b + "attn.qkv.bias", 1, 3 * D);
    add(b + "attn.proj.weight", D, D);
    add(b + "attn.proj.bias", 1, D);
    if (c.learned_scale()) add(b + "attn.scale", 1, 1);
    add(b + "norm2.weight", 1, D);
    add(b + "norm2.bias", 1, D);
    add(b + "mlp.fc1.weight", D, c.mlp_hidden);
    add(b + "mlp.fc1.bias", 1, c.mlp_hidden);
    add(b + "mlp.fc2.weight", c.mlp_hidden, D);
    add(b + "mlp.fc2.bias", 1, D);
  }
  add("norm.weight", 1, D);
  add("norm.bias", 1, D);
  add("head.weight", D, c.classes);
  add("head.bias", 1, c.classes);
  return out;
}

namespace {

// Points every field at its tensor in `base`, in parameter_tensors' order (optional tensors null when absent).
template <class T>
VitTensors<T> bind(T* base, const VitConfig& c) {
  T* at = base;
  const auto take = [&](Index size) {
    T* p = at;
    at += size;
    return p;
  };
  const Index D = c.dim, H = c.mlp_hidden;
  VitTensors<T> t;
  t.patch_w = take(c.patch_dim() * D);
  t.patch_b = take(D);
  t.cls = take(D);
  t.pos = take(c.tokens() * D);
  for (Index l = 0; l < c.depth; ++l) {
    BlockTensors<T> b;
    b.ln1_w = take(D), b.ln1_b = take(D);
    b.qkv_w = take(D * 3 * D);
    b.qkv_b = c.qkv_bias ? take(3 * D) : nullptr;
    b.proj_w = take(D * D), b.proj_b = take(D);
    b.scale = c.learned_scale() ? take(1) : nullptr;
    b.ln2_w = take(D), b.ln2_b = take(D);
    b.fc1_w = take(D * H), b.fc1_b = take(H);
    b.fc2_w = take(H * D), b.fc2_b = take(D);
    t.blocks.push_back(b);
  }
  t.norm_w = take(D), t.norm_b = take(D);
  t.head_w = take(D * c.classes), t.head_b = take(c.classes);
  return t;
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

template <class T>
Vit<T>::Vit(const VitConfig& config) : config_(config), tensors_(parameter_tensors(config)) {
  config_.validate();
  if (std::is_same_v<T, double> && config_.matmul == ProductPrecision::bf16)
    throw std::invalid_argument("bf16 products train the float model only");
  const auto size = static_cast<std::size_t>(tensors_.back().offset + tensors_.back().size());
  parameters_.assign(size, T(0));
  gradients_.assign(size, T(0));
  p_ = bind(parameters_.data(), config_);
  g_ = bind(gradients_.data(), config_);
  blocks_.resize(static_cast<std::size_t>(config_.depth));
  layer_norms_.resize(static_cast<std::size_t>(config_.depth));
}

template <class T>
void Vit<T>::init(std::uint64_t seed) {
  const double fan_in = double(config_.patch_dim());
  for (const auto& t : tensors_) {
    const std::span<T> values(parameters_.data() + t.offset, static_cast<std::size_t>(t.size()));
    const std::uint64_t key = hash_words({seed, hash_string(t.name)});
    if (t.name.rfind("patch_embed.", 0) == 0) {
      const double bound = 1 / std::sqrt(fan_in);
      for (std::size_t e = 0; e < values.size(); ++e) {
        const auto block = philox::generate(static_cast<std::uint32_t>(e), static_cast<std::uint32_t>(e >> 32), 0, 0,
                                            static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(key >> 32));
        values[e] = T((2 * philox::open_unit(block.v[0], block.v[1]) - 1) * bound);
      }
    } else if (t.name == "cls_token") {
      GaussianStream(seed, key, 0, StreamTag::A).fill(values, 1e-6);
    } else if (t.name == "pos_embed" || (ends_with(t.name, ".weight") && t.rows > 1)) {
      GaussianStream(seed, key, 0, StreamTag::A).fill(values, kInitWeightStd);
      if (ends_with(t.name, "attn.qkv.weight") && config_.qk_init != QkInit::timm) {
        const T rescale = T(config_.qk_weight_std() / kInitWeightStd);
        Map<T>(values.data(), t.rows, t.cols).leftCols(2 * config_.dim) *= rescale;
      }
    } else if (ends_with(t.name, "norm1.weight") || ends_with(t.name, "norm2.weight") || t.name == "norm.weight") {
      std::fill(values.begin(), values.end(), T(1));
    } else if (ends_with(t.name, "attn.scale")) {
      values[0] = T(std::get<ElementwiseActivation>(config_.resolved_activation().fn).out_scale);
    } else {
      std::fill(values.begin(), values.end(), T(0));
    }
  }
}

template <class T>
void Vit<T>::zero_grad() {
  std::fill(gradients_.begin(), gradients_.end(), T(0));
}

template <class T>
Activation Vit<T>::block_activation(Index block) const {
  Activation a = config_.resolved_activation();
  if (const T* scale = p_.blocks[static_cast<std::size_t>(block)].scale)
    std::get<ElementwiseActivation>(a.fn).out_scale = double(*scale);
  return a;
}

template <class T>
Matrix<T> extract_patches(const Matrix<T>& images, const VitConfig& c) {
  const Index B = images.rows(), gw = c.image_w / c.patch_w, P = c.patches();
  Matrix<T> out(B * P, c.patch_dim());
  for (Index b = 0; b < B; ++b)
    for (Index p = 0; p < P; ++p) {
      const Index a = p / gw, col = p % gw;
      for (Index ch = 0; ch < c.channels; ++ch)
        for (Index i = 0; i < c.patch_h; ++i)
          for (Index j = 0; j < c.patch_w; ++j)
            out(b * P + p, (ch * c.patch_h + i) * c.patch_w + j) = images(
                b, (ch * c.image_h + a * c.patch_h + i) * c.image_w + col * c.patch_w + j);
    }
  return out;
}

template <class T>
double Vit<T>::forward(const Matrix<T>& images, std::span<const int> labels, double label_smoothing,
                       bool record_norms) {
  const VitConfig& c = config_;
  const Index B = images.rows(), N = c.tokens(), P = c.patches(), D = c.dim;
  if (images.cols() != c.pixels())
    throw std::invalid_argument(text("forward: images have ", images.cols(), " values, the model takes ", c.pixels()));
  if (!(label_smoothing >= 0 && label_smoothing < 1))
    throw std::invalid_argument(text("label smoothing must be in [0, 1) (got ", label_smoothing, ")"));
  labels_.assign(labels.begin(), labels.end());
  label_smoothing_ = label_smoothing;

  patches_ = extract_patches(images, c);
  auto& [patch_embedding, readout_input, readout_output] = forward_scratch_;
  linear_forward(patches_, p_.patch_w, p_.patch_b, D, patch_embedding, c.matmul);
  const ConstMap<T> pos(p_.pos, N, D);
  // Each block writes its output where the next block keeps its input.
  Matrix<T>& embedded = blocks_.front().input;
  embedded.resize(B * N, D);
  for (Index b = 0; b < B; ++b) {
    embedded.row(b * N) = Eigen::Map<const RowVector<T>>(p_.cls, D) + pos.row(0);
    embedded.middleRows(b * N + 1, P) = patch_embedding.middleRows(b * P, P) + pos.bottomRows(P);
  }

  const AttentionShape shape{B, N, D, c.heads};
  for (Index l = 0; l < c.depth; ++l) {
    const auto& w = p_.blocks[static_cast<std::size_t>(l)];
    auto& k = blocks_[static_cast<std::size_t>(l)];
    const bool last = l == c.depth - 1;
    layernorm_forward(k.input, w.ln1_w, w.ln1_b, c.ln_eps, k.ln1, k.ln1_mean, k.ln1_rstd);
    linear_forward(k.ln1, w.qkv_w, w.qkv_b, 3 * D, k.qkv, c.matmul);
    AttentionNormSums sums;
    attention_forward(k.qkv, shape, block_activation(l), k.attention, k.attention_cache,
                      record_norms ? &sums : nullptr);
    if (record_norms)
      layer_norms_[static_cast<std::size_t>(l)] = {
          sums.phi / double(sums.count),       sums.jacobian / double(sums.count), sums.phi_max, sums.jacobian_max,
          sums.saturated / double(sums.count), sums.kurtosis / double(sums.count)};
    if (last) {
      thin_to_readout(k.attention, N, c.readout_token(), readout_attention_);
      thin_to_readout(k.input, N, c.readout_token(), readout_input);
    }
    Matrix<T>& out = last ? readout_output : blocks_[static_cast<std::size_t>(l + 1)].input;
    linear_forward(last ? readout_attention_ : k.attention, w.proj_w, w.proj_b, D, k.mid, c.matmul);
    add(k.mid, last ? readout_input : k.input, k.mid);
    layernorm_forward(k.mid, w.ln2_w, w.ln2_b, c.ln_eps, k.ln2, k.ln2_mean, k.ln2_rstd);
    linear_forward(k.ln2, w.fc1_w, w.fc1_b, c.mlp_hidden, k.hidden, c.matmul);
    gelu_forward(k.hidden, k.gelu);
    linear_forward(k.gelu, w.fc2_w, w.fc2_b, D, out, c.matmul);
    add(out, k.mid, out);
  }

  final_input_.resize(B, D);
  for (Index b = 0; b < B; ++b) final_input_.row(b) = readout_output.row(b * kReadoutStride);
  layernorm_forward(final_input_, p_.norm_w, p_.norm_b, c.ln_eps, final_normed_, final_mean_, final_rstd_);
  linear_forward(final_normed_, p_.head_w, p_.head_b, c.classes, logits_, c.matmul);
  return cross_entropy_forward(logits_, std::span<const int>(labels_), label_smoothing_, probabilities_);
}

template <class T>
void Vit<T>::backward() {
  const VitConfig& c = config_;
  const Index B = logits_.rows(), N = c.tokens(), P = c.patches(), D = c.dim;
  if (B == 0) throw std::logic_error("backward before forward");
  auto& [dlogits, dnormed, dfinal, dqkv, dln1, dinput, dpatch] = backward_scratch_;
  cross_entropy_backward(probabilities_, std::span<const int>(labels_), label_smoothing_, dlogits);
  linear_backward(dlogits, final_normed_, p_.head_w, &dnormed, g_.head_w, g_.head_b, c.matmul);
  layernorm_backward(dnormed, final_input_, p_.norm_w, final_mean_, final_rstd_, dfinal, g_.norm_w, g_.norm_b);
  readout_gradients_.dout.setZero(B * kReadoutStride, D);
  for (Index b = 0; b < B; ++b) readout_gradients_.dout.row(b * kReadoutStride) = dfinal.row(b);

  const AttentionShape shape{B, N, D, c.heads};
  auto& tokens = token_gradients_;
  for (Index l = c.depth - 1; l >= 0; --l) {
    const auto& w = p_.blocks[static_cast<std::size_t>(l)];
    const auto& gw = g_.blocks[static_cast<std::size_t>(l)];
    const auto& k = blocks_[static_cast<std::size_t>(l)];
    const bool last = l == c.depth - 1;
    // out = mid + fc2(gelu(fc1(ln2(mid)))), on the readout rows in the last block; g.dout holds ∂loss/∂out
    auto& g = last ? readout_gradients_ : tokens;
    linear_backward(g.dout, k.gelu, w.fc2_w, &g.dgelu, gw.fc2_w, gw.fc2_b, c.matmul);
    gelu_backward(g.dgelu, k.hidden, g.dhidden);
    linear_backward(g.dhidden, k.ln2, w.fc1_w, &g.dln2, gw.fc1_w, gw.fc1_b, c.matmul);
    layernorm_backward(g.dln2, k.mid, w.ln2_w, k.ln2_mean, k.ln2_rstd, g.dmid, gw.ln2_w, gw.ln2_b);
    add(g.dmid, g.dout, g.dmid);
    // mid = input + proj(attention(qkv(ln1(input))))
    linear_backward(g.dmid, last ? readout_attention_ : k.attention, w.proj_w, &g.dattention, gw.proj_w, gw.proj_b,
                    c.matmul);
    if (last) {
      spread_from_readout(g.dattention, N, c.readout_token(), tokens.dattention);
      spread_from_readout(g.dmid, N, c.readout_token(), tokens.dmid);
    }
    double dtheta = 0;
    attention_backward(tokens.dattention, k.qkv, shape, block_activation(l), k.attention_cache, dqkv,
                       gw.scale ? &dtheta : nullptr);
    if (gw.scale) *gw.scale += T(dtheta);
    linear_backward(dqkv, k.ln1, w.qkv_w, &dln1, gw.qkv_w, gw.qkv_b, c.matmul);
    layernorm_backward(dln1, k.input, w.ln1_w, k.ln1_mean, k.ln1_rstd, dinput, gw.ln1_w, gw.ln1_b);
    add(dinput, tokens.dmid, tokens.dout);
  }

  const Matrix<T>& dx = tokens.dout;
  Map<T> dpos(g_.pos, N, D);
  Eigen::Map<RowVector<T>> dcls(g_.cls, D);
  dpatch.resize(B * P, D);
  for (Index b = 0; b < B; ++b) {
    dpos += dx.middleRows(b * N, N);
    dcls += dx.row(b * N);
    dpatch.middleRows(b * P, P) = dx.middleRows(b * N + 1, P);
  }
  linear_backward(dpatch, patches_, p_.patch_w, static_cast<Matrix<T>*>(nullptr), g_.patch_w, g_.patch_b, c.matmul);
}

template class Vit<float>;
template class Vit<double>;
template Matrix<float> extract_patches<float>(const Matrix<float>&, const VitConfig&);
template Matrix<double> extract_patches<double>(const Matrix<double>&, const VitConfig&);

}  // namespace attnlab::train
