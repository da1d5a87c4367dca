// JsonlCheckpoint: a Monte-Carlo checkpoint file of JSON lines, as written and with every line that is a JSON object
// sealed again here, so that mutations reach the reader behind the checksum. Every configuration it resumes reads back
// the same after a store.
#include "fuzz.hpp"

#include <attnlab/io/checkpoint.hpp>
#include <attnlab/io/files.hpp>
#include <attnlab/io/table.hpp>

#include <sstream>

using namespace attnlab;

namespace {

const std::string kVersion = "0.1.0 abc1234";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::MemoryFile file;
  std::string lines = fuzz::bytes_of(data, size), resealed;
  std::vector<std::string> keys;
  std::istringstream in(lines);
  for (std::string line; std::getline(in, line);) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object()) continue;
    resealed += io::sealed(j).dump() + "\n";
    if (const auto key = j.find("key"); key != j.end() && key->is_string()) keys.push_back(key->get<std::string>());
  }
  io::JsonlCheckpoint checkpoint(file.path(lines + "\n" + resealed), kVersion);
  for (const auto& key : keys) {
    std::vector<ResultRow> rows, back;
    if (!checkpoint.find(key, rows)) continue;
    const auto emptied = file.path("");
    io::JsonlCheckpoint(emptied, kVersion).store(key, rows);
    fuzz::expect(io::JsonlCheckpoint(emptied, kVersion).find(key, back) && back.size() == rows.size(),
                 "a resumed configuration does not store and read back");
    for (std::size_t i = 0; i < rows.size(); ++i)
      fuzz::expect(io::to_json(back[i]) == io::to_json(rows[i]), "a resumed row does not store and read back");
  }
  return 0;
}

std::vector<std::string> fuzz_seeds() {
  const fuzz::MemoryFile file;
  const auto path = file.path("");
  ResultRow row;
  row.study = "poly_frobenius", row.quantity = "phi_fro", row.activation = "poly", row.N = 64, row.D = 16, row.d = 8;
  row.p = 3, row.k = KScale::parse("sqrtN"), row.sigma_x = 1, row.trials = 100,
  row.value = {.count = 100, .mean = 1.25, .se = 0.01, .ci_lo = 1.23, .ci_hi = 1.27};
  io::JsonlCheckpoint checkpoint(path, kVersion);
  checkpoint.store("poly|N=64", {row});
  row.extra = {{"seed", 3}};
  checkpoint.store("poly|N=64|extra", {row, row});
  checkpoint.store("empty", {});
  return {io::read_file(path)};
}
