// PyTorch parity of the ViT trainer (llm.c's test_gpt2, with the expected values in the fixture): the
// fixture tests/reference/fixtures/vit_parity.bin, written by tests/reference/vit_torch.py from a float64
// PyTorch model built with torch.nn primitives, holds for each case a configuration, the initial parameters,
// a sequence of batches, and what PyTorch computed: the logits and loss of the first batch, every parameter's
// gradient, and ten training steps (zero_grad, forward, backward, clip_grad_norm_, AdamW at a per-step lr)
// with their losses, gradient norms and final parameters. Vit<double>, clip_gradient_norm and AdamW<double>
// must reproduce all of it; each tensor's worst error is printed as a % of its limit.
//
// Fixture format (little-endian; "str" = uint32 byte length + bytes; see vit_torch.py's docstring):
//   uint64 magic 0x5241505449564C41 ("ALVITPAR"), uint32 version 1, uint32 cases;
//   per case: str name; int64 image_h, image_w, channels, classes, patch_h, patch_w, dim, depth, heads,
//   mlp_hidden, qkv_bias; float64 ln_eps; str activation; int64 p; str k; str convention; int64 batch,
//   steps; float64 label_smoothing, beta1, beta2, adam_eps, weight_decay, clip_max_norm; uint32 tensors;
//   per tensor: str name, uint32 rank, int64 shape[rank], float64 data[prod(shape)] (row-major).
//   Tensors (looked up by name): train.images ((steps·B) × pixels), train.labels (steps·B), train.lr (steps),
//   param.<name> (every tensor of parameter_tensors, as stored here), expected.logits (B × classes),
//   expected.loss (1), grad.<name>, train.losses (steps), train.grad_norms (steps), final.<name>.
//
// Tolerances, |got − ref| ≤ abs·max|ref of the tensor| + rel·|ref|:
//   kExact, rel 1e-9, abs 1e-12: logits, loss, gradients, and the losses and gradient norms of the training
//     steps. Both sides evaluate the same formulas in float64 and differ only in summation order and libm
//     (libmvec's exp/erfc are within 4 ulp): through a 2–3 block model with sums of ≤ 64 terms the error is a
//     few ulp of the tensor's scale (measured: ≤ 5e-15 absolute, ≤ 0.1% of these limits), while any modelling
//     slip — a transposed weight, 1/√d in the wrong place, a LayerNorm eps of 1e-5 instead of 1e-6, label
//     smoothing over C − 1 classes — moves entries by ≥ 1e-7 relative, 100× beyond the limit.
//   kAdam, rel 1e-9, abs 1e-9: the parameters after the 10 AdamW steps. Adam divides each gradient entry by
//     its own running RMS, so an entry whose gradient is zero in exact arithmetic is moved by its rounding
//     noise times lr/eps: under softmax the key bias (qkv.bias columns D … 2D − 1) gets no gradient (a row
//     shift of the logits leaves softmax unchanged), its computed gradient is ~1e-17 of noise, and each step
//     moves it by up to lr·noise/eps ≈ 3e-3·1e-17/1e-8 = 3e-12, differently on each side: measured 3.6e-12
//     after 10 steps, 10 × that as a worst case. abs 1e-9 covers it and is still ≥ 1e4 below what a genuine
//     AdamW slip costs in one step (decay on a no-decay tensor: lr·wd·|p| ≈ 1e-5; eps inside the square root,
//     a missing bias correction: ≥ 1e-6).
//   Checked by regenerating the fixture with one change to the PyTorch side: LayerNorm eps 1e-5 → logits at
//   3.6e5× their limit; k = √(N + 1) → 1.7e8×; tanh GELU → 3.6e7×; qk-layernorm eps 1e-5 → 4.8e5×; weight decay
//   on pos_embed → training losses at 1.7e5×; clip_grad_norm_ without its + 1e-6 → training losses at 3.4×.
#include <attnlab/train/optim.hpp>
#include <attnlab/train/vit.hpp>

#include "support.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <iterator>
#include <map>
#include <span>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include <unistd.h>

using namespace attnlab;
using namespace attnlab::train;

