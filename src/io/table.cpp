#include <attnlab/core/text.hpp>
#include <attnlab/io/files.hpp>
#include <attnlab/io/table.hpp>
#include <attnlab/mc/sweep.hpp>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace attnlab::io {
namespace {

std::string number(double v) { return std::isfinite(v) ? text(v) : ""; }
std::string count(std::int64_t v) { return v > 0 ? text(v) : ""; }

const std::vector<std::string> kFixedColumns{
    "study",   "quantity", "activation", "convention", "precision", "N",     "D",     "d",     "p",         "k",
    "sigma_x", "sigma_t",  "trials",     "mean",       "se",        "ci_lo", "ci_hi", "count", "nonfinite", "status"};

// An extra named like a fixed column would write a second column of that name, and a repeated extra would
// lose its second value: both are a study's mistake, refused rather than renamed.
void check_extras(const ResultRow& r) {
  for (auto kv = r.extra.begin(); kv != r.extra.end(); ++kv) {
    if (std::find(kFixedColumns.begin(), kFixedColumns.end(), kv->first) != kFixedColumns.end())
      throw std::logic_error(text("to_csv: extra column '", kv->first, "' of quantity '", r.quantity,
                                  "' is a fixed column: set the row's field or choose another name"));
    if (std::any_of(r.extra.begin(), kv, [&](const auto& earlier) { return earlier.first == kv->first; }))
      throw std::logic_error(
          text("to_csv: extra column '", kv->first, "' given twice in a row of quantity '", r.quantity, "'"));
  }
}

}  // namespace

std::string csv_field(const std::string& s) {
  // quoted with a CR too: a reader drops an unquoted one before the newline
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

std::string to_csv(const std::vector<ResultRow>& rows) {
  std::vector<std::string> extras;
  for (const auto& r : rows) {
    check_extras(r);
    for (const auto& [k, v] : r.extra)
      if (std::find(extras.begin(), extras.end(), k) == extras.end()) extras.push_back(k);
  }
  std::string out;
  for (const auto& c : kFixedColumns) out += (out.empty() ? "" : ",") + c;
  for (const auto& e : extras) out += "," + csv_field(e);
  out += "\n";
  for (const auto& r : rows) {
    const auto& v = r.value;
    const bool ok = v.nonfinite == 0;
    const std::string status = ok ? "ok" : text("nonfinite in ", v.nonfinite, " of ", v.count + v.nonfinite, " trials");
    const std::string fields[] = {r.study,
                                  r.quantity,
                                  r.activation,
                                  r.convention,
                                  r.precision,
                                  count(r.N),
                                  count(r.D),
                                  count(r.d),
                                  count(r.p),
                                  r.k ? r.k->str() : "",
                                  number(r.sigma_x),
                                  number(r.sigma_t),
                                  count(r.trials),
                                  ok ? number(v.mean) : "",
                                  ok ? number(v.se) : "",
                                  ok ? number(v.ci_lo) : "",
                                  ok ? number(v.ci_hi) : "",
                                  text(v.count),
                                  text(v.nonfinite),
                                  status};
    std::string line;
    for (const auto& f : fields) line += (line.empty() ? "" : ",") + csv_field(f);
    for (const auto& e : extras) {
      const auto it = std::find_if(r.extra.begin(), r.extra.end(), [&](const auto& kv) { return kv.first == e; });
      line += "," + (it == r.extra.end() ? std::string() : csv_field(it->second.str()));
    }
    out += line + "\n";
  }
  return out;
}

namespace {

// The fields of one CSV record starting at `pos` (quotes as csv_field writes them; a CR before the newline is
// dropped); advances past its newline.
std::vector<std::string> csv_record(const std::string& csv, std::size_t& pos) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (; pos < csv.size(); ++pos) {
    const char c = csv[pos];
    if (quoted) {
      if (c == '"' && pos + 1 < csv.size() && csv[pos + 1] == '"') fields.back() += '"', ++pos;
      else if (c == '"') quoted = false;
      else fields.back() += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c == '\n') {
      ++pos;
      break;
    } else if (c != '\r' || pos + 1 >= csv.size() || csv[pos + 1] != '\n') {
      fields.back() += c;
    }
  }
  return fields;
}

}  // namespace

