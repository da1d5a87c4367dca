// read_idx: an images file and a labels file (gzip or plain IDX), split from one input.
#include "fuzz.hpp"

#include <attnlab/train/data.hpp>

#include <zlib.h>

using namespace attnlab;

namespace {

std::string idx(std::uint32_t magic, const std::vector<std::uint32_t>& sizes, const std::string& data) {
  std::string out;
  for (std::uint32_t word : [&] {
         auto w = sizes;
         w.insert(w.begin(), magic);
         return w;
       }())
    for (int shift = 24; shift >= 0; shift -= 8) out += char(word >> shift & 0xff);
  return out + data;
}

std::string gzipped(const std::string& bytes) {
  z_stream z{};
  deflateInit2(&z, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);  // 15 + 16: a gzip header
  std::string out(deflateBound(&z, bytes.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  z.avail_in = uInt(bytes.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::MemoryFile images, labels;
  const auto parts = fuzz::split(fuzz::bytes_of(data, size));
  fuzz::parse_or_reject([&] {
    const auto d = train::read_idx(images.path(parts.first), labels.path(parts.second));
    fuzz::expect(d.pixels.size() == std::size_t(d.size()) * std::size_t(d.image_size()),
                 "pixels do not fill the images");
    for (int label : d.labels) fuzz::expect(label >= 0 && label < d.classes, "a label outside the classes");
  });
  return 0;
}

std::vector<std::string> fuzz_seeds() {
  std::string pixels;
  for (int i = 0; i < 3 * 4 * 5; ++i) pixels += char(i * 7);
  const auto images = idx(0x803, {3, 4, 5}, pixels), labels = idx(0x801, {3}, std::string("\x00\x09\x04", 3));
  return {fuzz::joined(images, labels), fuzz::joined(gzipped(images), gzipped(labels)),
          fuzz::joined(idx(0x803, {0, 28, 28}, ""), idx(0x801, {0}, ""))};
}
