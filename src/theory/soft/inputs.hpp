#pragma once
// What the SOFT claims share: the token sets and bottleneck matrices they run on (the user's --matrix and
// --tokens-file in their place), the rows they report, and the rounding allowance of their bounds.
#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/machine.hpp>
#include <attnlab/core/process.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/soft/kernel.hpp>
#include <attnlab/soft/pinv.hpp>
#include <attnlab/soft/spectral.hpp>
#include <attnlab/soft/tokens.hpp>
#include <attnlab/theory/claims.hpp>
#include <attnlab/theory/extreme_rows.hpp>
#include <attnlab/theory/verdicts.hpp>

#include <Eigen/Eigenvalues>
#include <Eigen/LU>
#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <tuple>

namespace attnlab::soft_claims {

inline constexpr double kEps = std::numeric_limits<double>::epsilon();

inline const Threshold kRoundingFactor{
    "soft_rounding_factor", 100,
    "derived: a backward-stable product or decomposition of size m errs by about m eps relative, amplified by the "
    "condition kappa for an inverse or a non-normal eigenproblem; 100 covers the constants and the traced norms' own "
    "error, far below the O(1) errors of a method that does not converge"};

ResultRow soft_row(const std::string& quantity, const std::string& label, Index n, Index m, double value,
                   ExtraColumns extra = {});

// Tokens of unit kernel bandwidth: E‖q − k‖²/(2√d) = 1 for i.i.d. N(0, d^{-1/2}) entries.
TokenSpec token_spec(const std::string& kind, Index n, Index d);

// n tokens a claim draws bottlenecks from, labelled for the evidence rows, with how their landmarks are taken.
struct TokenSet {
  std::string label;
  MatrixD T;
  Sampler sampler = Sampler::random;
  Index grid_h = 0, grid_w = 0;  // pool: the token grid

  MatrixD landmarks(Index m, std::uint64_t seed) const {
    return bottleneck_tokens(T, {sampler, m, grid_h, grid_w}, seed);
  }
};

inline constexpr const char* kTokensFile = "tokens_file";

bool has_tokens_file(const ClaimContext& ctx);

// The token ensembles a claim loops over: --tokens, or the user's --tokens-file alone.
std::vector<std::string> token_kinds(const ClaimContext& ctx);

// n tokens of `kind` (trial `trial`): grids pooled, the others sampled at random. The user's --tokens-file takes the
// place of every kind and size, with landmarks sampled at random (a file has no grid).
TokenSet token_set(const ClaimContext& ctx, const std::string& kind, Index n, std::uint32_t trial);

// The bottleneck matrix A (m×m) of the tokens of trial `trial`.
MatrixD bottleneck_matrix(const ClaimContext& ctx, const TokenSet& tokens, Index m, std::uint32_t trial);

std::vector<Index> m_grid(const ClaimContext& ctx, std::vector<Index> full, std::vector<Index> quick);

// Structured extremes of n tokens in R^d (unit bandwidth scale s = d^{-1/4}): every token the same; k = 4 distinct
// tokens repeated (collapsed clusters); i.i.d. tokens shrunk 1e-3 (every kernel entry → 1) or grown 1e3 (→ δ_ij,
// softmax → one-hot); and an outlier: tokens sharing a direction u, one of them 8 times further along it, which
// every query of softmax attention then attends to.
inline const std::vector<std::string> kStructured{"identical", "collapsed_clusters", "tiny_scale", "huge_scale",
                                                  "outlier"};

MatrixD structured_tokens(const std::string& kind, Index n, Index d, std::uint64_t seed);

// Each part of the catalogue adds its claims, in catalogue order (soft_claims.cpp).
// The token ensembles' bottlenecks for each m (--quick: quick_m), and without --matrix or --tokens-file the structured
// extremes and matrices no kernel gives: the inputs of the Newton–Raphson claims (newton.cpp, fig5.cpp).
std::vector<SoftMatrix> newton_inputs(const ClaimContext& ctx, std::vector<Index> full_m, std::vector<Index> quick_m);

void register_newton_claims(ClaimRegistry& r);
void register_fig5_claims(ClaimRegistry& r);
void register_bottleneck_claims(ClaimRegistry& r);
void register_attention_spectrum_claims(ClaimRegistry& r);
void register_kernel_bound_claims(ClaimRegistry& r);
void register_eq12_claims(ClaimRegistry& r);
void register_pinv_growth_claims(ClaimRegistry& r);
void register_fig6_claims(ClaimRegistry& r);
void register_s_hat_claims(ClaimRegistry& r);
void register_long_n_claims(ClaimRegistry& r);
void register_complexity_claims(ClaimRegistry& r);
void register_nystrom_error_claims(ClaimRegistry& r);
void register_reconstruction_claims(ClaimRegistry& r);

}  // namespace attnlab::soft_claims
