// rows_from_csv inverts to_csv (quotes, empty fields, non-finite values, the union of extra columns) and
// names the line and column of what it cannot read.
#include <attnlab/io/table.hpp>

#include "support.hpp"

#include <cmath>
#include <regex>
#include <stdexcept>

using namespace attnlab;

namespace {

ResultRow sample_row(const std::string& activation, double mean, ExtraColumns extra) {
  ResultRow r;
  r.study = "k_sweep", r.quantity = "val_accuracy", r.activation = activation;
  r.N = 256, r.D = 32, r.d = 16, r.p = 3, r.k = KScale::parse("0.001");
  r.sigma_x = 1.5, r.trials = 1;
  r.value = estimate(std::vector<double>{mean, mean + 0.25});
  r.extra = std::move(extra);
  return r;
}

std::string message_of(const std::string& csv) {
  try {
    io::rows_from_csv(csv, "t.csv");
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST(Table, CsvRoundTripKeepsEveryField) {
  auto odd = sample_row("x^3, \"quoted\"\nand a newline", 0.5,
                        {{"seed", 1}, {"note", "a,b"}, {"weight_std", 0.02}, {"label", "x^3"}});
  auto nonfinite = sample_row("softmax", 0.25, {{"layer", 2}});
  nonfinite.value = estimate(std::vector<double>{std::nan(""), 1.0, 2.0});
  const std::vector<ResultRow> rows{odd, nonfinite};
  const auto back = io::rows_from_csv(io::to_csv(rows), "t.csv");
  ASSERT_EQ(back.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto &a = rows[i], &b = back[i];
    EXPECT_EQ(b.study, a.study);
    EXPECT_EQ(b.activation, a.activation);
    EXPECT_EQ(b.N, a.N);
    EXPECT_EQ(b.p, a.p);
    EXPECT_EQ(b.k, a.k);
    EXPECT_EQ(b.sigma_x, a.sigma_x);
    EXPECT_TRUE(std::isnan(b.sigma_t));
    EXPECT_EQ(b.value.count, a.value.count);
    EXPECT_EQ(b.value.nonfinite, a.value.nonfinite);
    EXPECT_EQ(b.extra, a.extra) << "extras: only this row's, in order";
  }
  EXPECT_TRUE(test::close(back[0].value.mean, rows[0].value.mean, 1e-9, 0));
  EXPECT_TRUE(test::close(back[0].value.ci_hi, rows[0].value.ci_hi, 1e-9, 0));
  EXPECT_TRUE(std::isnan(back[1].value.mean)) << "a row with non-finite trials has no mean";
}

TEST(Table, CsvWithCrLfAndABlankLineReadsTheSame) {
  const auto csv = io::to_csv({sample_row("softmax", 0.5, {{"seed", 1}})});
  std::string crlf;
  for (char c : csv) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const auto back = io::rows_from_csv(crlf + "\r\n", "t.csv");
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].extra, (ExtraColumns{{"seed", 1}}));
}

// A cell keeps its type from the study to the claims: a number is read back as the number it printed as, without
// parsing in between, and text that looks like a number but would print otherwise stays text (so its bytes stay).
TEST(Table, CellsKeepTheirTypeThroughCsvAndJson) {
  const ExtraColumns cells{{"seed", std::uint64_t{12345678901}},
                           {"alpha", 0.1},
                           {"tiny", 1e-5},
                           {"h", "relu"},
                           {"padded", "0.10"},
                           {"plus", "+1"},
                           {"nan", std::nan("")}};
  auto row = sample_row("softmax", 0.5, cells);
  const auto csv_back = io::rows_from_csv(io::to_csv({row}), "t.csv").at(0).extra;
  const auto json_back = io::row_from_json(io::to_json(row)).extra;
  for (const auto* back : {&csv_back, &json_back}) {
    ASSERT_EQ(back->size(), cells.size());
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const auto& [name, cell] = (*back)[i];
      EXPECT_EQ(name, cells[i].first);
      EXPECT_EQ(cell.is_number(), cells[i].second.is_number()) << name;
      EXPECT_EQ(cell.str(), cells[i].second.str()) << name;
    }
  }
  EXPECT_EQ(csv_back[0].second.number(), 12345678901.0) << "an integer prints every digit";
  EXPECT_EQ(csv_back[1].second.number(), 0.1);
  EXPECT_TRUE(std::isnan(json_back.back().second.number()));
  EXPECT_THROW(csv_back[3].second.number(), std::logic_error);
  EXPECT_EQ(extra_number(row, "alpha"), 0.1);
  EXPECT_THROW(extra_number(row, "h"), std::runtime_error) << "text is not a number";
  EXPECT_THROW(extra_number(row, "absent"), std::runtime_error);
}

