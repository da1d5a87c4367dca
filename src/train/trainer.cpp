#include <attnlab/core/rng.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/train/trainer.hpp>

#include <cmath>
#include <cstring>
#include <stdexcept>

namespace attnlab::train {

void TrainConfig::validate() const {
  model.validate();
  if (batch < 1) throw std::invalid_argument(text("batch must be at least 1 (got ", batch, ")"));
  if (log_every < 1) throw std::invalid_argument(text("log-every must be at least 1 (got ", log_every, ")"));
  if (!(clip >= 0)) throw std::invalid_argument(text("clip must be >= 0 (got ", clip, ")"));
  if (!(label_smoothing >= 0 && label_smoothing < 1))
    throw std::invalid_argument(text("label smoothing must be in [0, 1) (got ", label_smoothing, ")"));
  if (augment.crop_padding < 0)
    throw std::invalid_argument(text("crop padding must be >= 0 (got ", augment.crop_padding, ")"));
  CosineSchedule{.base_lr = lr, .min_lr = min_lr, .warmup_steps = warmup, .total_steps = steps}.validate();
  adamw_options(*this).validate();
}

AdamWOptions adamw_options(const TrainConfig& c) {
  return {.beta1 = c.beta1, .beta2 = c.beta2, .weight_decay = c.weight_decay};
}

std::string fingerprint(const TrainConfig& c) {
  const VitConfig& m = c.model;
  return text("vit:", m.image_h, "x", m.image_w, "x", m.channels, ":classes=", m.classes, ":patch=", m.patch_h, "x",
              m.patch_w, ":dim=", m.dim, ":depth=", m.depth, ":heads=", m.heads, ":mlp=", m.mlp_hidden,
              ":qkvbias=", m.qkv_bias, ":lneps=", m.ln_eps, ":act=", m.activation.key(), "|batch=", c.batch,
              ":steps=", c.steps, ":warmup=", c.warmup, ":lr=", c.lr, ":minlr=", c.min_lr, ":wd=", c.weight_decay,
              ":clip=", c.clip, ":smoothing=", c.label_smoothing, ":betas=", c.beta1, ",", c.beta2,
              ":crop=", c.augment.random_crop, ",", c.augment.crop_padding, ":flip=", c.augment.flip, ":seed=", c.seed,
              ":logevery=", c.log_every, m.qk_init == QkInit::timm ? "" : ":init=" + to_string(m.qk_init),
              m.matmul == ProductPrecision::native ? "" : ":matmul=" + to_string(m.matmul),
              m.readout == Readout::cls ? "" : ":readout=" + to_string(m.readout));
}

namespace {

// The configuration, once it has passed validation: the members built from it come after.
const TrainConfig& validated(const TrainConfig& config) {
  config.validate();
  return config;
}

}  // namespace

Trainer::Trainer(const TrainConfig& config, Dataset train, Dataset validation)
    : config_(validated(config)),
      train_(std::move(train)),
      validation_(std::move(validation)),
      normalisation_(Normalisation::of(train_)),
      model_(config.model),
      optimiser_(static_cast<Index>(model_.parameters().size()),
                 weight_decay_mask(model_.tensors(), static_cast<Index>(model_.parameters().size())),
                 adamw_options(config)),
      schedule_{
          .base_lr = config.lr, .min_lr = config.min_lr, .warmup_steps = config.warmup, .total_steps = config.steps} {
  const VitConfig& m = config_.model;
  for (const Dataset* d : {&train_, &validation_})
    if (d->channels != m.channels || d->height != m.image_h || d->width != m.image_w)
      throw std::invalid_argument(text("data: ", d->channels, "x", d->height, "x", d->width, " images for a model of ",
                                       m.channels, "x", m.image_h, "x", m.image_w));
  if (train_.size() < config_.batch)
    throw std::invalid_argument(
        text("batch ", config_.batch, " is larger than the ", train_.size(), " training examples"));
  if (train_.classes > m.classes)
    throw std::invalid_argument(text("data has ", train_.classes, " classes, the model ", m.classes));
  model_.init(config_.seed);
}

namespace {

double accuracy_of(const Matrix<float>& logits, const std::vector<int>& labels) {
  Index correct = 0;
  for (Index b = 0; b < logits.rows(); ++b) {
    Index best = 0;
    logits.row(b).maxCoeff(&best);
    correct += best == labels[std::size_t(b)];
  }
  return double(correct) / double(logits.rows());
}

}  // namespace

StepRecord Trainer::train_step() {
  const long per_epoch = static_cast<long>(train_.size() / config_.batch);  // the last partial batch is dropped
  const long epoch = step_ / per_epoch, position = step_ % per_epoch;
  if (epoch != order_epoch_) order_ = epoch_order(train_.size(), config_.seed, epoch), order_epoch_ = epoch;
  const std::span<const Index> indices(order_.data() + position * config_.batch, std::size_t(config_.batch));
  make_batch(train_, indices, normalisation_, config_.augment, config_.seed, step_, images_, labels_);
  const bool record = step_ % config_.log_every == 0 || step_ + 1 == config_.steps;
  const double loss = model_.forward(images_, std::span<const int>(labels_), config_.label_smoothing, record);
  if (!std::isfinite(loss))
    throw NonFiniteError(
        text("step ", step_, ": the loss is ", loss, "; the parameters are those after step ", step_ - 1));
  model_.zero_grad();
  model_.backward();
  const double grad_norm = clip_gradient_norm(model_.gradients(), config_.clip);
  if (!std::isfinite(grad_norm))
    throw NonFiniteError(text("step ", step_, ": the gradient norm is ", grad_norm,
                              "; the parameters are those after step ", step_ - 1));
  const double lr = schedule_.at(step_);
  optimiser_.step(model_.parameters(), model_.gradients(), lr);
  StepRecord r{step_, lr, loss, accuracy_of(model_.logits(), labels_), grad_norm, {}};
  if (record) r.norms = model_.layer_norms();
  records_.push_back(r);
  ++step_;
  return r;
}

Plateau plateau(const std::vector<Evaluation>& validations, long steps, double window, double tolerance) {
  Plateau p{.from_step = long(std::ceil((1 - window) * double(steps)))};
  double lo = 1, hi = 0, first = 0, last = 0;
  for (const auto& e : validations)
    if (e.step >= p.from_step) {
      if (p.evaluations++ == 0) first = e.accuracy;
      last = e.accuracy, lo = std::min(lo, e.accuracy), hi = std::max(hi, e.accuracy);
    }
  if (p.evaluations == 0) return p;
  p.spread = hi - lo, p.gain = last - first;
  p.reached = p.evaluations >= 2 && p.spread <= tolerance;
  return p;
}

Evaluation Trainer::evaluate(const Dataset& data, Index batch) {
  if (data.channels != config_.model.channels || data.height != config_.model.image_h ||
      data.width != config_.model.image_w)
    throw std::invalid_argument("evaluate: the data's image shape differs from the model's");
  Evaluation e{step_, 0, 0};
  std::vector<Index> indices;
  for (Index start = 0; start < data.size(); start += batch) {
    const Index count = std::min(batch, data.size() - start);
    indices.resize(std::size_t(count));
    for (Index i = 0; i < count; ++i) indices[std::size_t(i)] = start + i;
    make_batch(data, std::span<const Index>(indices), normalisation_, Augmentation{}, config_.seed, 0, images_,
               labels_);
    e.loss += model_.forward(images_, std::span<const int>(labels_), 0.0) * double(count);
    e.accuracy += accuracy_of(model_.logits(), labels_) * double(count);
  }
  e.loss /= double(data.size());
  e.accuracy /= double(data.size());
  return e;
}

const Evaluation& Trainer::record_validation() {
  validations_.push_back(evaluate());
  return validations_.back();
}

namespace {

constexpr std::uint64_t kStateMagic = 0x3174617473746976;  // "vitstat1"
// 2: a checksum of the state ends it; 3: per-layer norm maxima; 4: saturated share and logit kurtosis
constexpr std::uint32_t kStateVersion = 4;

struct Writer {
  std::string bytes;
  template <class V>
  void put(const V& v) {
    bytes.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <class V>
  void put_span(std::span<const V> values) {
    put(std::uint64_t(values.size()));
    bytes.append(reinterpret_cast<const char*>(values.data()), values.size_bytes());
  }
  void put_string(const std::string& s) { put_span(std::span<const char>(s)); }
};

struct Reader {
  const std::string& bytes;
  std::size_t at = 0;
  void need(std::size_t n) const {
    if (bytes.size() - at < n) throw std::runtime_error("checkpoint: truncated");
  }
  template <class V>
  V get() {
    need(sizeof(V));
    V v;
    std::memcpy(&v, bytes.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
  template <class V>
  void get_span(std::span<V> out) {
    if (get<std::uint64_t>() != out.size()) throw std::runtime_error("checkpoint: a buffer has the wrong size");
    need(out.size_bytes());
    std::memcpy(out.data(), bytes.data() + at, out.size_bytes());
    at += out.size_bytes();
  }
  // A count of items of at least `bytes_each` bytes, checked against what is left before anything is allocated.
  std::size_t count(std::size_t bytes_each) {
    const auto n = get<std::uint64_t>();
    if (n > (bytes.size() - at) / bytes_each) throw std::runtime_error("checkpoint: a count exceeds the bytes left");
    return std::size_t(n);
  }
  std::string get_string() {
    const auto n = count(1);
    std::string s = bytes.substr(at, n);
    at += n;
    return s;
  }
};

std::string run_identity(const TrainConfig& config, const Dataset& train, const Dataset& validation) {
  return text(fingerprint(config), "|train=", train.size(), ":validation=", validation.size());
}

}  // namespace

std::string Trainer::save() const {
  Writer w;
  w.put(kStateMagic);
  w.put(kStateVersion);
  w.put_string(run_identity(config_, train_, validation_));
  w.put(std::int64_t(step_));
  w.put(std::int64_t(optimiser_.steps()));
  w.put_span(model_.parameters());
  w.put_span(optimiser_.first_moment());
  w.put_span(optimiser_.second_moment());
  w.put(std::uint64_t(records_.size()));
  for (const auto& r : records_) {
    w.put(std::int64_t(r.step));
    for (double v : {r.lr, r.loss, r.accuracy, r.grad_norm}) w.put(v);
    w.put(std::uint64_t(r.norms.size()));
    for (const auto& n : r.norms)
      for (double v : {n.phi, n.jacobian, n.phi_max, n.jacobian_max, n.saturated_share, n.logit_kurtosis}) w.put(v);
  }
  w.put(std::uint64_t(validations_.size()));
  for (const auto& e : validations_) w.put(std::int64_t(e.step)), w.put(e.loss), w.put(e.accuracy);
  w.put(hash_string(w.bytes));
  return w.bytes;
}

void Trainer::restore(const std::string& sealed_bytes) {
  // Checked before anything is read: a damaged count or size must never reach an allocation.
  constexpr std::size_t kChecksum = sizeof(std::uint64_t);
  if (sealed_bytes.size() < kChecksum) throw CorruptStateError("checkpoint: truncated (no checksum)");
  const std::string bytes = sealed_bytes.substr(0, sealed_bytes.size() - kChecksum);
  std::uint64_t checksum = 0;
  std::memcpy(&checksum, sealed_bytes.data() + bytes.size(), kChecksum);
  if (checksum != hash_string(bytes)) throw CorruptStateError("checkpoint: checksum mismatch (truncated or damaged)");
  Reader r{bytes};
  if (r.get<std::uint64_t>() != kStateMagic)
    throw std::runtime_error("checkpoint: not a ViT training state (wrong magic)");
  if (const auto v = r.get<std::uint32_t>(); v != kStateVersion)
    throw std::runtime_error(text("checkpoint: version ", v, ", this build reads ", kStateVersion));
  if (r.get_string() != run_identity(config_, train_, validation_))
    throw std::runtime_error("checkpoint: written by a run with another configuration or data");
  const auto step = r.get<std::int64_t>();
  const auto optimiser_steps = r.get<std::int64_t>();
  std::vector<float> parameters(model_.parameters().size()), m(parameters.size()), v(parameters.size());
  r.get_span(std::span<float>(parameters));
  r.get_span(std::span<float>(m));
  r.get_span(std::span<float>(v));
  std::vector<StepRecord> records(r.count(5 * sizeof(double) + sizeof(std::uint64_t)));
  for (auto& rec : records) {
    rec.step = r.get<std::int64_t>();
    rec.lr = r.get<double>(), rec.loss = r.get<double>(), rec.accuracy = r.get<double>(),
    rec.grad_norm = r.get<double>();
    rec.norms.resize(r.count(6 * sizeof(double)));
    for (auto& n : rec.norms)
      for (double* v : {&n.phi, &n.jacobian, &n.phi_max, &n.jacobian_max, &n.saturated_share, &n.logit_kurtosis})
        *v = r.get<double>();
  }
  std::vector<Evaluation> validations(r.count(3 * sizeof(double)));
  for (auto& e : validations) e.step = r.get<std::int64_t>(), e.loss = r.get<double>(), e.accuracy = r.get<double>();
  if (r.at != bytes.size()) throw std::runtime_error("checkpoint: trailing bytes");
  std::copy(parameters.begin(), parameters.end(), model_.parameters().begin());
  std::copy(m.begin(), m.end(), optimiser_.first_moment().begin());
  std::copy(v.begin(), v.end(), optimiser_.second_moment().begin());
  optimiser_.set_steps(optimiser_steps);
  step_ = step;
  records_ = std::move(records);
  validations_ = std::move(validations);
}

}  // namespace attnlab::train