namespace {

constexpr std::uint64_t kMagic = 0x5241505449564C41ULL;  // the bytes "ALVITPAR"
constexpr std::uint32_t kVersion = 1;
const std::string kFixture = ATTNLAB_SOURCE_DIR "/tests/reference/fixtures/vit_parity.bin";

struct Tolerance {
  double rel, abs;  // limit = abs·max|ref| + rel·|ref|
};
constexpr Tolerance kExact{1e-9, 1e-12};  // forward, gradients, training losses and gradient norms
constexpr Tolerance kAdam{1e-9, 1e-9};    // parameters after the AdamW steps (see the header)

struct Tensor {
  std::string name;
  std::vector<std::int64_t> shape;
  std::vector<double> data;
  std::int64_t rows() const { return shape.size() == 2 ? shape[0] : 1; }
  std::int64_t cols() const { return shape.back(); }
};

struct Case {
  std::string name;
  VitConfig config;
  std::int64_t batch = 0, steps = 0;
  double label_smoothing = 0, clip_max_norm = 0;
  AdamWOptions adam;
  std::map<std::string, Tensor> tensors;

  const Tensor& at(const std::string& tensor) const {
    const auto it = tensors.find(tensor);
    if (it == tensors.end())
      throw std::runtime_error("vit_parity fixture: case '" + name + "' has no tensor '" + tensor + "'");
    return it->second;
  }
};

// Reads the fixture's bytes with bounds checks: every read names what it wanted and where the file ended.
class Reader {
 public:
  Reader(std::vector<char> bytes, std::string path) : bytes_(std::move(bytes)), path_(std::move(path)) {}

  template <class T>
  T read(const char* what) {
    T value;
    take(&value, sizeof(T), what);
    return value;
  }
  std::string str(const char* what) {
    const auto length = read<std::uint32_t>(what);
    if (length > 4096) fail(std::string("implausible length ") + std::to_string(length) + " of " + what);
    std::string s(length, '\0');
    take(s.data(), length, what);
    return s;
  }
  void doubles(std::vector<double>& out, std::size_t count, const std::string& what) {
    if (count > (bytes_.size() - pos_) / sizeof(double))
      fail("truncated: " + what + " needs " + std::to_string(count * sizeof(double)) + " bytes, " +
           std::to_string(bytes_.size() - pos_) + " left");
    out.resize(count);
    take(out.data(), count * sizeof(double), what.c_str());
  }
  bool done() const { return pos_ == bytes_.size(); }
  std::size_t position() const { return pos_; }
  [[noreturn]] void fail(const std::string& message) const {
    throw std::runtime_error("vit_parity fixture " + path_ + " (byte " + std::to_string(pos_) + " of " +
                             std::to_string(bytes_.size()) + "): " + message);
  }