std::vector<ResultRow> rows_from_csv(const std::string& csv, const std::string& source) {
  const auto& fixed = kFixedColumns;
  std::size_t pos = 0;
  const auto header = csv_record(csv, pos);
  for (auto name = header.begin(); name != header.end(); ++name)
    if (std::find(header.begin(), name, *name) != name)
      throw std::runtime_error(text(source, ": the header names column '", excerpt(*name), "' twice"));
  std::vector<std::size_t> at(fixed.size());
  for (std::size_t c = 0; c < fixed.size(); ++c) {
    const auto it = std::find(header.begin(), header.end(), fixed[c]);
    if (it == header.end()) throw std::runtime_error(text(source, ": no column '", fixed[c], "'"));
    at[c] = std::size_t(it - header.begin());
  }
  std::vector<ResultRow> rows;
  for (int line = 2; pos < csv.size(); ++line) {
    const auto f = csv_record(csv, pos);
    if (f.size() == 1 && f[0].empty()) continue;  // a blank line
    if (f.size() != header.size())
      throw std::runtime_error(text(source, ": line ", line, " has ", f.size(), " fields, the header ", header.size()));
    const auto field = [&](const char* name) -> const std::string& {
      return f[at[std::size_t(std::find(fixed.begin(), fixed.end(), name) - fixed.begin())]];
    };
    const auto number = [&](const char* name) {
      const std::string& v = field(name);
      if (v.empty()) return std::nan("");
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      if (end != v.c_str() + v.size())
        throw std::runtime_error(
            text(source, ": line ", line, ": '", excerpt(v), "' in column ", name, " is not a number"));
      return x;
    };
    const auto integer = [&](const char* name) -> std::int64_t {
      if (field(name).empty()) return 0;
      const double x = number(name);
      if (!(std::abs(x) < 9e15) || x != std::floor(x))
        throw std::runtime_error(
            text(source, ": line ", line, ": '", excerpt(field(name)), "' in column ", name, " is not an integer"));
      return std::int64_t(x);
    };
    const auto k = [&]() -> std::optional<KScale> {
      if (field("k").empty()) return std::nullopt;
      KScale k;
      try {
        k = KScale::parse(field("k"));
      } catch (const std::invalid_argument& e) {
        throw std::runtime_error(text(source, ": line ", line, ": ", e.what()));
      }
      if (k.str() != field("k"))  // the tables write k as KScale prints it; another spelling would not write back
        throw std::runtime_error(
            text(source, ": line ", line, ": k '", excerpt(field("k")), "' is not written as ", k.str()));
      return k;
    };
    ResultRow r;
    r.study = field("study"), r.quantity = field("quantity"), r.activation = field("activation");
    r.convention = field("convention"), r.precision = field("precision");
    r.N = integer("N"), r.D = integer("D"), r.d = integer("d"), r.p = int(integer("p")), r.k = k();
    r.sigma_x = number("sigma_x"), r.sigma_t = number("sigma_t"), r.trials = integer("trials");
    r.value = {integer("count"), integer("nonfinite"), number("mean"), number("se"), number("ci_lo"), number("ci_hi")};
    for (std::size_t i = 0; i < f.size(); ++i)
      if (!f[i].empty() && std::find(fixed.begin(), fixed.end(), header[i]) == fixed.end())
        r.extra.push_back({header[i], Cell::read(f[i])});
    rows.push_back(std::move(r));
  }
  return rows;
}

namespace {

// A cell as JSON: text and non-finite numbers as strings, read back as Cell::read reads a CSV cell.
nlohmann::json cell_json(const Cell& c) {
  if (!c.is_number() || !std::isfinite(c.number())) return c.str();
  const double x = c.number();
  return c.str() == text(std::int64_t(x)) ? nlohmann::json(std::int64_t(x)) : nlohmann::json(x);
}

Cell cell_of(const nlohmann::json& j) {
  if (j.is_string()) return Cell::read(j.get<std::string>());
  if (j.is_number_integer()) return j.get<std::int64_t>();
  return j.get<double>();
}

}  // namespace

nlohmann::json to_json(const ResultRow& r) {
  const auto num = [](double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(text(v)); };
  auto extra = nlohmann::json::array();
  for (const auto& [name, cell] : r.extra) extra.push_back({name, cell_json(cell)});
  return {{"study", r.study},
          {"quantity", r.quantity},
          {"activation", r.activation},
          {"convention", r.convention},
          {"precision", r.precision},
          {"N", r.N},
          {"D", r.D},
          {"d", r.d},
          {"p", r.p},
          {"k", r.k ? r.k->str() : ""},
          {"sigma_x", num(r.sigma_x)},
          {"sigma_t", num(r.sigma_t)},
          {"trials", r.trials},
          {"count", r.value.count},
          {"nonfinite", r.value.nonfinite},
          {"mean", num(r.value.mean)},
          {"se", num(r.value.se)},
          {"ci_lo", num(r.value.ci_lo)},
          {"ci_hi", num(r.value.ci_hi)},
          {"extra", extra}};
}