TEST(Table, MalformedCsvNamesLineAndColumn) {
  const auto csv = io::to_csv({sample_row("softmax", 0.5, {})});
  const auto header = csv.substr(0, csv.find('\n') + 1), line = csv.substr(csv.find('\n') + 1);
  EXPECT_NE(message_of("study,quantity\nk_sweep,val_accuracy\n").find("no column 'activation'"), std::string::npos);
  EXPECT_NE(message_of(header + "k_sweep,1\n").find("line 2 has 2 fields"), std::string::npos);
  auto bad_n = line;
  bad_n.replace(bad_n.find(",256,"), 5, ",nan,");
  EXPECT_NE(message_of(header + bad_n).find("'nan' in column N is not an integer"), std::string::npos)
      << message_of(header + bad_n);
  auto bad_mean = line;  // the mean of 0.5 and 0.75
  bad_mean.replace(bad_mean.find(",0.625,"), 7, ",0.625x,");
  EXPECT_NE(message_of(header + bad_mean).find("'0.625x' in column mean is not a number"), std::string::npos)
      << message_of(header + bad_mean);
}

// One column per name: an extra named like a fixed column, or twice in a row, is the study's mistake (to_csv
// refuses it), and a header naming a column twice is refused when read back.
TEST(Table, ExtraColumnsNeverDuplicateAColumn) {
  for (const char* fixed : {"status", "sigma_t", "se", "ci_lo", "p"}) {
    try {
      io::to_csv({sample_row("softmax", 0.5, {{"seed", "1"}, {fixed, "x"}})});
      ADD_FAILURE() << "extra '" << fixed << "' was written beside the fixed column";
    } catch (const std::logic_error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("'") + fixed + "' of quantity 'val_accuracy' is a fixed column"),
                std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(io::to_csv({sample_row("softmax", 0.5, {{"seed", "1"}, {"seed", "2"}})}), std::logic_error);
  const auto csv = io::to_csv({sample_row("softmax", 0.5, {{"seed", "1"}})});
  const auto header = csv.substr(0, csv.find('\n')), line = csv.substr(csv.find('\n'));
  EXPECT_NE(message_of(header + ",seed" + line.substr(0, line.size() - 1) + ",2\n").find("names column 'seed' twice"),
            std::string::npos);
}

// The closing table of a sweep: per fitted quantity, each curve's points in CSV order with four significant digits and
// its exponent row last; quantities not fitted are left out, and two curves differing only in sigma_t stay apart.
TEST(Table, SweepTableListsEachCurvesPointsThenItsExponent) {
  const auto point = [](std::string quantity, Index N, double sigma_t, double mean, double lo, double hi) {
    ResultRow r;
    r.quantity = std::move(quantity), r.activation = "softmax", r.N = N, r.D = 64, r.d = 64;
    r.sigma_x = 1, r.sigma_t = sigma_t;
    r.value = Estimate{8, 0, mean, 0.1, lo, hi};
    return r;
  };
  const std::vector<ResultRow> rows{point("frob", 16, 0.3, 3.33649, 3.2601, 3.41349),
                                    point("frob", 32, 0.3, 4.5551, 4.45, 4.66), point("frob", 16, 1, 2.5, 2.4, 2.6),
                                    point("frob2", 16, 0.3, 11.1, 10, 12),
                                    point("frob_exponent", 0, 0.3, 0.447213, 0.44381, 0.45062)};
  const auto table = io::sweep_table(rows, {"frob"});
  std::vector<std::string> lines;
  for (std::size_t at = 0, next; at < table.size(); at = next + 1) {
    next = table.find('\n', at);
    lines.push_back(table.substr(at, next - at));
  }
  ASSERT_EQ(lines.size(), 6u) << table;  // title, header, two points and the exponent of sigma_t 0.3, one point of 1
  EXPECT_EQ(lines[0].rfind("frob: E ||phi(S)||_F against N", 0), 0u) << table;
  EXPECT_NE(lines[2].find("softmax"), std::string::npos) << table;
  EXPECT_TRUE(std::regex_search(lines[2], std::regex(" 16 +3\\.336 +\\[3\\.26, 3\\.413\\]$"))) << table;
  EXPECT_NE(lines[3].find("4.555"), std::string::npos) << table;
  EXPECT_TRUE(std::regex_search(lines[4], std::regex("^ +exponent +0\\.4472 +\\[0\\.4438, 0\\.4506\\]$"))) << table;
  EXPECT_NE(lines[5].find("2.5"), std::string::npos) << table;
  EXPECT_EQ(table.find("11.1"), std::string::npos) << "frob2 is not fitted:\n" << table;
  // Columns aligned: every point's N starts where the header's N does.
  const auto column = lines[1].find(" N ") + 1;
  for (std::size_t i = 2; i < lines.size(); ++i)
    EXPECT_NE(std::string("0123456789e").find(lines[i][column]), std::string::npos) << table;
}
