// read_cifar10: one batch file of 3,073-byte records.
#include "fuzz.hpp"

#include <attnlab/train/data.hpp>

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::MemoryFile batch;
  fuzz::parse_or_reject([&] {
    const auto d = train::read_cifar10({batch.path(fuzz::bytes_of(data, size))});
    fuzz::expect(d.image_size() == 3 * 32 * 32 && d.size() > 0, "not CIFAR-10's image shape");
    fuzz::expect(d.pixels.size() == std::size_t(d.size()) * std::size_t(d.image_size()),
                 "pixels do not fill the images");
    for (int label : d.labels) fuzz::expect(label >= 0 && label < 10, "a label outside [0, 10)");
  });
  return 0;
}

std::vector<std::string> fuzz_seeds() {
  std::string two;
  for (int label : {3, 9}) {
    two += char(label);
    for (int i = 0; i < 3072; ++i) two += char((i * 31 + label) & 0xff);
  }
  return {two.substr(0, 3073), two};
}
