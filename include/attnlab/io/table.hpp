#pragma once
// The long-format CSV of the output contract and its JSON-lines form for checkpoints.
#include <attnlab/mc/result.hpp>

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace attnlab::io {

// Fixed contract columns, then every extra column in order of first appearance. An extra named like a fixed
// column, or twice in one row, throws std::logic_error: every CSV has one column per name.
std::string to_csv(const std::vector<ResultRow>& rows);
std::string csv_field(const std::string& s);

// The rows of a CSV written by to_csv (`source` names it in errors: std::runtime_error with the line; a header
// naming a column twice is one).
std::vector<ResultRow> rows_from_csv(const std::string& csv, const std::string& source);
nlohmann::json to_json(const ResultRow& row);

// For a reader's terminal: per fitted quantity, each curve's N, mean and 95% interval, then the exponent its
// "<quantity>_exponent" row fitted over N with its interval; four significant digits, columns aligned.
std::string sweep_table(const std::vector<ResultRow>& rows, const std::vector<std::string>& fitted);
ResultRow row_from_json(const nlohmann::json& j);

}  // namespace attnlab::io
