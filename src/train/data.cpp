#include <attnlab/core/machine.hpp>
#include <attnlab/core/rng.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/train/data.hpp>

#include <zlib.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

namespace attnlab::train {

namespace {

// The whole file, gunzipped when it is gzip (zlib reads plain files unchanged).
std::vector<std::uint8_t> read_bytes(const std::filesystem::path& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f || !std::filesystem::is_regular_file(path)) {
    if (f) gzclose(f);
    throw std::runtime_error(text(path.string(), ": cannot open (is dataset-fashion-mnist installed?)"));
  }
  std::vector<std::uint8_t> out;
  std::uint8_t buffer[1 << 16];
  int got = 0;
  // A gzip stream can expand a thousandfold: stopped before it outgrows the memory it would need twice over.
  const double limit = physical_memory_bytes() / 4;
  while ((got = gzread(f, buffer, sizeof buffer)) > 0) {
    out.insert(out.end(), buffer, buffer + got);
    if (double(out.size()) > limit) {
      gzclose(f);
      throw std::runtime_error(text(path.string(), ": decompresses to more than a quarter of this machine's memory"));
    }
  }
  int error = Z_OK;
  const std::string message = gzerror(f, &error);  // a copy: the text lives in f, freed by gzclose
  gzclose(f);
  if (got < 0 || (error != Z_OK && error != Z_STREAM_END))
    throw std::runtime_error(text(path.string(), ": corrupt gzip stream (", message, ")"));
  return out;
}

// Larger sides than any image dataset has, and small enough that C·H·W never overflows.
constexpr std::uint32_t kMaxSide = 1 << 16;

std::uint32_t big_endian(const std::vector<std::uint8_t>& b, std::size_t at) {
  return std::uint32_t{b[at]} << 24 | std::uint32_t{b[at + 1]} << 16 | std::uint32_t{b[at + 2]} << 8 | b[at + 3];
}

// The header words of an IDX file after checking its magic; throws naming the file.
std::vector<std::uint32_t> idx_header(const std::vector<std::uint8_t>& b, std::uint32_t magic, int dims,
                                      const std::filesystem::path& path) {
  const std::size_t header = 4 + 4 * std::size_t(dims);
  if (b.size() < header) throw std::runtime_error(text(path.string(), ": truncated IDX header"));
  if (big_endian(b, 0) != magic)
    throw std::runtime_error(text(path.string(), ": wrong magic ", big_endian(b, 0), " (expected ", magic, ", idx",
                                  dims == 3 ? "3 images" : "1 labels", ")"));
  std::vector<std::uint32_t> sizes;
  std::size_t expected = 1;
  bool overflow = false;
  for (int d = 0; d < dims; ++d) {
    sizes.push_back(big_endian(b, 4 + 4 * std::size_t(d)));
    overflow |= __builtin_mul_overflow(expected, std::size_t{sizes.back()}, &expected);
  }
  if (overflow) throw std::runtime_error(text(path.string(), ": header sizes whose product overflows 64 bits"));
  if (b.size() != header + expected)
    throw std::runtime_error(text(path.string(), ": truncated or oversized (", b.size() - header,
                                  " data bytes, header says ", expected, ")"));
  return sizes;
}

}  // namespace

Dataset read_idx(const std::filesystem::path& images, const std::filesystem::path& labels) {
  const auto ib = read_bytes(images), lb = read_bytes(labels);
  const auto is = idx_header(ib, 0x803, 3, images), ls = idx_header(lb, 0x801, 1, labels);
  if (is[0] == 0) throw std::runtime_error(text(images.string(), ": holds no images"));
  if (is[1] == 0 || is[2] == 0 || is[1] > kMaxSide || is[2] > kMaxSide)
    throw std::runtime_error(
        text(images.string(), ": images of ", is[1], "x", is[2], " pixels (each side must be 1 to ", kMaxSide, ")"));
  if (is[0] != ls[0])
    throw std::runtime_error(
        text(images.string(), " has ", is[0], " images but ", labels.string(), " has ", ls[0], " labels"));
  Dataset d;
  d.height = is[1], d.width = is[2];
  d.pixels.assign(ib.begin() + 16, ib.end());
  d.labels.assign(lb.begin() + 8, lb.end());
  for (int l : d.labels)
    if (l >= d.classes) throw std::runtime_error(text(labels.string(), ": label ", l, " outside [0, ", d.classes, ")"));
  return d;
}

