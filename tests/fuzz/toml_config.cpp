// config_arguments: a study's TOML config, then the arguments it yields parsed by the study's flags.
#include "fuzz.hpp"

#include <attnlab/core/text.hpp>
#include <attnlab/core/types.hpp>
#include <attnlab/io/config_file.hpp>

using namespace attnlab;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const fuzz::MemoryFile config;
  CLI::App app{"fuzz"};
  std::vector<Index> N;
  std::uint64_t seed = 0;
  double sigma = 0;
  std::string out, config_file;
  bool quick = false;
  app.add_option("--N", N)->delimiter(',');
  app.add_option("--seed", seed);
  app.add_option("--sigma-x", sigma);
  app.add_option("--out", out);
  app.add_option("--config", config_file);
  app.add_flag("--quick", quick);
  const std::vector<std::string> argv{"fuzz", "--seed", "3"};
  fuzz::parse_or_reject([&] {
    auto args = io::config_arguments(config.path(fuzz::bytes_of(data, size)), app, argv);
    for (const auto& a : args) {
      const auto key = a.substr(0, a.find('='));
      fuzz::expect(a.rfind("--", 0) == 0 && a.find('=') != std::string::npos, "not one --key=value argument: " + a);
      fuzz::expect(key != "--seed" && key != "--config", "a key given on the command line or --config");
    }
    args.insert(args.begin(), argv.begin() + 1, argv.end());
    std::reverse(args.begin(), args.end());
    try {
      app.parse(args);
    } catch (const CLI::ParseError& e) {  // as run_study reports it
      throw std::invalid_argument(excerpt(e.what(), io::kMaxFlagError));
    }
    fuzz::expect(seed == 3, "the command line lost to the config");
  });
  return 0;
}

std::vector<std::string> fuzz_seeds() {
  return {"N = [16, 64, 256]\nsigma-x = 0.5\nout = \"results/x\"\nquick = true\n", "seed = 9\nN = 8\n",
          "# a comment\n[table]\nkey = 1\n", "N = \"16,32\"\nquick = false\nsigma-x = 1e-3\n"};
}
