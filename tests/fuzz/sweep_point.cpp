// read_point_record: a training-sweep point file, as written and (when the bytes are a JSON object) sealed again here,
// so that mutations reach the reader behind the checksum.
#include "fuzz.hpp"

#include <attnlab/io/files.hpp>
#include <attnlab/io/sweep_point.hpp>

#include <cmath>

using namespace attnlab;

namespace {

const std::string kKey = "k_sweep|N=16|k=1|seed=1";

void read_and_check(const std::string& bytes) {
  const auto point = io::read_point_record(bytes, kKey);
  if (!point) return;
  const auto again = io::read_point_record(io::point_record(kKey, *point), kKey);
  fuzz::expect(again.has_value() && again->diverged_at == point->diverged_at &&
                   again->measurements.size() == point->measurements.size(),
               "a point does not read back");
  for (std::size_t i = 0; i < point->measurements.size(); ++i) {
    const auto &a = point->measurements[i], &b = again->measurements[i];
    fuzz::expect(a.quantity == b.quantity && a.step == b.step && a.layer == b.layer &&
                     (a.value == b.value || (std::isnan(a.value) && std::isnan(b.value))),
                 "a measurement does not read back");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string bytes = fuzz::bytes_of(data, size);
  read_and_check(bytes);
  const auto j = nlohmann::json::parse(bytes, nullptr, false);
  if (j.is_object()) read_and_check(io::sealed(j).dump());
  return 0;
}

std::vector<std::string> fuzz_seeds() {
  io::PointResult result;
  result.measurements = {
      {"val_accuracy", 0.625}, {"val_loss", 1.25}, {"train_loss", std::nan("")}, {"phi_fro", 3.5, 10, 2}};
  io::PointResult diverged;
  diverged.diverged_at = 7;
  auto unsealed = nlohmann::json::parse(io::point_record(kKey, result));
  unsealed.erase("checksum");
  return {io::point_record(kKey, result), io::point_record(kKey, diverged), unsealed.dump()};
}