Dataset load_fashion_mnist(const std::filesystem::path& dir, bool train) {
  const std::size_t split = train ? 0 : 2;
  return read_idx(dir / kFashionMnistFiles[split], dir / kFashionMnistFiles[split + 1]);
}

Dataset read_cifar10(const std::vector<std::filesystem::path>& files) {
  constexpr std::size_t record = 1 + 3 * 32 * 32;
  Dataset d;
  d.channels = 3, d.height = 32, d.width = 32;
  for (const auto& path : files) {
    const auto b = read_bytes(path);
    if (b.empty() || b.size() % record != 0)
      throw std::runtime_error(
          text(path.string(), ": ", b.size(), " bytes is not a whole number of 3,073-byte CIFAR-10 records"));
    for (std::size_t at = 0; at < b.size(); at += record) {
      if (b[at] >= 10) throw std::runtime_error(text(path.string(), ": label ", int(b[at]), " outside [0, 10)"));
      d.labels.push_back(b[at]);
      d.pixels.insert(d.pixels.end(), b.begin() + std::ptrdiff_t(at + 1), b.begin() + std::ptrdiff_t(at + record));
    }
  }
  return d;
}

const std::vector<std::uint32_t>& recall_codebook() {
  static const std::vector<std::uint32_t> codes = [] {
    constexpr int kMinDistance = 3;
    const std::uint64_t key = hash_string("attnlab recall codebook");
    std::vector<std::uint32_t> accepted;
    for (std::uint32_t draw = 0; accepted.size() < std::size_t(kRecallCodes); ++draw) {
      const std::uint32_t code = philox::generate(draw, 0, 0, 0, std::uint32_t(key), std::uint32_t(key >> 32)).v[0] &
                                 ((1u << kRecallKeyBits) - 1);
      if (std::all_of(accepted.begin(), accepted.end(),
                      [&](std::uint32_t c) { return std::popcount(c ^ code) >= kMinDistance; }))
        accepted.push_back(code);
    }
    return accepted;
  }();
  return codes;
}

namespace {

constexpr std::uint32_t kRecallTag = 0x72636c00;  // "rcl": the recall streams' counters, apart from the batches' draws

// Draw j of example n: for a pair j < N − 1, v[0] places its key and v[1] is its value; draw N − 1 picks the target.
philox::Block recall_draw(const RecallStream& s, Index n, Index j) {
  return philox::generate(std::uint32_t(n), std::uint32_t(std::uint64_t(n) >> 32), std::uint32_t(j),
                          kRecallTag | std::uint32_t(s.split), std::uint32_t(s.seed), std::uint32_t(s.seed >> 32));
}
Index recall_target(const RecallStream& s, Index n) {
  return Index(recall_draw(s, n, s.tokens - 1).v[0] % std::uint32_t(s.tokens - 1));
}
int recall_value(const RecallStream& s, Index n, Index pair) {
  return int(recall_draw(s, n, pair).v[1] % std::uint32_t(kRecallClasses));
}

void write_key(std::uint32_t code, std::uint8_t* token) {
  for (Index b = 0; b < kRecallKeyBits; ++b) token[b] = (code >> b) & 1 ? 255 : 0;
}

// Example n's C·H·W bytes: stored, or generated into `buffer`.
const std::uint8_t* example_pixels(const Dataset& data, Index n, std::vector<std::uint8_t>& buffer) {
  if (!data.recall) return data.pixels.data() + n * data.image_size();
  buffer.resize(std::size_t(data.image_size()));
  recall_example(*data.recall, n, buffer);
  return buffer.data();
}

}  // namespace

