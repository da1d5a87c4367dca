#include <attnlab/core/text.hpp>
#include <attnlab/theory/claims.hpp>
#include <attnlab/theory/moments.hpp>

#include <algorithm>
#include <stdexcept>

namespace attnlab {

std::string to_string(Verdict v) {
  switch (v) {
    case Verdict::holds: return "holds";
    case Verdict::violated: return "violated";
    case Verdict::loose: return "loose";
    case Verdict::inexact: return "inexact";
    case Verdict::inconclusive: return "inconclusive";
    case Verdict::identity: return "identity";
  }
  return "?";
}

double Thresholds::operator()(const Threshold& t) const {
  read_.emplace(t.name, &t);
  const auto it = factors_.find(t.name);
  return it == factors_.end() ? t.value : t.value * it->second;
}

Thresholds Thresholds::scaled(const Threshold& t, double factor) const {
  Thresholds s;
  s.factors_ = factors_;
  s.factors_[t.name] = factor;
  return s;
}

std::uint32_t ClaimContext::trials_or(std::uint32_t full, std::uint32_t quick_default) const {
  if (trials > 0) return trials;
  return quick ? quick_default : full;
}

std::vector<ResultRow> ClaimContext::attention_norms(AttentionMcConfig config, const std::string& label) const {
  if (control_variates) config.exact_mean = theory::squared_norm_exact;
  return cached(cache, cache_key(config), [&] { return run_attention_norms(config, progress_for(label)); });
}

ClaimOutcome Claim::judged(const std::any& evidence, const Thresholds& thresholds) const {
  auto out = judge(evidence, thresholds);
  if (!identity.empty() && out.verdict == Verdict::holds) out.verdict = Verdict::identity;
  return out;
}

namespace {

// Multipliers from 1 outward on one side, with the threshold's justified end among them so that "within the range"
// is decided exactly.
std::vector<double> ladder(const Threshold& t, bool up) {
  std::vector<double> m = up ? std::vector<double>{1.1, 1.25, 1.5, 2, 3, 4, 8, 16}
                             : std::vector<double>{0.9, 0.8, 2.0 / 3, 0.5, 1.0 / 3, 0.25, 0.125, 0.0625};
  m.push_back(up ? t.justified_hi : t.justified_lo);
  std::sort(m.begin(), m.end(), [up](double a, double b) { return up ? a < b : a > b; });
  m.erase(std::unique(m.begin(), m.end()), m.end());
  return m;
}

}  // namespace

ClaimOutcome Claim::check(const ClaimContext& ctx) const {
  const auto evidence = measure(ctx);
  const Thresholds own;
  auto out = judged(evidence, own);
  for (const auto& [name, threshold] : own.read()) {
    out.thresholds.push_back(threshold);
    Sensitivity s{.threshold = name};
    for (bool up : {false, true})
      for (double factor : ladder(*threshold, up)) {
        const auto v = judged(evidence, own.scaled(*threshold, factor)).verdict;
        if (v == out.verdict) continue;
        (up ? s.above : s.below) = factor, (up ? s.verdict_above : s.verdict_below) = v;
        break;
      }
    s.fragile = s.below >= threshold->justified_lo || s.above <= threshold->justified_hi;
    out.sensitivity.push_back(s);
  }
  return out;
}

void ClaimRegistry::add(Claim claim) {
  for (const auto& c : claims_)
    if (c.id == claim.id) throw std::logic_error("claim registered twice: " + claim.id);
  if (!claim.measure || !claim.judge) throw std::logic_error("claim " + claim.id + " has no measure or judge");
  if (!claim.contradict && claim.identity.empty())
    throw std::logic_error("claim " + claim.id + ": no evidence can contradict it and it is not an identity");
  if (!claim.support) throw std::logic_error("claim " + claim.id + " has no supporting evidence for its tests");
  claims_.push_back(std::move(claim));
}

const Claim& ClaimRegistry::find(const std::string& id) const {
  for (const auto& c : claims_)
    if (c.id == id) return c;
  throw std::invalid_argument(text("claims: unknown claim id '", id, "'"));
}

std::vector<std::string> logit_row_claims() {
  std::vector<std::string> ids;
  for (const auto& c : claim_registry().all())
    if (c.judges_logits) ids.push_back(c.id);
  return ids;
}

const ClaimRegistry& claim_registry() {
  static const ClaimRegistry registry = [] {
    ClaimRegistry r;
    register_poly_claims(r);
    register_relu_claims(r);
    register_periodic_claims(r);
    register_soft_claims(r);
    register_training_claims(r);
    return r;
  }();
  return registry;
}

}  // namespace attnlab