 private:
  void take(void* out, std::size_t n, const char* what) {
    if (n > bytes_.size() - pos_)
      fail(std::string("truncated while reading ") + what + " (" + std::to_string(n) + " bytes wanted, " +
           std::to_string(bytes_.size() - pos_) + " left)");
    std::memcpy(out, bytes_.data() + pos_, n);
    pos_ += n;
  }
  std::vector<char> bytes_;
  std::string path_;
  std::size_t pos_ = 0;
};

std::vector<Case> read_fixture(const std::string& path) {
  static_assert(std::endian::native == std::endian::little, "the fixture is little-endian");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw std::runtime_error("vit_parity fixture " + path +
                             ": cannot open (regenerate it with /usr/bin/python3 tests/reference/vit_torch.py)");
  Reader r(std::vector<char>(std::istreambuf_iterator<char>(in), {}), path);

  const auto magic = r.read<std::uint64_t>("magic");
  if (magic != kMagic) {
    std::ostringstream s;
    s << "bad magic 0x" << std::hex << std::uppercase << magic << " (expected 0x" << kMagic
      << "): not a vit_parity fixture";
    r.fail(s.str());
  }
  const auto version = r.read<std::uint32_t>("version");
  if (version != kVersion)
    r.fail("version " + std::to_string(version) + ", this test reads version " + std::to_string(kVersion) +
           " (regenerate the fixture or update the reader)");
  const auto count = r.read<std::uint32_t>("case count");
  if (count == 0 || count > 64) r.fail("implausible case count " + std::to_string(count));

  std::vector<Case> cases;
  for (std::uint32_t n = 0; n < count; ++n) {
    Case c;
    c.name = r.str("case name");
    VitConfig& v = c.config;
    for (Index* field : {&v.image_h, &v.image_w, &v.channels, &v.classes, &v.patch_h, &v.patch_w, &v.dim, &v.depth,
                         &v.heads, &v.mlp_hidden})
      *field = static_cast<Index>(r.read<std::int64_t>("config"));
    v.qkv_bias = r.read<std::int64_t>("qkv_bias") != 0;
    v.ln_eps = r.read<double>("ln_eps");
    v.activation = ActivationSpec::parse(r.str("activation"));
    v.activation.p = static_cast<int>(r.read<std::int64_t>("p"));
    v.activation.k = KScale::parse(r.str("k"));
    v.activation.convention = parse_convention(r.str("convention"));
    c.batch = r.read<std::int64_t>("batch");
    c.steps = r.read<std::int64_t>("steps");
    c.label_smoothing = r.read<double>("label_smoothing");
    c.adam.beta1 = r.read<double>("beta1");
    c.adam.beta2 = r.read<double>("beta2");
    c.adam.eps = r.read<double>("adam eps");
    c.adam.weight_decay = r.read<double>("weight_decay");
    c.clip_max_norm = r.read<double>("clip_max_norm");
    if (c.batch < 1 || c.batch > 1 << 20 || c.steps < 1 || c.steps > 1 << 20)
      r.fail("case '" + c.name + "': implausible batch " + std::to_string(c.batch) + " or steps " +
             std::to_string(c.steps));
    const auto tensors = r.read<std::uint32_t>("tensor count");
    for (std::uint32_t t = 0; t < tensors; ++t) {
      Tensor x;
      x.name = r.str("tensor name");
      const auto rank = r.read<std::uint32_t>("tensor rank");
      if (rank < 1 || rank > 2) r.fail("tensor '" + x.name + "' has rank " + std::to_string(rank));
      std::size_t size = 1;
      for (std::uint32_t d = 0; d < rank; ++d) {
        x.shape.push_back(r.read<std::int64_t>("tensor shape"));
        if (x.shape.back() < 1 || x.shape.back() > (1 << 24)) r.fail("tensor '" + x.name + "' has a bad shape");
        size *= static_cast<std::size_t>(x.shape.back());
      }
      r.doubles(x.data, size, "tensor '" + x.name + "'");
      const std::string key = x.name;
      if (!c.tensors.emplace(key, std::move(x)).second) r.fail("case '" + c.name + "': duplicate tensor '" + key + "'");
    }
    cases.push_back(std::move(c));
  }
  if (!r.done()) r.fail("trailing bytes after the last case");
  return cases;
}

std::vector<char> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// A copy of the fixture, altered, in a temporary file removed on destruction.
struct TempFixture {
  std::string path;
  explicit TempFixture(const std::vector<char>& bytes) {
    path = (std::filesystem::temp_directory_path() /
            ("vit_parity_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".bin"))
               .string();
    std::ofstream out(path, std::ios::binary);
    out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  }
  ~TempFixture() { std::remove(path.c_str()); }
};

// Compares got against the fixture's tensor entry by entry, prints the worst error as a % of its limit.
::testing::AssertionResult matches(const std::string& label, std::span<const double> got, const Tensor& ref,
                                   Tolerance tol, std::int64_t rows = -1, std::int64_t cols = -1) {
  if (got.size() != ref.data.size() || (rows >= 0 && (rows != ref.rows() || cols != ref.cols())))
    return ::testing::AssertionFailure() << label << ": " << got.size() << " values (" << rows << "x" << cols
                                         << ") against the fixture's " << ref.data.size() << " (" << ref.rows() << "x"
                                         << ref.cols() << ")";
  double scale = 0;
  for (double v : ref.data) scale = std::max(scale, std::abs(v));
  double worst = 0, worst_abs = 0;
  std::size_t at = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double diff = std::abs(got[i] - ref.data[i]);
    const double limit = tol.abs * scale + tol.rel * std::abs(ref.data[i]);
    const double ratio = diff == 0 ? 0 : (limit > 0 ? diff / limit : INFINITY);
    worst_abs = std::max(worst_abs, diff);
    if (!(ratio <= worst)) worst = ratio, at = i;  // also catches NaN
  }
  std::ostringstream line;
  line << std::left << std::setw(44) << label << std::right << std::setw(6) << got.size() << " values  max|ref| "
       << std::scientific << std::setprecision(2) << scale << "  max|diff| " << worst_abs << "  worst " << std::fixed
       << std::setprecision(4) << 100 * worst << "% of limit";
  std::cout << "[ parity   ] " << line.str() << "\n";
  if (worst <= 1) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << std::setprecision(17) << label << ": entry " << at << " is " << got[at]
                                       << ", PyTorch " << ref.data[at] << " (|diff| "
                                       << std::abs(got[at] - ref.data[at]) << ", " << 100 * worst
                                       << "% of the limit abs " << tol.abs << "·" << scale << " + rel " << tol.rel
                                       << "·|ref|)";
}

MatrixD rows_of(const Tensor& t, std::int64_t first, std::int64_t count) {
  MatrixD m(count, t.cols());
  std::copy_n(t.data.begin() + first * t.cols(), count * t.cols(), m.data());
  return m;
}

std::vector<int> labels_of(const Tensor& t, std::int64_t first, std::int64_t count, Index classes) {
  std::vector<int> labels;
  for (std::int64_t i = first; i < first + count; ++i) {
    const double v = t.data.at(static_cast<std::size_t>(i));
    if (v != std::floor(v) || v < 0 || v >= double(classes))
      throw std::runtime_error("vit_parity fixture: train.labels[" + std::to_string(i) + "] = " + std::to_string(v) +
                               " is not a class index");
    labels.push_back(static_cast<int>(v));
  }
  return labels;
}

// Every tensor of the model's layout as the fixture's "<prefix><name>", shape checked.
void load_parameters(Vit<double>& model, const Case& c, const std::string& prefix) {
  std::size_t in_fixture = 0;
  for (const auto& [name, t] : c.tensors) in_fixture += name.rfind(prefix, 0) == 0;
  if (in_fixture != model.tensors().size())
    throw std::runtime_error("vit_parity fixture: case '" + c.name + "' has " + std::to_string(in_fixture) + " '" +
                             prefix + "*' tensors, the model " + std::to_string(model.tensors().size()));
  for (const auto& info : model.tensors()) {
    const Tensor& t = c.at(prefix + info.name);
    if (t.rows() != info.rows || t.cols() != info.cols)
      throw std::runtime_error("vit_parity fixture: case '" + c.name + "' tensor " + t.name + " is " +
                               std::to_string(t.rows()) + "x" + std::to_string(t.cols()) + ", the model stores " +
                               std::to_string(info.rows) + "x" + std::to_string(info.cols));
    std::copy(t.data.begin(), t.data.end(), model.parameters().begin() + info.offset);
  }
}

std::span<const double> slice(std::span<const double> all, const TensorInfo& info) {
  return all.subspan(static_cast<std::size_t>(info.offset), static_cast<std::size_t>(info.size()));
}

void check_case(const Case& c) {
  SCOPED_TRACE("case " + c.name);
  std::cout << "[ parity   ] case " << c.name << ": " << c.config.activation.label() << ", D " << c.config.dim
            << ", depth " << c.config.depth << ", heads " << c.config.heads << ", " << c.config.patches()
            << " patches of " << c.config.patch_h << "x" << c.config.patch_w << ", batch " << c.batch
            << ", label smoothing " << c.label_smoothing << ", clip " << c.clip_max_norm << "\n";
  Vit<double> model(c.config);
  load_parameters(model, c, "param.");
  const std::int64_t B = c.batch;
  const Tensor& images = c.at("train.images");
  const Tensor& labels = c.at("train.labels");
  ASSERT_EQ(images.rows(), c.steps * B);
  ASSERT_EQ(images.cols(), c.config.pixels());
  ASSERT_EQ(static_cast<std::int64_t>(labels.data.size()), c.steps * B);
  // The fixture's own consistency: step 0 trains on the first batch from the initial parameters, so PyTorch's
  // first training loss is its expected.loss (a script that saved views of parameters it later trained fails here).
  EXPECT_TRUE(test::close(c.at("train.losses").data.at(0), c.at("expected.loss").data.at(0), kExact.rel, 0))
      << "fixture: train.losses[0] differs from expected.loss";

  // The first batch: logits, loss, every gradient.
  {
    const MatrixD x = rows_of(images, 0, B);
    const std::vector<int> y = labels_of(labels, 0, B, c.config.classes);
    model.zero_grad();
    const double loss = model.forward(x, y, c.label_smoothing);
    model.backward();
    const MatrixD& logits = model.logits();
    EXPECT_TRUE(matches("logits", {logits.data(), static_cast<std::size_t>(logits.size())}, c.at("expected.logits"),
                        kExact, logits.rows(), logits.cols()));
    EXPECT_TRUE(matches("loss", std::span<const double>(&loss, 1), c.at("expected.loss"), kExact));
    for (const auto& info : model.tensors())
      EXPECT_TRUE(matches("grad " + info.name, slice(model.gradients(), info), c.at("grad." + info.name), kExact,
                          info.rows, info.cols));
  }

  // Ten training steps from the same initial parameters, one batch each.
  load_parameters(model, c, "param.");
  const Index count = static_cast<Index>(model.parameters().size());
  AdamW<double> opt(count, weight_decay_mask(model.tensors(), count), c.adam);
  const Tensor& lr = c.at("train.lr");
  ASSERT_EQ(static_cast<std::int64_t>(lr.data.size()), c.steps);
  std::vector<double> losses, norms;
  for (std::int64_t s = 0; s < c.steps; ++s) {
    const MatrixD x = rows_of(images, s * B, B);
    const std::vector<int> y = labels_of(labels, s * B, B, c.config.classes);
    model.zero_grad();
    losses.push_back(model.forward(x, y, c.label_smoothing));
    model.backward();
    norms.push_back(clip_gradient_norm(model.gradients(), c.clip_max_norm));
    EXPECT_GT(norms.back(), c.clip_max_norm) << "step " << s << ": clipping is not exercised";
    opt.step(model.parameters(), model.gradients(), lr.data[static_cast<std::size_t>(s)]);
  }
  EXPECT_TRUE(matches("train losses", losses, c.at("train.losses"), kExact));
  EXPECT_TRUE(matches("train gradient norms (before clipping)", norms, c.at("train.grad_norms"), kExact));
  for (const auto& info : model.tensors())
    EXPECT_TRUE(matches("final " + info.name, slice(model.parameters(), info), c.at("final." + info.name), kAdam,
                        info.rows, info.cols));
}

}  // namespace

TEST(VitParity, MatchesPyTorch) {
  std::vector<Case> cases;
  try {
    cases = read_fixture(kFixture);
  } catch (const std::exception& e) {
    FAIL() << e.what();
  }
  std::cout << "[ parity   ] " << kFixture << ": " << cases.size() << " cases\n";
  bool softmax = false, elementwise = false;
  for (const auto& c : cases) {
    softmax |= c.config.activation.name == "softmax";
    elementwise |= c.config.activation.name != "softmax";
    EXPECT_GT(c.label_smoothing, 0) << c.name;
    try {
      check_case(c);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "case " << c.name << ": " << e.what();
    }
  }
  EXPECT_TRUE(softmax && elementwise) << "the fixture should cover softmax and an elementwise activation";
}

namespace {

// A corrupted copy of the fixture must be refused with an error naming `word`.
void expect_rejected(const std::vector<char>& bytes, const std::string& word, const std::string& what) {
  const TempFixture copy(bytes);
  try {
    read_fixture(copy.path);
    ADD_FAILURE() << "a fixture " << what << " was accepted";
  } catch (const std::runtime_error& e) {
    std::cout << "[ rejected ] " << e.what() << "\n";
    EXPECT_NE(std::string(e.what()).find(word), std::string::npos) << e.what();
  }
}

}  // namespace

TEST(VitParity, RejectsBadMagic) {
  std::vector<char> bytes = file_bytes(kFixture);
  ASSERT_GE(bytes.size(), 12u) << kFixture;
  bytes[0] ^= 0x5a;
  expect_rejected(bytes, "bad magic", "with a corrupted magic");
}

TEST(VitParity, RejectsOtherVersion) {
  std::vector<char> bytes = file_bytes(kFixture);
  ASSERT_GE(bytes.size(), 12u) << kFixture;
  const std::uint32_t version = kVersion + 1;
  std::memcpy(bytes.data() + 8, &version, sizeof version);
  expect_rejected(bytes, "version", "of another version");
}

TEST(VitParity, RejectsTruncatedFile) {
  const std::vector<char> bytes = file_bytes(kFixture);
  ASSERT_GE(bytes.size(), 12u) << kFixture;
  for (const std::size_t keep : {bytes.size() - 1, bytes.size() / 2, std::size_t(40), std::size_t(10)})
    expect_rejected(std::vector<char>(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(keep)), "truncated",
                    "cut to " + std::to_string(keep) + " bytes");
}

namespace {

// The worst |got − ref| of a tensor over its largest |ref|.
double relative_error(std::span<const float> got, const Tensor& ref) {
  double scale = 0, worst = 0;
  for (double v : ref.data) scale = std::max(scale, std::abs(v));
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::abs(double(got[i]) - ref.data[i]));
  return worst / scale;
}

struct FirstBatchErrors {
  double logits = 0, loss = 0, gradients = 0;  // gradients: the worst tensor
};

// Vit<float> on the first batch from the fixture's parameters, with the linear layers' products as `precision` says.
FirstBatchErrors float_errors(const Case& c, ProductPrecision precision) {
  VitConfig config = c.config;
  config.matmul = precision;
  Vit<float> model(config);
  for (const auto& info : model.tensors()) {
    const Tensor& t = c.at("param." + info.name);
    std::transform(t.data.begin(), t.data.end(), model.parameters().begin() + info.offset,
                   [](double v) { return float(v); });
  }
  const MatrixD x = rows_of(c.at("train.images"), 0, c.batch);
  model.zero_grad();
  const double loss = model.forward(x.cast<float>(), labels_of(c.at("train.labels"), 0, c.batch, config.classes),
                                    c.label_smoothing);
  model.backward();
  FirstBatchErrors e;
  const Matrix<float>& logits = model.logits();
  e.logits = relative_error({logits.data(), static_cast<std::size_t>(logits.size())}, c.at("expected.logits"));
  e.loss = std::abs(loss - c.at("expected.loss").data.at(0)) / std::abs(c.at("expected.loss").data.at(0));
  for (const auto& info : model.tensors()) {
    const std::span<const float> g(model.gradients().data() + info.offset, static_cast<std::size_t>(info.size()));
    e.gradients = std::max(e.gradients, relative_error(g, c.at("grad." + info.name)));
  }
  return e;
}

}  // namespace

