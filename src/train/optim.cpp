#include <attnlab/core/text.hpp>
#include <attnlab/train/optim.hpp>

#include <cmath>
#include <numbers>
#include <stdexcept>

namespace attnlab::train {

void AdamWOptions::validate() const {
  if (!(beta1 >= 0 && beta1 < 1)) throw std::invalid_argument(text("beta1 must be in [0, 1) (got ", beta1, ")"));
  if (!(beta2 >= 0 && beta2 < 1)) throw std::invalid_argument(text("beta2 must be in [0, 1) (got ", beta2, ")"));
  if (!(eps > 0)) throw std::invalid_argument(text("adam eps must be positive (got ", eps, ")"));
  if (!(weight_decay >= 0)) throw std::invalid_argument(text("weight decay must be >= 0 (got ", weight_decay, ")"));
}

std::vector<bool> weight_decay_mask(const std::vector<TensorInfo>& tensors, Index parameter_count) {
  std::vector<bool> decays(static_cast<std::size_t>(parameter_count), false);
  for (const auto& t : tensors)
    if (t.rows > 1 && t.name != "pos_embed")
      std::fill(decays.begin() + t.offset, decays.begin() + t.offset + t.size(), true);
  return decays;
}

template <class T>
AdamW<T>::AdamW(Index parameter_count, std::vector<bool> decays, const AdamWOptions& options)
    : options_(options),
      decays_(std::move(decays)),
      m_(static_cast<std::size_t>(parameter_count), T(0)),
      v_(static_cast<std::size_t>(parameter_count), T(0)) {
  options_.validate();
  if (static_cast<Index>(decays_.size()) != parameter_count)
    throw std::invalid_argument(
        text("adamw: weight-decay mask of ", decays_.size(), " for ", parameter_count, " parameters"));
}

template <class T>
void AdamW<T>::step(std::span<T> p, std::span<const T> g, double lr) {
  if (p.size() != m_.size() || g.size() != m_.size())
    throw std::invalid_argument(text("adamw: ", p.size(), " parameters and ", g.size(), " gradients for ", m_.size()));
  ++step_;
  const double b1 = options_.beta1, b2 = options_.beta2;
  const double correction1 = 1 - std::pow(b1, double(step_)), correction2 = 1 - std::pow(b2, double(step_));
  const T step_size = T(lr / correction1), sqrt_correction2 = T(std::sqrt(correction2)), eps = T(options_.eps);
  const T decay = T(1 - lr * options_.weight_decay);
  const std::size_t n = m_.size();
#pragma omp parallel for simd schedule(static) if (n > 65536)
  for (std::size_t i = 0; i < n; ++i) {
    if (decays_[i]) p[i] *= decay;
    m_[i] = T(b1) * m_[i] + T(1 - b1) * g[i];
    v_[i] = T(b2) * v_[i] + T(1 - b2) * g[i] * g[i];
    p[i] -= step_size * m_[i] / (std::sqrt(v_[i]) / sqrt_correction2 + eps);
  }
}

template <class T>
double clip_gradient_norm(std::span<T> g, double max_norm) {
  double sum = 0;
  for (T v : g) sum += double(v) * double(v);
  const double norm = std::sqrt(sum);
  if (max_norm > 0) {
    const double coefficient = max_norm / (norm + 1e-6);
    if (coefficient < 1)
      for (T& v : g) v *= T(coefficient);
  }
  return norm;
}

double CosineSchedule::at(long step) const {
  if (step < warmup_steps) return base_lr * double(step + 1) / double(warmup_steps);
  const double progress = std::min(1.0, double(step - warmup_steps) / double(std::max(1L, total_steps - warmup_steps)));
  return min_lr + 0.5 * (base_lr - min_lr) * (1 + std::cos(std::numbers::pi * progress));
}

void CosineSchedule::validate() const {
  if (!(base_lr > 0)) throw std::invalid_argument(text("learning rate must be positive (got ", base_lr, ")"));
  if (!(min_lr >= 0 && min_lr <= base_lr))
    throw std::invalid_argument(text("min learning rate must be in [0, lr] (got ", min_lr, ")"));
  if (total_steps < 1) throw std::invalid_argument(text("steps must be at least 1 (got ", total_steps, ")"));
  if (warmup_steps < 0 || warmup_steps > total_steps)
    throw std::invalid_argument(text("warm-up steps must be in [0, steps] (got ", warmup_steps, ")"));
}

template class AdamW<float>;
template class AdamW<double>;
template double clip_gradient_norm<float>(std::span<float>, double);
template double clip_gradient_norm<double>(std::span<double>, double);

}  // namespace attnlab::train