Dataset recall_dataset(const RecallStream& stream, Index count) {
  if (stream.tokens < 2 || stream.tokens > kRecallCodes)
    throw std::invalid_argument(text("N must be in [2, ", kRecallCodes, "] for the recall task: a query and up to ",
                                     kRecallCodes, " distinct keys (got ", stream.tokens, ")"));
  Dataset d;
  d.height = stream.tokens, d.width = kRecallWidth, d.classes = kRecallClasses;
  d.recall = stream;
  d.labels.resize(std::size_t(count));
  for (Index n = 0; n < count; ++n) d.labels[std::size_t(n)] = recall_value(stream, n, recall_target(stream, n));
  return d;
}

int recall_example(const RecallStream& s, Index n, std::span<std::uint8_t> pixels) {
  const Index N = s.tokens, W = kRecallWidth;
  if (Index(pixels.size()) != N * W)
    throw std::invalid_argument(text("recall example: ", pixels.size(), " bytes for ", N, " tokens"));
  const auto& codes = recall_codebook();
  thread_local std::vector<std::uint32_t> order;  // a partial Fisher–Yates shuffle of the codebook: distinct keys
  order.resize(std::size_t(kRecallCodes));
  std::iota(order.begin(), order.end(), 0u);
  std::fill(pixels.begin(), pixels.end(), std::uint8_t{0});
  for (Index j = 0; j + 1 < N; ++j) {
    const auto draw = recall_draw(s, n, j);
    std::swap(order[std::size_t(j)], order[std::size_t(j) + draw.v[0] % std::uint32_t(kRecallCodes - j)]);
    std::uint8_t* token = pixels.data() + j * W;
    write_key(codes[order[std::size_t(j)]], token);
    token[kRecallKeyBits + draw.v[1] % std::uint32_t(kRecallClasses)] = 255;
  }
  const Index target = recall_target(s, n);
  std::uint8_t* query = pixels.data() + (N - 1) * W;
  write_key(codes[order[std::size_t(target)]], query);
  query[W - 1] = 255;
  return recall_value(s, n, target);
}

Dataset first(Dataset data, Index count) {
  if (count > 0 && count < data.size()) {
    data.labels.resize(std::size_t(count));
    if (!data.recall) data.pixels.resize(std::size_t(count * data.image_size()));
  }
  return data;
}

Dataset pad(const Dataset& data, Index height, Index width) {
  if (height < data.height || width < data.width)
    throw std::invalid_argument(
        text("pad: ", data.height, "x", data.width, " images do not fit in ", height, "x", width));
  Dataset out = data;
  out.height = height, out.width = width;
  out.pixels.assign(std::size_t(data.size() * out.image_size()), 0);
  const Index top = (height - data.height) / 2, left = (width - data.width) / 2;
  for (Index n = 0; n < data.size(); ++n)
    for (Index c = 0; c < data.channels; ++c)
      for (Index i = 0; i < data.height; ++i)
        std::copy_n(data.pixels.begin() + ((n * data.channels + c) * data.height + i) * data.width, data.width,
                    out.pixels.begin() + ((n * out.channels + c) * height + top + i) * width + left);
  return out;
}

std::vector<Index> epoch_order(Index n, std::uint64_t seed, long epoch) {
  // Sorting by Gaussian keys from one stream: a uniform permutation (ties have probability 0).
  MatrixD keys(1, n);
  GaussianStream(seed, hash_words({hash_string("epoch"), std::uint64_t(epoch)}), 0, StreamTag::Search)
      .fill(std::span<double>(keys.data(), std::size_t(n)), 1.0);
  std::vector<Index> order(static_cast<std::size_t>(n));
  std::iota(order.begin(), order.end(), Index{0});
  std::stable_sort(order.begin(), order.end(), [&](Index a, Index b) { return keys(0, a) < keys(0, b); });
  return order;
}

