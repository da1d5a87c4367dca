// The SOFT claims' inputs: the options validated and read, the token ensembles and bottleneck matrices generated.
#include "inputs.hpp"

namespace attnlab::soft_claims {

ResultRow soft_row(const std::string& quantity, const std::string& label, Index n, Index m, double value,
                   ExtraColumns extra) {
  ResultRow r{.study = "verify",
              .quantity = quantity,
              .activation = label,
              .N = n,
              .value = estimate(std::vector<double>{value})};
  extra.insert(extra.begin(), {"m", m});
  r.extra = std::move(extra);
  return r;
}

TokenSpec token_spec(const std::string& kind, Index n, Index d) {
  TokenSpec t;
  t.kind = parse_token_ensemble(kind);
  t.n = n;
  t.d = d;
  t.scale = std::pow(double(d), -0.25);
  const auto side = static_cast<Index>(std::llround(std::sqrt(double(n))));
  if (t.kind == TokenEnsemble::grid) t.grid_h = side, t.grid_w = n / side;
  return t;
}

bool has_tokens_file(const ClaimContext& ctx) { return ctx.soft.file_tokens.size() > 0; }

std::vector<std::string> token_kinds(const ClaimContext& ctx) {
  return has_tokens_file(ctx) ? std::vector<std::string>{kTokensFile} : ctx.soft.tokens;
}

TokenSet token_set(const ClaimContext& ctx, const std::string& kind, Index n, std::uint32_t trial) {
  if (has_tokens_file(ctx)) return {.label = kTokensFile, .T = ctx.soft.file_tokens};
  const auto spec = token_spec(kind, n, ctx.soft.d);
  return {.label = kind,
          .T = draw_tokens(spec, ctx.seed, trial),
          .sampler = spec.kind == TokenEnsemble::grid ? Sampler::pool : Sampler::random,
          .grid_h = spec.grid_h,
          .grid_w = spec.grid_w};
}

MatrixD bottleneck_matrix(const ClaimContext& ctx, const TokenSet& tokens, Index m, std::uint32_t trial) {
  const MatrixD landmarks = tokens.landmarks(m, ctx.seed + trial);
  return gaussian_kernel(landmarks, landmarks);
}

std::vector<Index> m_grid(const ClaimContext& ctx, std::vector<Index> full, std::vector<Index> quick) {
  if (!ctx.soft.m.empty()) return ctx.soft.m;
  return ctx.sized(full, quick);
}

MatrixD structured_tokens(const std::string& kind, Index n, Index d, std::uint64_t seed) {
  const double s = std::pow(double(d), -0.25);
  MatrixD G(n, d);
  fill_gaussian(G,
                GaussianStream(seed, hash_words({hash_string("soft-structured"), hash_string(kind), std::uint64_t(n)}),
                               0, StreamTag::Q),
                s);
  if (kind == "identical") return G.row(0).replicate(n, 1);
  if (kind == "collapsed_clusters") {
    MatrixD T(n, d);
    for (Index i = 0; i < n; ++i) T.row(i) = G.row(i % std::min<Index>(4, n));
    return T;
  }
  if (kind == "tiny_scale") return 1e-3 * G;
  if (kind == "huge_scale") return 1e3 * G;
  if (kind == "outlier") {
    const VectorD u = VectorD::Constant(d, 1 / std::sqrt(double(d)));
    MatrixD T = 0.5 * G;
    T.rowwise() += (2 * s * std::sqrt(double(d))) * u.transpose();
    T.row(0) = (16 * s * std::sqrt(double(d))) * u.transpose();
    return T;
  }
  throw std::invalid_argument(text("structured tokens: unknown kind '", kind, "'"));
}

}  // namespace attnlab::soft_claims

namespace attnlab {

void SoftOptions::validate() const {
  if (n < 1) throw std::invalid_argument(text("n must be at least 1 (got ", n, ")"));
  if (d < 1) throw std::invalid_argument(text("d must be at least 1 (got ", d, ")"));
  // The full kernel of n tokens is n x n; a size beyond memory is refused before anything is allocated.
  const double kernel_bytes = 8 * double(n) * double(n), memory = physical_memory_bytes();
  if (kernel_bytes > memory)
    throw std::invalid_argument(text("n: ", n, " tokens need a ", sig(kernel_bytes / 1e9, 3),
                                     " GB kernel, more than this "
                                     "machine's ",
                                     sig(memory / 1e9, 3), " GB"));
  for (Index v : m) {
    if (v < 1) throw std::invalid_argument(text("m must be at least 1 (got ", v, ")"));
    if (v > n) throw std::invalid_argument(text("m must not exceed n = ", n, " (got ", v, ")"));
  }
  for (const auto& s : samplers) parse_sampler(s);
  for (const auto& t : tokens) parse_token_ensemble(t);
  if (!(tolerance >= 0) || !std::isfinite(tolerance))
    throw std::invalid_argument(text("tolerance must be a finite number >= 0 (got ", tolerance, ")"));
  if (max_iterations < 1)
    throw std::invalid_argument(text("max-iterations must be at least 1 (got ", max_iterations, ")"));
}

void SoftOptions::set_matrix(const std::vector<std::vector<double>>& rows) {
  if (rows.empty()) throw std::invalid_argument("matrix: empty (no rows of numbers)");
  const Index m = static_cast<Index>(rows.size());
  matrix.resize(m, m);
  for (Index i = 0; i < m; ++i) {
    if (static_cast<Index>(rows[std::size_t(i)].size()) != m)
      throw std::invalid_argument(text("matrix: row ", i + 1, " has ", rows[std::size_t(i)].size(),
                                       " entries, expected ", m, " (the matrix must be square)"));
    for (Index j = 0; j < m; ++j) matrix(i, j) = rows[std::size_t(i)][std::size_t(j)];
  }
  if (matrix.cwiseAbs().maxCoeff() == 0) throw std::invalid_argument("matrix: is zero (no alpha: ||A|| = 0)");
}

void SoftOptions::set_tokens(const std::vector<std::vector<double>>& rows) {
  if (rows.empty()) throw std::invalid_argument("tokens-file: empty (no rows of numbers)");
  const Index count = static_cast<Index>(rows.size()), dim = static_cast<Index>(rows.front().size());
  file_tokens.resize(count, dim);
  for (Index i = 0; i < count; ++i) {
    const auto& row = rows[std::size_t(i)];
    if (static_cast<Index>(row.size()) != dim)
      throw std::invalid_argument(text("tokens-file: row ", i + 1, " has ", row.size(), " entries, expected ", dim,
                                       " (every token has the d entries of row 1)"));
    for (Index j = 0; j < dim; ++j) file_tokens(i, j) = row[std::size_t(j)];
  }
  n = count;
  d = dim;
}

std::vector<SoftMatrix> soft_pinv_inputs(const ClaimContext& ctx, const std::vector<Index>& default_m) {
  if (ctx.soft.matrix.size() > 0) return {{"matrix", ctx.soft.matrix.rows(), ctx.soft.matrix}};
  std::vector<SoftMatrix> inputs;
  for (const auto& kind : soft_claims::token_kinds(ctx)) {
    const auto tokens = soft_claims::token_set(ctx, kind, ctx.soft.n, 0);
    for (Index m : ctx.soft.m.empty() ? default_m : ctx.soft.m)
      if (m <= ctx.soft.n) inputs.push_back({tokens.label, m, soft_claims::bottleneck_matrix(ctx, tokens, m, 0)});
  }
  return inputs;
}

}  // namespace attnlab
