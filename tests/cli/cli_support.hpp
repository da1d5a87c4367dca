#pragma once
// Running the study binaries as a user would: argv without a shell, exit code, stderr, stdout,
// scratch output folders and a small CSV reader.
#include "support.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

extern char** environ;

namespace attnlab::test::cli {

namespace fs = std::filesystem;

inline std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline std::vector<std::string> lines_of(const std::string& s) {
  std::vector<std::string> lines;
  std::istringstream in(s);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// An emptied folder unique to this test process, removed with everything in it at scope exit.
struct ScratchDir {
  fs::path path;
  explicit ScratchDir(const std::string& name)
      : path(fs::temp_directory_path() / ("attnlab_cli_" + name + "_" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~ScratchDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  fs::path operator/(const std::string& name) const { return path / name; }
};

// Every regular file under `dir` (recursively), relative to it; empty when `dir` does not exist.
inline std::vector<std::string> files_under(const fs::path& dir) {
  std::vector<std::string> files;
  std::error_code ec;
  if (!fs::exists(dir, ec)) return files;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    if (e.is_regular_file()) files.push_back(fs::relative(e.path(), dir).string());
  return files;
}

struct Run {
  int code = -1;    // exit status; -1 when a signal ended the process
  int signal = 0;   // the signal that ended it; 0 when it exited
  std::string out;  // its stdout
  std::string err;  // its stderr
  std::vector<std::string> err_lines() const { return lines_of(err); }
};

// A study binary running in the background with stdout and stderr captured to files.
class Child {
 public:
  // `cwd`: the directory it runs in (empty: the test's own).
  Child(const std::string& study, const std::vector<std::string>& args, const fs::path& cwd = {}) {
    static int serial = 0;
    const auto stem = fs::temp_directory_path() /
                      ("attnlab_cli_" + std::to_string(::getpid()) + "_" + std::to_string(serial++));
    out_file_ = stem.string() + ".out";
    err_file_ = stem.string() + ".err";
    const std::string binary = std::string(ATTNLAB_STUDIES_DIR) + "/" + study;
    std::vector<char*> argv{const_cast<char*>(binary.c_str())};
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    const int rc = posix_spawn(&pid_, binary.c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start " + binary);
  }
  ~Child() {
    if (!reaped_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    std::error_code ec;
    fs::remove(out_file_, ec);
    fs::remove(err_file_, ec);
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  // False once it has ended (and reaps it).
  bool running() {
    if (reaped_) return false;
    if (::waitpid(pid_, &status_, WNOHANG) == 0) return true;
    reaped_ = true;
    return false;
  }
  void kill(int signal) {
    if (!reaped_) ::kill(pid_, signal);
  }
  Run wait() {
    if (!reaped_) ::waitpid(pid_, &status_, 0);
    reaped_ = true;
    Run r;
    if (WIFEXITED(status_)) r.code = WEXITSTATUS(status_);
    if (WIFSIGNALED(status_)) r.signal = WTERMSIG(status_);
    r.out = slurp(out_file_);
    r.err = slurp(err_file_);
    return r;
  }

 private:
  pid_t pid_ = -1;
  int status_ = 0;
  bool reaped_ = false;
  fs::path out_file_, err_file_;
};

// Runs a study binary to completion.
inline Run run(const std::string& study, const std::vector<std::string>& args, const fs::path& cwd = {}) {
  return Child(study, args, cwd).wait();
}

// A CSV as header → column index and rows of fields (RFC 4180 quotes, no embedded newlines).
struct Csv {
  std::map<std::string, std::size_t> column;
  std::vector<std::vector<std::string>> rows;
  const std::string& at(std::size_t row, const std::string& name) const { return rows.at(row).at(column.at(name)); }
};

inline std::vector<std::string> csv_fields(const std::string& line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') fields.back() += '"', ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) fields.emplace_back();
    else fields.back() += c;
  }
  return fields;
}

inline Csv read_csv(const fs::path& file) {
  Csv csv;
  const auto lines = lines_of(slurp(file));
  if (lines.empty()) return csv;
  const auto header = csv_fields(lines.front());
  for (std::size_t i = 0; i < header.size(); ++i) csv.column[header[i]] = i;
  for (std::size_t i = 1; i < lines.size(); ++i) csv.rows.push_back(csv_fields(lines[i]));
  return csv;
}

}  // namespace attnlab::test::cli