// The bf16 product mode against PyTorch's float64 model, beside the float model's own error. To first order every
// rounding moves the output by its unit roundoff times a sensitivity that does not depend on the format, so rounding
// the linear layers' operands at bf16's 2^-8 instead of float's 2^-24 scales their share of the float model's error
// by at most 2^16: the bf16 error stays within 4·2^16 of the float one (4: the errors' random signs), and exceeds 2^8
// of it where the mode reaches the products at all (measured 2^13–2^14.4 on the fixture's cases).
TEST(VitParity, Bf16ProductsStayNearPyTorch) {
  const std::vector<Case> cases = read_fixture(kFixture);
  constexpr double kMost = 4 * 65536.0, kLeast = 256;
  for (const auto& c : cases) {
    const FirstBatchErrors native = float_errors(c, ProductPrecision::native),
                           bf16 = float_errors(c, ProductPrecision::bf16);
    std::cout << std::scientific << std::setprecision(2) << "[ bf16     ] case " << c.name << ": logits "
              << native.logits << " (float) " << bf16.logits << " (bf16), loss " << native.loss << " " << bf16.loss
              << ", gradients (worst tensor) " << native.gradients << " " << bf16.gradients
              << " of the tensor's largest entry\n";
    for (const auto& [what, f, b] : {std::tuple{"logits", native.logits, bf16.logits},
                                     std::tuple{"gradients", native.gradients, bf16.gradients}}) {
      EXPECT_LE(b, kMost * f) << c.name << " " << what;
      EXPECT_GE(b, kLeast * f) << c.name << " " << what;
    }
  }
}
