// The output contract of the study binaries, run as a user would run them.
#include "support.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

struct Run {
  int code;
  std::string err;
};

Run run(const std::string& study, const std::string& args) {
  const auto err = fs::temp_directory_path() / ("attnlab_cli_err_" + std::to_string(::getpid()));
  const std::string cmd = std::string(ATTNLAB_STUDIES_DIR) + "/" + study + " " + args + " 2>" + err.string() + " >/dev/null";
  const int status = std::system(cmd.c_str());
  std::ifstream in(err);
  std::stringstream ss;
  ss << in.rdbuf();
  fs::remove(err);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, ss.str()};
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path fresh_dir(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("attnlab_cli_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

}  // namespace

TEST(StudyOutputs, PolyFrobeniusWritesTheContract) {
  const auto dir = fresh_dir("pf");
  const auto r = run("poly_frobenius", "--quick --out " + dir.string());
  ASSERT_EQ(r.code, 0) << r.err;
  const auto csv = slurp(dir / "poly_frobenius.csv");
  EXPECT_EQ(csv.rfind("study,quantity,activation,convention,precision,N,D,d,p,k,sigma_x,sigma_t,trials,mean,se,ci_lo,ci_hi", 0), 0u);
  EXPECT_NE(csv.find(",frob,"), std::string::npos);
  EXPECT_NE(csv.find(",frob2,"), std::string::npos);
  EXPECT_TRUE(fs::exists(dir / "poly_frobenius.json"));
  EXPECT_NE(slurp(dir / "poly_frobenius.json").find("\"git_sha\""), std::string::npos);
  EXPECT_FALSE(fs::exists(dir / ".partial"));
  fs::remove_all(dir);
}
