#pragma once
// Running the study binaries as a user would: argv without a shell, exit code, stderr, stdout,
// scratch output folders, a small CSV reader and a strict one for the outputs' hygiene.
#include "support.hpp"

#include <Eigen/Core>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
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
  // `cwd`: the directory it runs in (empty: the test's own); `file_size_blocks` > 0: no file it writes may grow past
  // that many 512-byte blocks (`ulimit -f` of /bin/sh), as on a disk that fills up.
  Child(const std::string& study, const std::vector<std::string>& args, const fs::path& cwd = {},
        long file_size_blocks = 0) {
    static int serial = 0;
    const auto stem = fs::temp_directory_path() /
                      ("attnlab_cli_" + std::to_string(::getpid()) + "_" + std::to_string(serial++));
    out_file_ = stem.string() + ".out";
    err_file_ = stem.string() + ".err";
    const std::string binary = std::string(ATTNLAB_STUDIES_DIR) + "/" + study;
    std::vector<std::string> words{binary};
    if (file_size_blocks > 0)
      words = {"/bin/sh", "-c", "ulimit -f " + std::to_string(file_size_blocks) + " && exec \"$0\" \"$@\"", binary};
    words.insert(words.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, out_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_file_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (!cwd.empty()) posix_spawn_file_actions_addchdir_np(&actions, cwd.c_str());
    const int rc = posix_spawn(&pid_, words.front().c_str(), &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) throw std::runtime_error("cannot start " + words.front());
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
  // SIGSTOP, returning once it is stopped (or has ended): the files it writes stay as they are until resume().
  void stop() {
    if (reaped_) return;
    ::kill(pid_, SIGSTOP);
    if (::waitpid(pid_, &status_, WUNTRACED) == pid_ && !WIFSTOPPED(status_)) reaped_ = true;
  }
  void resume() { kill(SIGCONT); }
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

// A matrix written as CSV without a header (worst inputs, saved iterates, tokens).
inline Eigen::MatrixXd read_matrix(const fs::path& file) {
  std::vector<std::vector<double>> rows;
  for (const auto& line : lines_of(slurp(file))) {
    rows.emplace_back();
    for (const auto& field : csv_fields(line)) rows.back().push_back(std::stod(field));
  }
  Eigen::MatrixXd M(Eigen::Index(rows.size()), rows.empty() ? 0 : Eigen::Index(rows[0].size()));
  for (Eigen::Index i = 0; i < M.rows(); ++i)
    for (Eigen::Index j = 0; j < M.cols(); ++j) M(i, j) = rows.at(std::size_t(i)).at(std::size_t(j));
  return M;
}

// The rows of `csv` whose `column` equals `value` for every (column, value).
inline std::vector<std::size_t> rows_where(const Csv& csv,
                                           const std::vector<std::pair<std::string, std::string>>& match) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < csv.rows.size(); ++i) {
    bool all = true;
    for (const auto& [column, value] : match) all = all && csv.at(i, column) == value;
    if (all) out.push_back(i);
  }
  return out;
}

inline std::vector<std::size_t> rows_where(const Csv& csv, const std::string& column, const std::string& value) {
  return rows_where(csv, {{column, value}});
}

// A matrix as a --matrix file: one row per line, every digit of each entry.
inline std::string matrix_csv(const Eigen::MatrixXd& M) {
  std::string csv;
  char cell[32];
  for (Eigen::Index i = 0; i < M.rows(); ++i) {
    for (Eigen::Index j = 0; j < M.cols(); ++j) {
      std::snprintf(cell, sizeof cell, "%.17g", M(i, j));
      csv += (j ? "," : "") + std::string(cell);
    }
    csv += "\n";
  }
  return csv;
}

