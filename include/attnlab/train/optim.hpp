#pragma once
// AdamW as PyTorch's torch.optim.AdamW computes it, over the model's one parameter buffer; global-norm
// gradient clipping as torch.nn.utils.clip_grad_norm_; a cosine learning-rate schedule with linear warm-up.
#include <attnlab/train/vit.hpp>

#include <span>
#include <vector>

namespace attnlab::train {

// The learning rate is the schedule's (CosineSchedule), passed to each step.
struct AdamWOptions {
  double beta1 = 0.9, beta2 = 0.999, eps = 1e-8, weight_decay = 0.05;
  void validate() const;  // throws std::invalid_argument naming the parameter
};

// timm's rule: no weight decay on 1-D tensors (biases, LayerNorm, cls token, learned scales) nor on pos_embed.
std::vector<bool> weight_decay_mask(const std::vector<TensorInfo>& tensors, Index parameter_count);

template <class T>
class AdamW {
 public:
  AdamW(Index parameter_count, std::vector<bool> decays, const AdamWOptions& options);
  // One step at learning rate lr: p ← p(1 − lr·wd) where decayed, then the bias-corrected Adam update.
  void step(std::span<T> parameters, std::span<const T> gradients, double lr);
  long steps() const { return step_; }
  // The moment buffers and step count, for checkpoints.
  std::span<T> first_moment() { return m_; }
  std::span<T> second_moment() { return v_; }
  std::span<const T> first_moment() const { return m_; }
  std::span<const T> second_moment() const { return v_; }
  void set_steps(long step) { step_ = step; }

 private:
  AdamWOptions options_;
  std::vector<bool> decays_;
  std::vector<T> m_, v_;
  long step_ = 0;
};

// Scales the gradients so that their global 2-norm is at most max_norm (no-op when max_norm <= 0);
// returns the norm before clipping.
template <class T>
double clip_gradient_norm(std::span<T> gradients, double max_norm);

struct CosineSchedule {
  double base_lr = 1e-3, min_lr = 0;
  long warmup_steps = 0, total_steps = 1;
  // base·(step + 1)/warmup during warm-up, then min + ½(base − min)(1 + cos(π·progress)).
  double at(long step) const;
  void validate() const;
};

}  // namespace attnlab::train
