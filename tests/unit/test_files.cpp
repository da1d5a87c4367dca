// Records that carry their checksum: a digit changed on disk, a field dropped or a line cut short is detected, and
// the Monte-Carlo checkpoint recomputes such a configuration instead of trusting it.
#include <attnlab/io/checkpoint.hpp>
#include <attnlab/io/files.hpp>
#include <attnlab/io/sweep_point.hpp>

#include "support.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

using namespace attnlab;

TEST(Files, SealedRecordsSurviveAWriteAndReadAndDetectAnyChange) {
  const auto record = io::sealed({{"key", "N=64"}, {"value", 0.1 + 0.2}, {"rows", {1, 2.5e-300, -3}}});
  EXPECT_TRUE(io::intact(record));
  EXPECT_TRUE(io::intact(nlohmann::json::parse(record.dump()))) << "the dump reads back to the same checksum";
  auto changed = record;
  changed["value"] = std::nextafter(0.1 + 0.2, 1.0);  // one ulp away
  EXPECT_FALSE(io::intact(changed));
  auto dropped = record;
  dropped.erase("rows");
  EXPECT_FALSE(io::intact(dropped));
  auto unsealed = record;
  unsealed.erase("checksum");
  EXPECT_FALSE(io::intact(unsealed));
  EXPECT_FALSE(io::intact(nlohmann::json::array({1, 2})));
}

// Found by tests/fuzz/sweep_point.cpp: a sealed point whose step was -2e21 reached nlohmann's float-to-long
// conversion (undefined behaviour).
TEST(Files, IntegerFieldsOutsideTheirTypeAreRefusedNotConverted) {
  EXPECT_EQ(io::integer_field<int>(nlohmann::json(-5)), -5);
  EXPECT_EQ(io::integer_field<long>(nlohmann::json(std::uint64_t{1} << 62)), long{1} << 62);
  EXPECT_THROW(io::integer_field<long>(nlohmann::json(-2e21)), std::out_of_range);
  EXPECT_THROW(io::integer_field<long>(nlohmann::json(3.0)), std::out_of_range);
  EXPECT_THROW(io::integer_field<int>(nlohmann::json(std::int64_t{1} << 40)), std::out_of_range);
  EXPECT_THROW(io::integer_field<long>(nlohmann::json(std::uint64_t{1} << 63)), std::out_of_range);
  io::PointResult result;
  result.measurements = {{"val_accuracy", 0.5, 10, 1}};
  auto record = nlohmann::json::parse(io::point_record("key", result));
  ASSERT_TRUE(io::read_point_record(io::sealed(record).dump(), "key").has_value());
  record["measurements"][0][2] = -2e21;
  EXPECT_FALSE(io::read_point_record(io::sealed(record).dump(), "key").has_value());
}

TEST(Files, CheckpointRecomputesALineWhoseDigitsChangedOnDisk) {
  const auto file = std::filesystem::temp_directory_path() /
                    ("attnlab_checkpoint_" + std::to_string(::getpid()) + ".jsonl");
  std::filesystem::remove(file);
  ResultRow row;
  row.quantity = "frob", row.N = 64, row.value = Estimate{8, 0, 123.456, 1.5, 120.0, 126.9};
  {
    io::JsonlCheckpoint checkpoint(file, "v1");
    checkpoint.store("first", {row});
    checkpoint.store("second", {row});
  }
  std::string text = io::read_file(file);
  const auto digit = text.find("123.456");  // in the first line
  ASSERT_LT(digit, text.find('\n'));
  text[digit] = '7';
  std::ofstream(file, std::ios::trunc) << text;
  io::JsonlCheckpoint reopened(file, "v1");
  std::vector<ResultRow> rows;
  EXPECT_FALSE(reopened.find("first", rows)) << "a changed value is not trusted";
  ASSERT_TRUE(reopened.find("second", rows));
  EXPECT_EQ(rows.at(0).value.mean, 123.456);
  EXPECT_EQ(reopened.resumed(), 1u);
  std::filesystem::remove(file);
}

// Found by tests/faults/random_kills.sh: a sweep killed inside write_atomically left <point>.json.tmp.<pid> in its
// point store for good. A rerun removes the temporaries of dead processes, and keeps a live one's.
TEST(Files, StaleTemporariesOfDeadProcessesAreRemoved) {
  const auto dir = std::filesystem::temp_directory_path() / ("stale_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir / ".partial" / "k_sweep");
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  ASSERT_GT(child, 0);
  ::waitpid(child, nullptr, 0);  // reaped: its pid names no process
  const auto dead = dir / ".partial" / "k_sweep" / ("point.json.tmp." + std::to_string(child));
  const auto live = dir / ("k_sweep.csv.tmp." + std::to_string(::getpid()));
  const auto kept = dir / "notes.tmp.txt";
  for (const auto& f : {dead, live, kept}) std::ofstream(f) << "x";
  io::remove_stale_temporaries(dir);
  EXPECT_FALSE(std::filesystem::exists(dead));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(std::filesystem::exists(kept));
  std::filesystem::remove_all(dir);
}
