// Spectra and bounds of attention matrices: Prop 3 (softmax), Prop 4 (Gaussian kernel), eq 15 and Lemmas 1, 2, each
// inequality searched over random ensembles and structured extremes.
#include "inputs.hpp"

#include <attnlab/core/linalg.hpp>

namespace attnlab::soft_claims {
namespace {

// A matrix as CSV, every digit kept so that it replays exactly with --matrix.
std::string matrix_csv(const MatrixD& M) {
  std::string csv;
  char cell[32];
  for (Index i = 0; i < M.rows(); ++i) {
    for (Index j = 0; j < M.cols(); ++j) {
      std::snprintf(cell, sizeof cell, "%.17g", M(i, j));
      csv += text(j ? "," : "", cell);
    }
    csv += "\n";
  }
  return csv;
}

MatrixD row_softmax(MatrixD L) {
  for (Index i = 0; i < L.rows(); ++i) {
    L.row(i) = (L.row(i).array() - L.row(i).maxCoeff()).exp().matrix();
    L.row(i) /= L.row(i).sum();
  }
  return L;
}

// One input of an inequality f ≤ g: the ratio f/g, the rounding its computation allows (relative, beyond
// bound_rounding, per unit of soft_rounding_factor), the matrix that replays it (empty when too large to keep), and
// the tokens it was built from where --tokens-file replays it too (empty otherwise).
struct BoundCase {
  std::string input;
  double ratio = 0;
  double allowance = 0;
  ResultRow row{};
  MatrixD replay{};
  MatrixD replay_tokens{};
};

struct BoundEvidence {
  std::vector<BoundCase> cases{};
  std::string replay_hint;    // what --matrix means for this claim
  std::string tokens_hint{};  // how --tokens-file replays a case's tokens
  std::vector<Figure> figures{};
};

// The worst case (net of its rounding allowance) decides; its input is saved as worst_inputs/<id>.csv, and its tokens,
// where kept, as worst_inputs/<id>.tokens.csv.
ClaimOutcome judge_bound(const BoundEvidence& e, const Thresholds& t, const std::string& id, const std::string& what) {
  if (e.cases.empty()) return {.verdict = Verdict::inconclusive, .detail = "no inputs"};
  const auto net = [&](const BoundCase& c) {
    return c.ratio / (1 + (c.allowance > 0 ? c.allowance * t(kRoundingFactor) : 0));
  };
  const auto& w = *first_largest(e.cases.begin(), e.cases.end(), net);
  ClaimOutcome out{.verdict = bound_verdict(net(w), t), .measured = w.ratio, .claimed = 1};
  int above = 0;
  for (const auto& c : e.cases) {
    above += net(c) > 1 + t(kBoundRounding);
    out.evidence.push_back(c.row);
    if (c.allowance > 0) out.evidence.back().extra.push_back({"allowance", c.allowance * t(kRoundingFactor)});
  }
  const std::string file = text("worst_inputs/", id, ".csv");
  ResultRow worst = w.row;
  worst.quantity = "worst_input";
  worst.extra.push_back({"ratio", w.ratio});
  worst.extra.push_back({"file", w.replay.size() > 0 ? file : std::string("not kept (too large)")});
  worst.extra.push_back({"replay", e.replay_hint});
  const std::string tokens_file = text("worst_inputs/", id, ".tokens.csv");
  if (w.replay_tokens.size() > 0) {
    worst.extra.push_back({"worst_tokens", tokens_file});
    worst.extra.push_back({"tokens_replay", e.tokens_hint});
    out.files.push_back({tokens_file, matrix_csv(w.replay_tokens)});
  }
  out.evidence.push_back(worst);
  if (w.replay.size() > 0) out.files.push_back({file, matrix_csv(w.replay)});
  out.detail = text("largest ", what, " ", sig(w.ratio, 6), " at ", w.input, " (", above, " of ", e.cases.size(),
                    " inputs above 1 beyond rounding); ",
                    w.replay.size() > 0
                        ? text("the worst input is ", file, ", replayed by ", e.replay_hint)
                        : std::string("the worst input is too large to keep (regenerate it from its label)"),
                    w.replay_tokens.size() > 0 ? text("; its tokens are ", tokens_file, ", replayed by ", e.tokens_hint)
                                               : std::string());
  out.figures = e.figures;
  return out;
}

// The worst case moved to `ratio` (the others scaled alike, allowances dropped): 1.25 for a violation, 0.99 for
// support.
void rescale_ratios(BoundEvidence& e, double ratio) {
  double worst = 0;
  for (const auto& c : e.cases) worst = std::max(worst, c.ratio);
  for (auto& c : e.cases) c.ratio *= ratio / worst, c.allowance = 0;
}

// bound_verdict's edges, and the rounding allowance's: the last input above the bound by (1 + a·x), with an allowance
// of a per unit of the factor, is within its allowance below the factor's value x and violates the bound above it.
std::vector<Crossing<BoundEvidence>> rounding_factor_crossings() {
  auto crossings = bound_crossings<BoundEvidence>([](BoundEvidence& e, double r) { e.cases.back().ratio = r; },
                                                  rescale_ratios);
  crossings.push_back({&kRoundingFactor, "the last input above the bound within its rounding allowance", Verdict::holds,
                       Verdict::violated, [](BoundEvidence& e, double x) {
                         constexpr double allowance = 1e-3;  // per unit of the factor: 10% at its value, 100
                         e.cases.back().allowance = allowance;
                         e.cases.back().ratio = (1 + kBoundRounding.value) * (1 + allowance * x);
                       }});
  return crossings;
}

ClaimRules<BoundEvidence> bound_rules(std::function<BoundEvidence(const ClaimContext&)> measure, std::string id,
                                      std::string what) {
  return {.measure = std::move(measure),
          .judge = [id, what](const BoundEvidence& e, const Thresholds& t) { return judge_bound(e, t, id, what); },
          .contradict = [](BoundEvidence& e) { rescale_ratios(e, 1.25); },
          .support = [](BoundEvidence& e) { rescale_ratios(e, 0.99); },
          .crossings = rounding_factor_crossings()};
}

// ---- Prop 3: softmax self-attention -------------------------------------------------------------

// Token sets for the attention claims: i.i.d. Gaussian tokens at several scales and sizes, then the structured
// extremes and a single token. K is drawn independently of Q where `cross`. The user's --tokens-file replaces them
// all (K = Q).
struct TokenCase {
  std::string input;
  MatrixD Q, K;
};

std::vector<TokenCase> attention_token_cases(const ClaimContext& ctx, const std::vector<double>& scales,
                                             const std::vector<Index>& sizes, bool cross) {
  if (has_tokens_file(ctx)) return {{kTokensFile, ctx.soft.file_tokens, ctx.soft.file_tokens}};
  std::vector<TokenCase> cases;
  for (Index n : sizes)
    for (double scale : scales) {
      auto spec = token_spec("gaussian", n, ctx.soft.d);
      spec.scale *= scale;
      const MatrixD Q = draw_tokens(spec, ctx.seed, 0);
      cases.push_back({text("gaussian n=", n, " scale ", scale, " K=Q"), Q, Q});
      if (cross)
        cases.push_back({text("gaussian n=", n, " scale ", scale, " K!=Q"), Q, draw_tokens(spec, ctx.seed, 1)});
    }
  for (Index n : {Index{16}, Index{64}})
    for (const auto& kind : kStructured) {
      const MatrixD T = structured_tokens(kind, n, ctx.soft.d, ctx.seed);
      cases.push_back({text(kind, " n=", n, " K=Q"), T, T});
    }
  const MatrixD one = structured_tokens("identical", 1, ctx.soft.d, ctx.seed);
  cases.push_back({"one token K=Q", one, one});
  return cases;
}

MatrixD logits(const MatrixD& Q, const MatrixD& K) { return Q * K.transpose() / std::sqrt(double(Q.cols())); }

struct EigenCase {
  std::string input;
  Index n = 0;
  double max_imag = 0, min_real = 0, max_real = 0, allowance = 0;
  bool self = true;  // K = Q (the statement's case)
};

struct EigenEvidence {
  std::vector<EigenCase> cases{};
};

// Eigenvalues of S = softmax(L) by the non-symmetric solver; for K = Q, S = D⁻¹A is diagonalised by V = D^{-1/2}U,
// so rounding moves them by about m eps ||S||_2 κ(V), κ(V) = sqrt(max d / min d), d = A 1 (from log-sums, which
// do not overflow): the allowance, per unit of soft_rounding_factor.
EigenCase eigen_case(const std::string& input, const MatrixD& L, bool self) {
  const MatrixD S = row_softmax(L);
  const Eigen::VectorXcd ev = linalg::eigenvalues(S);
  VectorD log_d(L.rows());
  for (Index i = 0; i < L.rows(); ++i) {
    const double top = L.row(i).maxCoeff();
    log_d(i) = top + std::log((L.row(i).array() - top).exp().sum());
  }
  const double kappa_v = std::exp(0.5 * (log_d.maxCoeff() - log_d.minCoeff()));
  return {input,
          L.rows(),
          ev.imag().cwiseAbs().maxCoeff(),
          ev.real().minCoeff(),
          ev.real().maxCoeff(),
          double(L.rows()) * kEps * spectral_norm_svd(S) * kappa_v,
          self};
}

EigenEvidence measure_prop3_literal(const ClaimContext& ctx) {
  EigenEvidence e;
  if (ctx.soft.matrix.size() > 0) {
    e.cases.push_back(eigen_case("matrix (logits)", ctx.soft.matrix, ctx.soft.matrix == ctx.soft.matrix.transpose()));
    return e;
  }
  const auto sizes = ctx.sized(std::vector<Index>{16, 64, 256}, std::vector<Index>{16, 64});
  for (const auto& c : attention_token_cases(ctx, {0.5, 1, 2, 4}, sizes, true))
    e.cases.push_back(eigen_case(c.input, logits(c.Q, c.K), c.Q == c.K));
  return e;
}

void eigenvalues_in_range(EigenEvidence& e) {
  for (auto& c : e.cases) c.max_imag = 0, c.min_real = 0, c.max_real = std::min(c.max_real, 1.0);
  if (e.cases.empty()) e.cases.push_back({"support", 2, 0, 0, 1});
}

ClaimOutcome judge_prop3_literal(const EigenEvidence& e, const Thresholds& t) {
  ClaimOutcome out;
  double worst_excess = -HUGE_VAL, min_real = HUGE_VAL, max_real = -HUGE_VAL, cross_radius = 0, cross_imag = 0;
  std::string at;
  int self = 0;
  for (const auto& c : e.cases) {
    const double allowance = c.allowance * t(kRoundingFactor);
    out.evidence.push_back(soft_row("eigenvalue_range", c.input, c.n, 0, c.max_real,
                                    {{"min_real", c.min_real},
                                     {"max_imag", c.max_imag},
                                     {"allowance", allowance},
                                     {"K_equals_Q", c.self ? "true" : "false"}}));
    if (!c.self) {
      cross_radius = std::max({cross_radius, std::abs(c.min_real), std::abs(c.max_real)});
      cross_imag = std::max(cross_imag, c.max_imag);
      continue;
    }
    ++self;
    const double excess = std::max({c.max_imag, -c.min_real, c.max_real - 1}) - allowance;
    if (clearly_larger(excess, worst_excess)) worst_excess = excess, at = c.input;
    min_real = std::min(min_real, c.min_real), max_real = std::max(max_real, c.max_real);
  }
  out.verdict = self == 0 ? Verdict::inconclusive : worst_excess > 0 ? Verdict::violated : Verdict::holds;
  out.measured = max_real;
  out.claimed = 1;
  out.ci_lo = min_real;
  out.ci_hi = max_real;
  out.detail = text("K = Q (", self, " inputs): eigenvalues of softmax(QQ^T/sqrt d) in [", sig(min_real, 4), ", ",
                    sig(max_real, 8), "], largest excess over [0, 1] beyond rounding ", sig(worst_excess, 3), " (", at,
                    ") | K != Q, not covered by the statement: complex eigenvalues up to |imag| ", sig(cross_imag, 3),
                    ", real parts within ", sig(cross_radius, 6), " of 0 (row-stochastic: radius <= 1)");
  return out;
}

// ||S||_2 ≤ 1, the reading the error-growth argument needs (||XY|| ≤ ||X|| ||Y||), on K = Q and K ≠ Q.
BoundEvidence measure_prop3_as_used(const ClaimContext& ctx) {
  BoundEvidence e{
      .replay_hint =
          "soft_spectral --claims soft.prop3.as_used --matrix <file> (the logits Q K^T/sqrt(d); S is their row softmax)",
      .tokens_hint = "soft_spectral --claims soft.prop3.as_used --tokens-file <file> (the tokens Q = K)"};
  // `tokens`: Q where K = Q, which --tokens-file replays; empty otherwise.
  const auto add = [&](const std::string& input, const MatrixD& L, const MatrixD& tokens) {
    const double norm = spectral_norm_svd(row_softmax(L));
    const bool keep = L.rows() <= 256;
    e.cases.push_back({input, norm, 0, soft_row("spectral_norm", input, L.rows(), 0, norm), keep ? L : MatrixD(),
                       keep ? tokens : MatrixD()});
  };
  if (ctx.soft.matrix.size() > 0) {
    add("matrix (logits)", ctx.soft.matrix, MatrixD());
    return e;
  }
  const auto sizes = ctx.sized(std::vector<Index>{16, 64, 256}, std::vector<Index>{16, 64});
  for (const auto& c : attention_token_cases(ctx, {0.5, 1, 2, 4}, sizes, true))
    add(c.input, logits(c.Q, c.K), c.Q == c.K ? c.Q : MatrixD());
  return e;
}

// ---- Prop 4: Gaussian-kernel attention ---------------------------------------------------------

BoundEvidence measure_prop4(const ClaimContext& ctx) {
  BoundEvidence e{
      .replay_hint = "soft_spectral --claims soft.prop4_gauss_eig --matrix <file> (the kernel S = exp(Q - Q))",
      .tokens_hint = "soft_spectral --claims soft.prop4_gauss_eig --tokens-file <file> (the tokens Q)"};
  Figure fig{.name = "soft_prop4_gauss_eig",
             .title = "largest eigenvalue of Gaussian-kernel attention over n",
             .xlabel = "n",
             .ylabel = "lambda_1 / n",
             .logx = true,
             .logy = true};
  const auto add = [&](const std::string& input, const MatrixD& S, const MatrixD& tokens) {
    const double ratio = spectral_norm(S, {.tolerance = 1e-12}).value / double(S.rows());  // symmetric PSD: λ₁ = σ₁
    const bool keep = S.rows() <= 256;
    e.cases.push_back({input, ratio, 0, soft_row("lambda1_over_n", input, S.rows(), 0, ratio), keep ? S : MatrixD(),
                       keep ? tokens : MatrixD()});
    return ratio;
  };
  const auto add_tokens = [&](const std::string& input, const MatrixD& T) {
    return add(input, gaussian_kernel(T, T), T);
  };
  if (ctx.soft.matrix.size() > 0) {
    add("matrix (kernel)", ctx.soft.matrix, MatrixD());
    return e;
  }
  if (has_tokens_file(ctx)) {
    add_tokens(kTokensFile, ctx.soft.file_tokens);
    return e;
  }
  for (double scale : {0.05, 0.5, 1.0, 2.0}) {
    Series s{.label = text("token scale ", scale, " x d^-1/4")};
    for (Index n : ctx.sized(std::vector<Index>{64, 256, 1024, 2048}, std::vector<Index>{64, 256})) {
      auto spec = token_spec("gaussian", n, ctx.soft.d);
      spec.scale *= scale;
      s.x.push_back(double(n)),
          s.y.push_back(add_tokens(text("gaussian n=", n, " scale ", scale), draw_tokens(spec, ctx.seed, 0)));
    }
    fig.series.push_back(s);
  }
  for (Index n : {Index{16}, Index{64}})
    for (const auto& kind : kStructured)
      add_tokens(text(kind, " n=", n), structured_tokens(kind, n, ctx.soft.d, ctx.seed));
  add_tokens("one token", structured_tokens("identical", 1, ctx.soft.d, ctx.seed));
  e.figures.push_back(fig);
  return e;
}

// ---- eq 15 and Lemmas 1, 2 ----------------------------------------------------------------------

// ‖PᵀA†P‖₂ / (‖P‖₂² ‖A†‖₂) for the kernel M of [Q̃; Q]: A = M[0:m, 0:m], P = M[0:m, m:].
double eq15_ratio(const MatrixD& M, Index m) {
  const MatrixD A = M.topLeftCorner(m, m), P = M.topRightCorner(m, M.cols() - m);
  const MatrixD pinv = dense_pinv(A);
  const double s_hat = spectral_norm(
                           [&](const VectorD& v) -> VectorD { return P.transpose() * (pinv * (P * v)); },
                           [&](const VectorD& v) -> VectorD { return P.transpose() * (pinv.transpose() * (P * v)); },
                           P.cols(), P.cols(), {.tolerance = 1e-10})
                           .value;
  const double p = spectral_norm_svd(P);
  return s_hat / (p * p * spectral_norm_svd(pinv));
}

MatrixD stacked_kernel(const MatrixD& landmarks, const MatrixD& T) {
  MatrixD all(landmarks.rows() + T.rows(), T.cols());
  all << landmarks, T;
  return gaussian_kernel(all, all);
}

BoundEvidence measure_eq15(const ClaimContext& ctx) {
  BoundEvidence e{
      .replay_hint =
          "soft_spectral --claims soft.eq15 --matrix <file> --m <m of the input label> (the kernel of [bottleneck tokens; tokens])",
      .tokens_hint = text("soft_spectral --claims soft.eq15 --tokens-file <file> --m <m of the input label> --seed ",
                          ctx.seed, " (the tokens; the seed samples the same landmarks)")};
  if (ctx.soft.matrix.size() > 0) {
    if (ctx.soft.m.size() != 1 || ctx.soft.m.front() >= ctx.soft.matrix.rows())
      throw std::invalid_argument(
          "m: soft.eq15 reads --matrix as the kernel of [bottleneck; tokens] and needs one --m "
          "below its size");
    const Index m = ctx.soft.m.front();
    const double ratio = eq15_ratio(ctx.soft.matrix, m);
    e.cases.push_back({"matrix", ratio, 0, soft_row("ratio_to_bound", "matrix", ctx.soft.matrix.rows() - m, m, ratio),
                       ctx.soft.matrix});
    return e;
  }
  // Tokens whose landmarks were sampled at random replay with --tokens-file (which samples them so); pooled ones do
  // not.
  const auto add = [&](const TokenSet& tokens, Index m) {
    const MatrixD M = stacked_kernel(tokens.landmarks(m, ctx.seed), tokens.T);
    const double ratio = eq15_ratio(M, m);
    const bool keep = M.rows() <= 256;
    e.cases.push_back({text(tokens.label, " n=", tokens.T.rows(), " m=", m), ratio, 0,
                       soft_row("ratio_to_bound", tokens.label, tokens.T.rows(), m, ratio), keep ? M : MatrixD(),
                       keep && tokens.sampler == Sampler::random ? tokens.T : MatrixD()});
  };
  for (const auto& kind : token_kinds(ctx)) {
    const auto tokens = token_set(ctx, kind, ctx.soft.n, 0);
    for (Index m : m_grid(ctx, {16, 49, 100}, {16, 49}))
      if (m <= tokens.T.rows()) add(tokens, m);
  }
  if (has_tokens_file(ctx)) return e;
  for (const auto& kind : kStructured)
    for (Index m : {Index{4}, Index{16}})
      add({.label = kind, .T = structured_tokens(kind, 64, ctx.soft.d, ctx.seed)}, m);
  return e;
}

double norm1(const MatrixD& A) { return A.cwiseAbs().colwise().sum().maxCoeff(); }
double norm_inf(const MatrixD& A) { return A.cwiseAbs().rowwise().sum().maxCoeff(); }

// Random symmetric, Gaussian-kernel and diagonal matrices, then the structured extremes: J (all ones, Lemma 1's
// tight case with the diagonal ones), a rank-one uu^T, a singular one (a zero row and column), an outlier entry,
// and scales 1e150 and 1e-150.
std::vector<std::pair<std::string, MatrixD>> symmetric_samples(const ClaimContext& ctx) {
  std::vector<std::pair<std::string, MatrixD>> out;
  if (ctx.soft.matrix.size() > 0) return {{"matrix", ctx.soft.matrix}};
  for (Index m : {2, 5, 16, 64})
    for (std::uint32_t t = 0; t < ctx.sized(40u, 5u); ++t) {
      MatrixD F(m, m);
      fill_gaussian(F, GaussianStream(ctx.seed, hash_words({hash_string("lemma"), std::uint64_t(m)}), t, StreamTag::A),
                    1.0);
      out.push_back({text("symmetric m=", m, " trial ", t), (F + F.transpose()) / 2});
      out.push_back({text("kernel m=", m, " trial ", t), gaussian_kernel(F, F)});
      out.push_back({text("diagonal m=", m, " trial ", t), VectorD(F.col(0)).asDiagonal()});
    }
  for (Index m : {2, 16}) {
    MatrixD F(m, m);
    fill_gaussian(
        F, GaussianStream(ctx.seed, hash_words({hash_string("lemma-structured"), std::uint64_t(m)}), 0, StreamTag::A),
        1.0);
    const MatrixD sym = (F + F.transpose()) / 2;
    out.push_back({text("all ones m=", m), MatrixD::Ones(m, m)});
    out.push_back({text("rank one m=", m), F.col(0) * F.col(0).transpose()});
    MatrixD singular = sym;
    singular.row(0).setZero(), singular.col(0).setZero();
    out.push_back({text("singular m=", m), singular});
    MatrixD outlier = sym;
    outlier(0, m - 1) = outlier(m - 1, 0) = 1e3;
    out.push_back({text("outlier entry m=", m), outlier});
    out.push_back({text("scale 1e150 m=", m), 1e150 * sym});
    out.push_back({text("scale 1e-150 m=", m), 1e-150 * sym});
  }
  return out;
}

BoundEvidence measure_lemma1(const ClaimContext& ctx) {
  BoundEvidence e{.replay_hint = "soft_spectral --claims soft.lemma1 --matrix <file> (F)"};
  for (const auto& [input, F] : symmetric_samples(ctx)) {
    const double ratio = spectral_norm_svd(F) / norm1(F);
    e.cases.push_back({input, ratio, 0, soft_row("norm2_over_norm1", input, 0, F.rows(), ratio), F});
  }
  return e;
}

// For ‖F‖_p < 1 and p = 1, 2, ∞: ‖(I − F)⁻¹‖_p (1 − ‖F‖_p), with the rounding of the inverse (κ(I − F) ≤
// (1 + ‖F‖)/(1 − ‖F‖)) as its allowance. Besides the samples scaled to ‖F‖_p = 0.1 .. 0.999: cI (the tight case)
// and a scaled nilpotent Jordan block.
BoundEvidence measure_lemma2(const ClaimContext& ctx) {
  BoundEvidence e{
      .replay_hint = "soft_spectral --claims soft.lemma2 --matrix <file> (F; each p with ||F||_p < 1 is checked)"};
  const auto norm = [](const MatrixD& M, int p) {
    return p == 1 ? norm1(M) : p == 2 ? spectral_norm_svd(M) : norm_inf(M);
  };
  const auto add = [&](const std::string& input, const MatrixD& F, int p) {
    const double f = norm(F, p);
    if (!(f < 1)) return;
    const double ratio = norm(linalg::inverse(MatrixD::Identity(F.rows(), F.cols()) - F), p) * (1 - f);
    const double allowance = double(F.rows()) * kEps * (1 + f) / (1 - f);  // per unit of soft_rounding_factor
    const std::string label = text(input, ", p = ", p == 0 ? "inf" : text(p), ", ||F|| = ", sig(f, 4));
    e.cases.push_back({label, ratio, allowance,
                       soft_row("inverse_ratio", label, 0, F.rows(), ratio, {{"norm_p", p == 0 ? "inf" : text(p)}}),
                       F});
  };
  auto samples = symmetric_samples(ctx);
  if (ctx.soft.matrix.size() == 0) {
    MatrixD jordan = MatrixD::Zero(8, 8);
    for (Index i = 0; i + 1 < 8; ++i) jordan(i, i + 1) = 1;
    samples.push_back({"jordan block m=8", jordan});
    samples.push_back({"identity m=8", MatrixD::Identity(8, 8)});
  }
  for (const auto& [input, F0] : samples)
    for (int p : {1, 2, 0}) {  // 0: the ∞-norm
      if (ctx.soft.matrix.size() > 0) {
        add(input, F0, p);
        continue;
      }
      const double n0 = norm(F0, p);
      if (n0 == 0 || !std::isfinite(n0)) continue;
      for (double target : {0.1, 0.5, 0.9, 0.99, 0.999}) add(input, F0 * (target / n0), p);
    }
  return e;
}

}  // namespace

void register_attention_spectrum_claims(ClaimRegistry& r) {
  r.add(make_claim<EigenEvidence>(
      {.id = "soft.prop3.literal",
       .source = "SOFT Prop 3",
       .statement = "eigenvalues of softmax self-attention S = D^-1 A lie in [0, 1] (as written; K = Q)",
       .method =
           "dense non-symmetric eigenvalues of softmax(QQ^T/sqrt d) for Gaussian tokens (n = 16..256, four scales) and "
           "the structured extremes, within their rounding; K != Q reported beside it",
       .identity =
           "with K = Q, A = exp(QQ^T/sqrt d) is entrywise positive and positive semi-definite (Schur product "
           "theorem on the Gram matrix), so S = D^-1 A is similar to D^-1/2 A D^-1/2 (real eigenvalues >= 0) and "
           "row-stochastic (spectral radius <= ||S||_inf = 1); soft.prop3.as_used asks what the paper uses it for"},
      {.measure = measure_prop3_literal,
       .judge = judge_prop3_literal,
       .contradict =
           [](EigenEvidence& e) {
             if (e.cases.empty()) e.cases.push_back({"contradiction", 2});
             e.cases.front().self = true, e.cases.front().max_real = 1.5, e.cases.front().allowance = 0;
           },
       .support = eigenvalues_in_range,
       .crossings = {{&kRoundingFactor, "the last K = Q input's largest eigenvalue x allowances above 1",
                      Verdict::holds, Verdict::violated, [](EigenEvidence& e, double x) {
                        eigenvalues_in_range(e);
                        auto& last = *std::find_if(e.cases.rbegin(), e.cases.rend(),
                                                   [](const EigenCase& c) { return c.self; });
                        last.allowance = 1e-9;  // far above the sum's own rounding
                        last.max_real = 1 + x * last.allowance;
                      }}}}));
  r.add(make_claim<BoundEvidence>(
      {.id = "soft.prop3.as_used",
       .source = "SOFT Prop 3, Sec 3.3",
       .statement =
           "||S_softmax||_2 <= 1: the bound on error growth (||XY||_2 <= ||X||_2 ||Y||_2) that Prop 3 is used for",
       .method =
           "spectral norm of softmax(QK^T/sqrt d) for K = Q and K != Q, Gaussian tokens n = 16..256 at four scales, "
           "and the structured extremes (identical, collapsed clusters, tiny, huge, an outlier every query attends "
           "to, one token); bound rule"},
      bound_rules(measure_prop3_as_used, "soft.prop3.as_used", "||S||_2")));
  r.add(make_claim<BoundEvidence>(
      {.id = "soft.prop4_gauss_eig",
       .source = "SOFT Prop 4",
       .statement = "Gaussian-kernel attention: lambda_1 <= n",
       .method =
           "lambda_1/n by Lanczos for n = 64..2048 at token scales 0.05..2 and for the structured extremes (n = 16, "
           "64, one token); bound rule on the identity's tightness",
       .identity =
           "S = exp(Q - Q) is a Gaussian kernel matrix: positive semi-definite with unit diagonal, so lambda_1 <= "
           "sum_i lambda_i = tr S = n"},
      bound_rules(measure_prop4, "soft.prop4_gauss_eig", "lambda_1/n")));
}

void register_kernel_bound_claims(ClaimRegistry& r) {
  r.add(make_claim<BoundEvidence>(
      {.id = "soft.eq15",
       .source = "SOFT (15)",
       .statement = "||S_hat||_2 <= ||P||_2^2 ||A+||_2",
       .method =
           "largest ratio of the two sides over token ensembles and m, and the structured extremes (n = 64, m = 4, "
           "16 sampled at random); bound rule on the identity's tightness",
       .identity = "||P^T A+ P||_2 <= ||P^T||_2 ||A+||_2 ||P||_2 (submultiplicativity) and ||P^T||_2 = ||P||_2"},
      bound_rules(measure_eq15, "soft.eq15", "||S_hat||_2/(||P||_2^2 ||A+||_2)")));
  r.add(make_claim<BoundEvidence>(
      {.id = "soft.lemma1",
       .source = "SOFT Lemma 1",
       .statement = "F symmetric non-singular => ||F||_2 <= ||F||_1",
       .method = "largest ||F||_2/||F||_1 over random symmetric, kernel and diagonal matrices and structured ones (all "
                 "ones, rank one, singular, an outlier entry, scales 1e+-150); bound rule on the identity's tightness",
       .identity =
           "||F||_2^2 = lambda_max(F^T F) <= ||F^T F||_1 <= ||F^T||_1 ||F||_1 = ||F||_inf ||F||_1 = ||F||_1^2 for "
           "symmetric F; non-singularity is not needed"},
      bound_rules(measure_lemma1, "soft.lemma1", "||F||_2/||F||_1")));
  r.add(make_claim<BoundEvidence>(
      {.id = "soft.lemma2",
       .source = "SOFT Lemma 2",
       .statement = "||F|| < 1 => ||(I - F)^-1|| <= 1/(1 - ||F||)",
       .method =
           "largest ||(I - F)^-1||(1 - ||F||) over the same matrices, a Jordan block and I, scaled to ||F||_p in "
           "{0.1, 0.5, 0.9, 0.99, 0.999} for p = 1, 2, inf, each net of its inversion's rounding; bound rule on the "
           "identity's tightness",
       .identity = "(I - F)^-1 = sum_k F^k converges for ||F|| < 1 in any submultiplicative norm, so ||(I - F)^-1|| <= "
                   "sum_k ||F||^k = 1/(1 - ||F||)"},
      bound_rules(measure_lemma2, "soft.lemma2", "||(I - F)^-1|| (1 - ||F||)")));
}

}  // namespace attnlab::soft_claims
