#pragma once
// What the accuracy-table claims share (activation_table.cpp, periodic_table.cpp): seed-mean accuracies per
// activation at each value of one axis (N or depth), the paper's relations among the rows, judged by paired-seed
// intervals as equivalence tests fixed before the campaign that judges them (issue 40), and the falsify cases that
// order a table as the paper says or against it.
#include "runs.hpp"

namespace attnlab::training_claims {

extern const Threshold kComparableMargin, kBreakdownGap;

struct TableEntry {
  std::string label;
  std::map<Index, SeedMean> at{};                           // per axis value
  std::map<Index, std::map<std::uint64_t, double>> runs{};  // per axis value, each seed's accuracy
  std::map<Index, std::set<std::uint64_t>> diverged{};      // per axis value, the seeds whose loss turned non-finite
};

struct Table {
  std::string axis;  // the column the entries are tabled along: "N" or column::depth
  std::vector<TableEntry> entries{};
  std::vector<Index> axis_values{};  // in the sweep's order
  TableEntry* find(const std::string& label, Index at);
  const TableEntry* find(const std::string& label, Index at) const;
};

// a better than b; a comparable to b (inside ±comparable_accuracy_margin); a breaks down where b trains (every seed
// diverged, or b − a above breakdown_accuracy_gap).
enum class RelationKind { better, comparable, breaks_down };
struct Relation {
  std::string a, b;
  RelationKind kind = RelationKind::better;
};

struct TableEvidence {
  std::string sweep;
  Table table;
  std::vector<Relation> relations;
  std::string setup;                     // the paper's and ours (setup_line)
  std::map<Index, DynamicRange> ranges;  // per axis value, from the controls (and softmax where it is a row)
};

using TableRelations = std::function<std::vector<Relation>(const Table&)>;

// The rows of `sweep` (its controls left out) tabled along `axis`, and the relations of the claim.
TableEvidence measure_table(const ClaimContext& ctx, const std::string& sweep, const char* paper_setup,
                            const std::string& axis, const TableRelations& relations);

// holds when every relation is reproduced at every axis value, violated when one is contradicted; `what` names the
// relations for the detail. No rows: the sweep to run.
ClaimOutcome judge_relations(const TableEvidence& e, const Thresholds& th, const std::string& what);

// Each entry's seed-mean accuracy ± sd, the entries along x and a series per axis value ("N = 64", "depth 1").
Figure accuracy_figure(const Table& t, const std::string& name, const std::string& title);

using TableJudge = std::function<ClaimOutcome(const TableEvidence&, const Thresholds&)>;

// judge_relations alone, for a claim that adds no table or figure of its own.
TableJudge relations_judge(std::string what);

// measure_table's evidence with the falsify cases: the table ordered against and as the paper says, and a crossing
// for the threshold of each of `kinds`, the relation kinds with a threshold (comparable, breaks_down) the claim has.
ClaimRules<TableEvidence> table_rules(const std::string& sweep, const char* paper_setup, const std::string& axis,
                                      TableRelations relations, TableJudge judge,
                                      const std::vector<RelationKind>& kinds);

}  // namespace attnlab::training_claims
