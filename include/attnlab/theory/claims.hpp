#pragma once
// The claim registry: each claim of CLAIMS.md is an id, its source, its statement, how it
// is checked, and a function that computes its verdict from data.
#include <attnlab/mc/driver.hpp>
#include <attnlab/mc/figure.hpp>
#include <attnlab/mc/result.hpp>

#include <attnlab/core/types.hpp>

#include <functional>
#include <string>
#include <vector>

namespace attnlab {

enum class Verdict { holds, violated, loose, inexact, inconclusive };
std::string to_string(Verdict v);

// The SOFT claims' inputs, settable from the SOFT studies' flags (defaults are the claims' own).
struct SoftOptions {
  Index n = 1024;                                   // tokens (a 32 × 32 grid for pooling)
  Index d = 64;                                     // head dimension
  std::vector<Index> m;                             // bottleneck lengths (empty: each claim's grid)
  std::vector<std::string> samplers{"random", "first", "pool"};
  std::vector<std::string> tokens{"gaussian", "clustered", "low_rank", "grid"};
  double tolerance = 1e-8;                          // Newton–Schulz stopping residual
  int max_iterations = 200;
  std::string matrix_file;                          // a user's square matrix (CSV) in place of the bottlenecks
  MatrixD matrix;                                   // its contents, read by load_matrix()

  void validate() const;  // throws std::invalid_argument naming the parameter
  // Reads matrix_file: square, finite and not zero (singular is fine), else std::invalid_argument naming "matrix".
  void load_matrix();
};

struct ClaimContext {
  std::uint64_t seed = 1;
  bool quick = false;             // CI-sized grids and trial counts
  std::uint32_t trials = 0;       // 0: each claim's default
  ResultCache* cache = nullptr;   // finished configurations (resume and sharing between claims)
  std::function<ProgressFn(const std::string& label)> progress;  // may be empty
  SoftOptions soft{};
  // The rows of a finished training sweep by its study name (k_sweep, activation_table, training_norms,
  // alpha_sweep), empty when there are none: val_accuracy per point with extras seed and validation (images),
  // alpha_sweep's h and alpha, training_norms' phi_fro and jacobian_fro with step, layer and weight_std.
  std::function<std::vector<ResultRow>(const std::string& sweep)> training_rows{};

  std::uint32_t trials_or(std::uint32_t full, std::uint32_t quick_default) const;
  ProgressFn progress_for(const std::string& label) const { return progress ? progress(label) : ProgressFn{}; }
};

// The matrices the SOFT pseudo-inverse claims and traces run on: the user's --matrix (labelled "matrix"), or else
// the bottleneck matrix (trial 0) of each token ensemble of ctx.soft for each m ≤ n of ctx.soft.m (`default_m` when
// none is given), labelled by the ensemble.
struct SoftMatrix {
  std::string label;
  Index m = 0;
  MatrixD A;
};
std::vector<SoftMatrix> soft_pinv_inputs(const ClaimContext& ctx, const std::vector<Index>& default_m);

struct ClaimOutcome {
  Verdict verdict = Verdict::inconclusive;
  double measured = 0, claimed = 0, ci_lo = 0, ci_hi = 0;
  std::string detail;               // one line: what was measured and why this verdict
  std::vector<ResultRow> evidence;  // rows for verify.csv
  std::vector<Figure> figures;
  std::string markdown;             // optional section for report.md (tables)
};

struct Claim {
  std::string id, source, statement, method;
  std::function<ClaimOutcome(const ClaimContext&)> check;
  std::string sweep{};  // the training sweep whose rows it judges; empty when it samples its own data
};

class ClaimRegistry {
 public:
  void add(Claim claim);  // throws on a duplicate id
  const std::vector<Claim>& all() const { return claims_; }
  const Claim& find(const std::string& id) const;  // throws std::invalid_argument naming the id

 private:
  std::vector<Claim> claims_;
};

// Every registered claim, in catalogue order.
const ClaimRegistry& claim_registry();

// Each family adds its claims here; a new claim is one add() in its family's file.
void register_poly_claims(ClaimRegistry& registry);
void register_relu_claims(ClaimRegistry& registry);
void register_periodic_claims(ClaimRegistry& registry);
void register_soft_claims(ClaimRegistry& registry);
void register_training_claims(ClaimRegistry& registry);

}  // namespace attnlab
