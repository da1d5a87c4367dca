// Trainer::restore: a saved training state. The first byte chooses whether the rest is sealed with its checksum here,
// so that mutations reach the reader behind the checksum as a crafted file would.
#include "fuzz.hpp"

#include <attnlab/core/rng.hpp>
#include <attnlab/train/trainer.hpp>

#include <cstring>

using namespace attnlab;

namespace {

train::Trainer& micro_trainer() {
  static train::Trainer trainer = [] {
    train::TrainConfig c;
    c.model = train::VitConfig::preset("micro");
    c.model.image_h = 8, c.model.image_w = 8, c.model.patch_h = 4, c.model.patch_w = 4, c.model.classes = 2;
    c.batch = 4, c.steps = 4, c.warmup = 1, c.log_every = 2;
    train::Dataset data;
    data.height = data.width = 8, data.classes = 2;
    for (int i = 0; i < 8; ++i) {
      data.labels.push_back(i % 2);
      for (int j = 0; j < 64; ++j) data.pixels.push_back(std::uint8_t(i * 64 + j * 3));
    }
    return train::Trainer(c, data, data);
  }();
  return trainer;
}

std::string sealed(std::string bytes) {
  const std::uint64_t checksum = hash_string(bytes);
  bytes.append(reinterpret_cast<const char*>(&checksum), sizeof checksum);
  return bytes;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  auto& trainer = micro_trainer();
  const std::string body = fuzz::bytes_of(data + 1, size - 1);
  const std::string state = data[0] % 2 ? body : sealed(body);
  const std::string before = trainer.save();
  bool restored = false;
  fuzz::parse_or_reject([&] {
    trainer.restore(state);
    restored = true;
  });
  // A refused state leaves the trainer as it was; a restored one is the state it saves.
  fuzz::expect(trainer.save() == (restored ? state : before),
               restored ? "restored state does not save back" : "a refused state changed the trainer");
  if (restored) trainer.restore(before);
  return 0;
}

std::vector<std::string> fuzz_seeds() {
  auto& trainer = micro_trainer();
  const auto unsealed = [](const std::string& state) {
    return std::string(1, '\0') + state.substr(0, state.size() - 8);
  };
  std::vector<std::string> seeds{unsealed(trainer.save())};
  trainer.train_step(), trainer.train_step(), trainer.record_validation();
  seeds.push_back(unsealed(trainer.save()));
  seeds.push_back('\1' + trainer.save());
  return seeds;
}
