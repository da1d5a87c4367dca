#include <attnlab/io/files.hpp>
#include <attnlab/io/sweep_point.hpp>

#include <nlohmann/json.hpp>

#include <cmath>

namespace attnlab::io {

std::string point_record(const std::string& key, const PointResult& result) {
  nlohmann::json measurements = nlohmann::json::array();
  for (const auto& m : result.measurements)
    measurements.push_back(
        {m.quantity, std::isfinite(m.value) ? nlohmann::json(m.value) : nlohmann::json(), m.step, m.layer});
  return sealed({{"key", key}, {"diverged_at", result.diverged_at}, {"measurements", measurements}}).dump() + "\n";
}

std::optional<PointResult> read_point_record(const std::string& bytes, const std::string& key) {
  try {
    const auto j = nlohmann::json::parse(bytes);
    if (!intact(j) || j.at("key") != key) return std::nullopt;
    PointResult result;
    result.diverged_at = integer_field<long>(j.at("diverged_at"));
    for (const auto& m : j.at("measurements"))
      result.measurements.push_back({m.at(0).get<std::string>(),
                                     m.at(1).is_null() ? std::nan("") : m.at(1).get<double>(),
                                     integer_field<long>(m.at(2)), integer_field<Index>(m.at(3))});
    return result;
  } catch (const std::exception&) {
    return std::nullopt;  // written in another format (nlohmann's errors) or with fields out of range
  }
}

}  // namespace attnlab::io
