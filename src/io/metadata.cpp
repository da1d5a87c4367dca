#include <attnlab/git_version.hpp>
#include <attnlab/io/metadata.hpp>

#include <Random123/features/compilerfeatures.h>
#include <omp.h>
#include <toml++/toml.h>
#include <CLI/Version.hpp>
#include <Eigen/Core>
#include <boost/version.hpp>

#include <fstream>
#include <thread>

namespace attnlab::io {
namespace {

std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

std::string version3(int a, int b, int c) {
  return std::to_string(a) + "." + std::to_string(b) + "." + std::to_string(c);
}

}  // namespace

std::string git_description() {
  return std::string(ATTNLAB_GIT_SHA) + (std::string(ATTNLAB_GIT_DIRTY) == "true" ? " (dirty)" : "");
}

nlohmann::json run_metadata(const std::string& study, const nlohmann::json& config, double wall_seconds) {
  return {
      {"study", study},
      {"config", config},
      {"seed", config.value("seed", nlohmann::json())},
      {"attnlab", {{"version", ATTNLAB_VERSION}, {"git_sha", ATTNLAB_GIT_SHA}, {"git_dirty", ATTNLAB_GIT_DIRTY}}},
      {"build",
       {{"compiler",
#ifdef __clang__
         "clang " __VERSION__
#else
         "gcc " __VERSION__
#endif
        },
        {"build_type", ATTNLAB_BUILD_TYPE},
        {"flags", ATTNLAB_CXX_FLAGS},
        {"simd", Eigen::SimdInstructionSetsInUse()}}},
      {"libraries",
       {{"eigen", version3(EIGEN_WORLD_VERSION, EIGEN_MAJOR_VERSION, EIGEN_MINOR_VERSION)},
        {"boost", version3(BOOST_VERSION / 100000, BOOST_VERSION / 100 % 1000, BOOST_VERSION % 100)},
        {"cli11", CLI11_VERSION},
        {"nlohmann_json",
         version3(NLOHMANN_JSON_VERSION_MAJOR, NLOHMANN_JSON_VERSION_MINOR, NLOHMANN_JSON_VERSION_PATCH)},
        {"tomlplusplus", version3(TOML_LIB_MAJOR, TOML_LIB_MINOR, TOML_LIB_PATCH)},
        {"random123", "Philox4x32-10"},
        {"openmp", _OPENMP}}},
      {"machine", {{"cpu", cpu_model()}, {"hardware_threads", std::thread::hardware_concurrency()}}},
      {"threads", omp_get_max_threads()},
      {"wall_seconds", wall_seconds},
  };
}

}  // namespace attnlab::io
