#pragma once
// A finished training-sweep point as it is persisted: its measurements in a sealed JSON record, so that a point file
// that was truncated, damaged or written for another point is trained again rather than trusted.
#include <attnlab/core/types.hpp>

#include <optional>
#include <string>
#include <vector>

namespace attnlab::io {

struct Measurement {
  std::string quantity;
  double value = 0;  // NaN when the run produced none (stored as null)
  long step = -1;    // -1: the end of the run
  Index layer = 0;   // 0: not a per-layer quantity
};

struct PointResult {
  std::vector<Measurement> measurements;
  long diverged_at = -1;  // the step whose loss or gradient was not finite; -1: none
};

// The file's bytes for the point `key`.
std::string point_record(const std::string& key, const PointResult& result);
// The point read back from `bytes`; nullopt when they are not an intact record of `key`.
std::optional<PointResult> read_point_record(const std::string& bytes, const std::string& key);

}  // namespace attnlab::io
