#pragma once
// What the POLY claim files share: the Monte-Carlo sweep of the growth grids, read by the growth claims and the
// proofs' independence model, and the powers the catalogue uses.
#include <attnlab/core/text.hpp>
#include <attnlab/mc/attention_mc.hpp>
#include <attnlab/norms/attention_norms.hpp>
#include <attnlab/theory/claims.hpp>
#include <attnlab/theory/extreme_rows.hpp>
#include <attnlab/theory/moments.hpp>
#include <attnlab/theory/verdicts.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>

namespace attnlab::poly_claims {

struct Grid {
  std::string name;
  Index D, d;
  double sigma_x, sigma_t;
  std::vector<Index> N;
};

std::vector<Grid> growth_grids(bool quick);

// Rows of every grid point (each point cached on its own, so a killed run resumes).
std::vector<ResultRow> growth_sweep(const ClaimContext& ctx);

// The powers the catalogue uses: 1..3 (Thm 4.2, 4.3), 1..5 (eq 43) and up to 8 (poly.high_p's "large p").
inline constexpr int kCataloguePMax = 8;

// Each part of the catalogue adds its claims, in catalogue order (poly_claims.cpp).
// An estimate moved to `target` as if measured with 100 times the trials: relative errors a tenth as large.
void measured_precisely_at(Estimate& v, double target);

void register_norm_claims(ClaimRegistry& r);
void register_proof_claims(ClaimRegistry& r);
void register_high_p_claims(ClaimRegistry& r);

}  // namespace attnlab::poly_claims
