// The replay executable of a fuzz target, built by the normal compiler: runs every input file (or every file of
// every folder) given, so ctest replays the committed corpus; --write-seeds DIR writes the target's seeds there.
#include "fuzz.hpp"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

namespace fs = std::filesystem;

int main(int argc, char** argv) {
  if (argc == 3 && std::string(argv[1]) == "--write-seeds") {
    fs::create_directories(argv[2]);
    const auto seeds = fuzz_seeds();
    for (std::size_t i = 0; i < seeds.size(); ++i)
      std::ofstream(fs::path(argv[2]) / ("seed-" + std::to_string(i)), std::ios::binary) << seeds[i];
    std::cout << seeds.size() << " seeds written to " << argv[2] << "\n";
    return 0;
  }
  std::vector<fs::path> inputs;
  for (int i = 1; i < argc; ++i) {
    if (fs::is_directory(argv[i])) {
      for (const auto& entry : fs::directory_iterator(argv[i]))
        if (entry.is_regular_file()) inputs.push_back(entry.path());
    } else {
      inputs.emplace_back(argv[i]);
    }
  }
  if (inputs.empty()) {
    std::cerr << "usage: " << argv[0] << " (FILE | DIR)... | --write-seeds DIR\n";
    return 2;
  }
  std::sort(inputs.begin(), inputs.end());
  for (const auto& input : inputs) {
    std::ifstream in(input, std::ios::binary);
    std::ostringstream bytes;
    bytes << in.rdbuf();
    const std::string data = bytes.str();
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(data.data()), data.size());
  }
  std::cout << inputs.size() << " inputs replayed, each parsed or refused in one line\n";
  return 0;
}
