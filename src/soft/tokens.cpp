#include <attnlab/core/ensemble.hpp>
#include <attnlab/core/text.hpp>
#include <attnlab/soft/tokens.hpp>

#include <cmath>
#include <stdexcept>

namespace attnlab {

TokenEnsemble parse_token_ensemble(const std::string& s) {
  if (s == "gaussian") return TokenEnsemble::gaussian;
  if (s == "clustered") return TokenEnsemble::clustered;
  if (s == "low_rank") return TokenEnsemble::low_rank;
  if (s == "grid") return TokenEnsemble::grid;
  throw std::invalid_argument(text("tokens must be gaussian, clustered, low_rank or grid (got '", s, "')"));
}

std::string to_string(TokenEnsemble e) {
  switch (e) {
    case TokenEnsemble::gaussian: return "gaussian";
    case TokenEnsemble::clustered: return "clustered";
    case TokenEnsemble::low_rank: return "low_rank";
    case TokenEnsemble::grid: return "grid";
  }
  return "?";
}

void TokenSpec::validate() const {
  if (n < 1) throw std::invalid_argument(text("n must be at least 1 (got ", n, ")"));
  if (d < 1) throw std::invalid_argument(text("d must be at least 1 (got ", d, ")"));
  if (!(scale > 0) || !std::isfinite(scale))
    throw std::invalid_argument(text("scale must be a positive finite number (got ", scale, ")"));
  if (kind == TokenEnsemble::clustered && clusters < 1)
    throw std::invalid_argument(text("clusters must be at least 1 (got ", clusters, ")"));
  if ((kind == TokenEnsemble::clustered || kind == TokenEnsemble::grid) && !(spread >= 0 && std::isfinite(spread)))
    throw std::invalid_argument(text("spread must be a finite number >= 0 (got ", spread, ")"));
  if (kind == TokenEnsemble::low_rank && rank < 1)
    throw std::invalid_argument(text("rank must be at least 1 (got ", rank, ")"));
  if (kind == TokenEnsemble::grid && (grid_h < 1 || grid_w < 1 || grid_h * grid_w != n))
    throw std::invalid_argument(
        text("grid must have grid_h x grid_w = n tokens (got ", grid_h, "x", grid_w, " for n = ", n, ")"));
}

std::uint64_t TokenSpec::key() const {
  return hash_words({hash_string("soft-tokens"), std::uint64_t(kind), std::uint64_t(n), std::uint64_t(d),
                     std::uint64_t(clusters), std::uint64_t(rank), std::uint64_t(grid_h), std::uint64_t(grid_w)});
}

std::string TokenSpec::describe() const {
  std::string s = text(to_string(kind), " n=", n, " d=", d, " scale=", scale);
  if (kind == TokenEnsemble::clustered) s += text(" clusters=", clusters, " spread=", spread);
  if (kind == TokenEnsemble::low_rank) s += text(" rank=", rank);
  if (kind == TokenEnsemble::grid) s += text(" grid=", grid_h, "x", grid_w, " spread=", spread);
  return s;
}

MatrixD draw_tokens(const TokenSpec& spec, std::uint64_t seed, std::uint32_t trial) {
  spec.validate();
  const auto stream = [&](StreamTag tag) { return GaussianStream(seed, spec.key(), trial, tag); };
  MatrixD T(spec.n, spec.d);
  switch (spec.kind) {
    case TokenEnsemble::gaussian: fill_gaussian(T, stream(StreamTag::X), spec.scale); break;
    case TokenEnsemble::clustered: {
      MatrixD centres(spec.clusters, spec.d);
      fill_gaussian(centres, stream(StreamTag::A), spec.scale);
      fill_gaussian(T, stream(StreamTag::X), spec.spread * spec.scale);
      for (Index i = 0; i < spec.n; ++i) T.row(i) += centres.row(i % spec.clusters);
      break;
    }
    case TokenEnsemble::low_rank: {
      MatrixD Z(spec.n, spec.rank), W(spec.rank, spec.d);
      fill_gaussian(Z, stream(StreamTag::A), spec.scale);
      fill_gaussian(W, stream(StreamTag::B), 1.0 / std::sqrt(double(spec.rank)));
      T = Z * W;
      break;
    }
    case TokenEnsemble::grid: {
      // Σ_f a_f cos(2π(u_f h/H + v_f w/W) + φ_f) over frequencies (u, v) ∈ {0, 1, 2}², amplitudes a_f ∈ R^d.
      constexpr int kFreq = 3;
      MatrixD amplitude(kFreq * kFreq, spec.d), phase(1, kFreq * kFreq);
      fill_gaussian(amplitude, stream(StreamTag::A), spec.scale / kFreq);
      fill_gaussian(phase, stream(StreamTag::B), 1.0);
      fill_gaussian(T, stream(StreamTag::X), spec.spread * spec.scale);
      for (Index h = 0; h < spec.grid_h; ++h)
        for (Index w = 0; w < spec.grid_w; ++w)
          for (int f = 0; f < kFreq * kFreq; ++f) {
            const double angle = 2 * M_PI *
                                     ((f / kFreq) * double(h) / spec.grid_h + (f % kFreq) * double(w) / spec.grid_w) +
                                 phase(0, f);
            T.row(h * spec.grid_w + w) += std::cos(angle) * amplitude.row(f);
          }
      break;
    }
  }
  return T;
}

}  // namespace attnlab