inline bool contains(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
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

// The columns of the outputs that hold numbers: the long-format contract, claims.csv and newton_pinv's traces.
inline const std::set<std::string>& numeric_columns() {
  static const std::set<std::string> names{"N",
                                           "D",
                                           "d",
                                           "p",
                                           "sigma_x",
                                           "sigma_t",
                                           "trials",
                                           "mean",
                                           "se",
                                           "ci_lo",
                                           "ci_hi",
                                           "count",
                                           "nonfinite",
                                           "measured",
                                           "claimed",
                                           "m",
                                           "iteration",
                                           "alpha",
                                           "shift",
                                           "residual",
                                           "residual_shifted",
                                           "error",
                                           "error_shifted",
                                           "iterations",
                                           "beta_halvings",
                                           "beta_rule_excess",
                                           "reference_rank"};
  return names;
}

// A number as the outputs write one: the whole field, not NaN (a missing number is an empty field); infinities
// are numbers (a diverged residual).
inline bool is_number(const std::string& field) {
  char* end = nullptr;
  const double v = std::strtod(field.c_str(), &end);
  return !field.empty() && end == field.c_str() + field.size() && !std::isnan(v);
}

// Problems of a CSV read strictly (RFC 4180 with LF or CRLF line ends), one line each; none: empty. Every record has
// the first record's number of fields; a quote appears only around a whole field (doubled inside it); no header
// name repeats; numeric columns hold numbers or nothing. A file whose first record is all numbers has no header
// (a matrix, a row of logits): every field must be a number.
inline std::vector<std::string> strict_csv_problems(const std::string& csv) {
  std::vector<std::string> problems;
  std::vector<std::vector<std::string>> records;
  std::vector<std::string> fields(1);
  std::size_t line = 1;
  bool quoted = false, closed = false;  // inside quotes; just past a closing quote
  const auto problem = [&](const std::string& what) {
    problems.push_back("line " + std::to_string(line) + ": " + what);
  };
  for (std::size_t i = 0; i < csv.size(); ++i) {
    const char c = csv[i];
    if (quoted) {
      if (c == '"' && i + 1 < csv.size() && csv[i + 1] == '"') fields.back() += '"', ++i;
      else if (c == '"') quoted = false, closed = true;
      else fields.back() += c, line += c == '\n';
    } else if (c == ',') {
      fields.emplace_back(), closed = false;
    } else if (c == '\n' || (c == '\r' && i + 1 < csv.size() && csv[i + 1] == '\n')) {
      i += c == '\r';
      records.push_back(std::move(fields)), fields.assign(1, ""), closed = false, ++line;
    } else if (c == '"') {
      if (!fields.back().empty() || closed) problem("a quote inside an unquoted field");
      quoted = true;
    } else {
      if (closed) problem("text after a closing quote");
      fields.back() += c;
    }
  }
  if (quoted) problem("a quoted field never closed");
  if (fields.size() > 1 || !fields.back().empty()) records.push_back(std::move(fields));
  if (records.empty()) return {"no records"};
  const auto& first = records.front();
  const bool header = !std::all_of(first.begin(), first.end(), is_number);
  std::set<std::string> seen;
  for (const auto& name : header ? first : std::vector<std::string>{})
    if (!seen.insert(name).second) problems.push_back("the header names '" + name + "' twice");
  for (std::size_t r = 0; r < records.size(); ++r) {
    const auto& rec = records[r];
    if (rec.size() != first.size())
      problems.push_back("record " + std::to_string(r + 1) + " has " + std::to_string(rec.size()) +
                         " fields, the first " + std::to_string(first.size()));
    if (header && r == 0) continue;
    for (std::size_t c = 0; c < rec.size() && c < first.size(); ++c) {
      const bool numeric = !header || numeric_columns().count(first[c]) > 0;
      if (numeric && !rec[c].empty() && !is_number(rec[c]))
        problems.push_back("record " + std::to_string(r + 1) + ": '" + rec[c] + "' in numeric column " +
                           (header ? first[c] : std::to_string(c + 1)));
      if (!header && rec[c].empty())
        problems.push_back("record " + std::to_string(r + 1) + ": an empty field in numeric data");
    }
  }
  return problems;
}

// Every CSV under `dir` (recursively) read strictly; there must be at least one.
inline void expect_strict_csvs(const fs::path& dir) {
  std::size_t read = 0;
  for (const auto& name : files_under(dir)) {
    if (!name.ends_with(".csv")) continue;
    ++read;
    for (const auto& p : strict_csv_problems(slurp(dir / name))) ADD_FAILURE() << name << ": " << p;
  }
  EXPECT_GT(read, 0u) << "no CSV under " << dir;
}

}  // namespace attnlab::test::cli