ResultRow row_from_json(const nlohmann::json& j) {
  const auto num = [](const nlohmann::json& v) { return cell_of(v).number(); };  // non-finite ones as strings
  ResultRow r;
  r.study = j.at("study");
  r.quantity = j.at("quantity");
  r.activation = j.at("activation");
  r.convention = j.at("convention");
  r.precision = j.at("precision");
  r.N = integer_field<Index>(j.at("N"));
  r.D = integer_field<Index>(j.at("D"));
  r.d = integer_field<Index>(j.at("d"));
  r.p = integer_field<int>(j.at("p"));
  if (const std::string k = j.at("k"); !k.empty()) r.k = KScale::parse(k);
  r.sigma_x = num(j.at("sigma_x"));
  r.sigma_t = num(j.at("sigma_t"));
  r.trials = integer_field<std::int64_t>(j.at("trials"));
  r.value.count = integer_field<std::int64_t>(j.at("count"));
  r.value.nonfinite = integer_field<std::int64_t>(j.at("nonfinite"));
  r.value.mean = num(j.at("mean"));
  r.value.se = num(j.at("se"));
  r.value.ci_lo = num(j.at("ci_lo"));
  r.value.ci_hi = num(j.at("ci_hi"));
  for (const auto& cell : j.at("extra")) r.extra.push_back({cell.at(0).get<std::string>(), cell_of(cell.at(1))});
  return r;
}

namespace {

// Rows of cells printed with each column as wide as its widest cell, two spaces apart.
std::string aligned(const std::vector<std::vector<std::string>>& cells) {
  std::vector<std::size_t> width;
  for (const auto& row : cells)
    for (std::size_t c = 0; c < row.size(); ++c) {
      if (width.size() <= c) width.push_back(0);
      width[c] = std::max(width[c], row[c].size());
    }
  std::string out;
  for (const auto& row : cells) {
    std::string line;
    for (std::size_t c = 0; c < row.size(); ++c) line += row[c] + std::string(width[c] - row[c].size() + 2, ' ');
    out += "  " + line.substr(0, line.find_last_not_of(' ') + 1) + "\n";
  }
  return out;
}

std::string interval(const Estimate& e) {
  return std::isfinite(e.ci_lo) && std::isfinite(e.ci_hi) ? text("[", sig(e.ci_lo), ", ", sig(e.ci_hi), "]") : "";
}

bool same_curve(const ResultRow& a, const ResultRow& b) {
  return a.activation == b.activation && a.D == b.D && a.d == b.d && a.sigma_x == b.sigma_x && a.sigma_t == b.sigma_t;
}

}  // namespace

std::string sweep_table(const std::vector<ResultRow>& rows, const std::vector<std::string>& fitted) {
  std::string out;
  for (const auto& quantity : fitted) {
    std::vector<std::vector<std::string>> cells{{"activation", "D", "d", "sigma_x", "sigma_t", "N", "mean", "95% CI"}};
    std::vector<const ResultRow*> done;
    for (const auto& r : rows) {
      if (r.quantity != quantity ||
          std::any_of(done.begin(), done.end(), [&](const ResultRow* c) { return same_curve(*c, r); }))
        continue;
      done.push_back(&r);
      bool first = true;
      for (const auto& point : rows)
        if (point.quantity == quantity && same_curve(point, r)) {
          cells.push_back({first ? r.activation : "", first ? text(r.D) : "", first ? text(r.d) : "",
                           first ? sig(r.sigma_x) : "", first ? sig(r.sigma_t) : "", text(point.N),
                           sig(point.value.mean), interval(point.value)});
          first = false;
        }
      for (const auto& fit : rows)
        if (fit.quantity == quantity + "_exponent" && same_curve(fit, r))
          cells.push_back({"", "", "", "", "", "exponent", sig(fit.value.mean), interval(fit.value)});
    }
    if (cells.size() > 1)
      out += text(quantity, ": E ", describe_quantity(quantity),
                  " against N (exponent: the power of N fitted to the means)\n", aligned(cells));
  }
  return out;
}

}  // namespace attnlab::io