std::pair<Dataset, Dataset> split(const Dataset& data, Index validation, std::uint64_t seed) {
  if (data.recall)
    throw std::logic_error("split: a generated set's validation examples come from a stream of their own");
  if (validation < 0 || validation >= data.size())
    throw std::invalid_argument(text("validation size must be in [0, ", data.size(), ") (got ", validation, ")"));
  const auto order = epoch_order(data.size(), seed, -1);
  std::pair<Dataset, Dataset> out;
  for (auto* part : {&out.first, &out.second}) {
    *part = data;
    part->pixels.clear();
    part->labels.clear();
  }
  const Index train = data.size() - validation, size = data.image_size();
  for (Index r = 0; r < data.size(); ++r) {
    Dataset& part = r < train ? out.first : out.second;
    const Index n = order[std::size_t(r)];
    part.labels.push_back(data.labels[std::size_t(n)]);
    part.pixels.insert(part.pixels.end(), data.pixels.begin() + n * size, data.pixels.begin() + (n + 1) * size);
  }
  return out;
}

Normalisation Normalisation::of(const Dataset& data) {
  Normalisation n;
  const Index plane = data.height * data.width, C = data.channels;
  const Index examples = data.recall ? std::min(data.size(), kGeneratedSample) : data.size();
  std::vector<double> sum(std::size_t(C), 0.0), sum2(std::size_t(C), 0.0);
  std::vector<std::uint8_t> generated;
  for (Index e = 0; e < examples; ++e) {
    const std::uint8_t* image = example_pixels(data, e, generated);
    for (Index c = 0; c < C; ++c)
      for (Index i = 0; i < plane; ++i) {
        const double v = image[c * plane + i] / 255.0;
        sum[std::size_t(c)] += v, sum2[std::size_t(c)] += v * v;
      }
  }
  for (Index c = 0; c < C; ++c) {
    const double count = double(examples * plane), mean = sum[std::size_t(c)] / count;
    n.mean.push_back(mean);
    n.std.push_back(std::sqrt(std::max(sum2[std::size_t(c)] / count - mean * mean, 1e-12)));
  }
  return n;
}

template <class T>
void make_batch(const Dataset& data, std::span<const Index> indices, const Normalisation& norm,
                const Augmentation& augment, std::uint64_t seed, long step, Matrix<T>& images,
                std::vector<int>& labels) {
  const Index B = static_cast<Index>(indices.size()), C = data.channels, H = data.height, W = data.width;
  images.resize(B, C * H * W);
  labels.resize(std::size_t(B));
  std::vector<std::uint8_t> generated;
  for (Index b = 0; b < B; ++b) {
    const Index n = indices[std::size_t(b)];
    labels[std::size_t(b)] = data.labels[std::size_t(n)];
    const std::uint8_t* image = example_pixels(data, n, generated);
    Index dy = 0, dx = 0;
    bool mirror = false;
    if (augment.random_crop || augment.flip) {
      const auto block = philox::generate(std::uint32_t(step), std::uint32_t(std::uint64_t(step) >> 32),
                                          std::uint32_t(b), 0, std::uint32_t(seed), std::uint32_t(seed >> 32));
      const Index span = 2 * augment.crop_padding + 1;
      if (augment.random_crop)
        dy = Index(block.v[0] % span) - augment.crop_padding, dx = Index(block.v[1] % span) - augment.crop_padding;
      mirror = augment.flip && (block.v[2] & 1);
    }
    for (Index c = 0; c < C; ++c)
      for (Index i = 0; i < H; ++i)
        for (Index j = 0; j < W; ++j) {
          const Index si = i + dy, sj = (mirror ? W - 1 - j : j) + dx;
          const double pixel = si >= 0 && si < H && sj >= 0 && sj < W ? image[(c * H + si) * W + sj] / 255.0 : 0.0;
          images(b, (c * H + i) * W + j) = T((pixel - norm.mean[std::size_t(c)]) / norm.std[std::size_t(c)]);
        }
  }
}

template void make_batch<float>(const Dataset&, std::span<const Index>, const Normalisation&, const Augmentation&,
                                std::uint64_t, long, Matrix<float>&, std::vector<int>&);
template void make_batch<double>(const Dataset&, std::span<const Index>, const Normalisation&, const Augmentation&,
                                 std::uint64_t, long, Matrix<double>&, std::vector<int>&);

}  // namespace attnlab::train
