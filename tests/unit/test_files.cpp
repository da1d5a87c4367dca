// Records that carry their checksum: a digit changed on disk, a field dropped or a line cut short is detected, and
// the Monte-Carlo checkpoint recomputes such a configuration instead of trusting it.
#include <attnlab/io/checkpoint.hpp>
#include <attnlab/io/files.hpp>

#include "support.hpp"

#include <unistd.h>

#include <cmath>
#include <fstream>

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

TEST(Files, CheckpointRecomputesALineWhoseDigitsChangedOnDisk) {
  const auto file = std::filesystem::temp_directory_path() / ("attnlab_checkpoint_" + std::to_string(::getpid()) + ".jsonl");
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
