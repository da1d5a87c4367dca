#pragma once
// Token ensembles for SOFT's Gaussian-kernel attention: n tokens in R^d drawn from Philox streams
// keyed by (seed, ensemble, trial), so that every configuration is reproducible on its own.
#include <attnlab/core/types.hpp>

#include <cstdint>
#include <string>

namespace attnlab {

// gaussian: i.i.d. N(0, scale²) tokens. clustered: `clusters` centres N(0, scale²) and tokens
// centre + N(0, (spread·scale)²), token i in cluster i mod clusters (well separated centres make the
// kernel matrix nearly block diagonal: Prop 5's "k-connected" case). low_rank: Z W/√rank with Z, W
// Gaussian, rank `rank`. grid: a grid_h × grid_w image whose tokens vary smoothly (a few low spatial
// frequencies with Gaussian amplitudes) plus N(0, (spread·scale)²) noise, row-major over the grid.
enum class TokenEnsemble { gaussian, clustered, low_rank, grid };
TokenEnsemble parse_token_ensemble(const std::string& s);
std::string to_string(TokenEnsemble e);

struct TokenSpec {
  TokenEnsemble kind = TokenEnsemble::gaussian;
  Index n = 256;
  Index d = 32;
  double scale = 1.0;
  Index clusters = 4;
  double spread = 0.1;
  Index rank = 4;
  Index grid_h = 0, grid_w = 0;  // grid: n = grid_h · grid_w

  void validate() const;  // throws std::invalid_argument naming the parameter
  std::uint64_t key() const;
  std::string describe() const;
};

MatrixD draw_tokens(const TokenSpec& spec, std::uint64_t seed, std::uint32_t trial);

}  // namespace attnlab
