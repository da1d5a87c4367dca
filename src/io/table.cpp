#include <attnlab/core/text.hpp>
#include <attnlab/io/table.hpp>

#include <algorithm>
#include <cmath>

namespace attnlab::io {
namespace {

std::string number(double v) { return std::isfinite(v) ? text(v) : ""; }
std::string count(std::int64_t v) { return v > 0 ? text(v) : ""; }

}  // namespace

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string to_csv(const std::vector<ResultRow>& rows) {
  std::vector<std::string> extras;
  for (const auto& r : rows)
    for (const auto& [k, v] : r.extra)
      if (std::find(extras.begin(), extras.end(), k) == extras.end()) extras.push_back(k);
  std::string out =
      "study,quantity,activation,convention,precision,N,D,d,p,k,sigma_x,sigma_t,trials,mean,se,ci_lo,ci_hi,count,"
      "nonfinite,status";
  for (const auto& e : extras) out += "," + csv_field(e);
  out += "\n";
  for (const auto& r : rows) {
    const auto& v = r.value;
    const bool ok = v.nonfinite == 0;
    const std::string status = ok ? "ok" : text("nonfinite in ", v.nonfinite, " of ", v.count + v.nonfinite, " trials");
    const std::string fields[] = {r.study, r.quantity, r.activation, r.convention, r.precision, count(r.N),
                                  count(r.D), count(r.d), count(r.p), r.k, number(r.sigma_x), number(r.sigma_t),
                                  count(r.trials), ok ? number(v.mean) : "", ok ? number(v.se) : "",
                                  ok ? number(v.ci_lo) : "", ok ? number(v.ci_hi) : "", text(v.count),
                                  text(v.nonfinite), status};
    std::string line;
    for (const auto& f : fields) line += (line.empty() ? "" : ",") + csv_field(f);
    for (const auto& e : extras) {
      const auto it = std::find_if(r.extra.begin(), r.extra.end(), [&](const auto& kv) { return kv.first == e; });
      line += "," + (it == r.extra.end() ? std::string() : csv_field(it->second));
    }
    out += line + "\n";
  }
  return out;
}

nlohmann::json to_json(const ResultRow& r) {
  const auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(text(v)); };
  return {{"study", r.study}, {"quantity", r.quantity}, {"activation", r.activation}, {"convention", r.convention},
          {"precision", r.precision}, {"N", r.N}, {"D", r.D}, {"d", r.d}, {"p", r.p}, {"k", r.k},
          {"sigma_x", num(r.sigma_x)}, {"sigma_t", num(r.sigma_t)}, {"trials", r.trials},
          {"count", r.value.count}, {"nonfinite", r.value.nonfinite}, {"mean", num(r.value.mean)},
          {"se", num(r.value.se)}, {"ci_lo", num(r.value.ci_lo)}, {"ci_hi", num(r.value.ci_hi)}, {"extra", r.extra}};
}

ResultRow row_from_json(const nlohmann::json& j) {
  const auto num = [](const nlohmann::json& v) { return v.is_string() ? std::stod(v.get<std::string>()) : v.get<double>(); };
  ResultRow r;
  r.study = j.at("study");
  r.quantity = j.at("quantity");
  r.activation = j.at("activation");
  r.convention = j.at("convention");
  r.precision = j.at("precision");
  r.N = j.at("N");
  r.D = j.at("D");
  r.d = j.at("d");
  r.p = j.at("p");
  r.k = j.at("k");
  r.sigma_x = num(j.at("sigma_x"));
  r.sigma_t = num(j.at("sigma_t"));
  r.trials = j.at("trials");
  r.value.count = j.at("count");
  r.value.nonfinite = j.at("nonfinite");
  r.value.mean = num(j.at("mean"));
  r.value.se = num(j.at("se"));
  r.value.ci_lo = num(j.at("ci_lo"));
  r.value.ci_hi = num(j.at("ci_hi"));
  r.extra = j.at("extra").get<std::vector<std::pair<std::string, std::string>>>();
  return r;
}

}  // namespace attnlab::io
