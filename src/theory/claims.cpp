#include <attnlab/core/text.hpp>
#include <attnlab/theory/claims.hpp>

#include <stdexcept>

namespace attnlab {

std::uint32_t ClaimContext::trials_or(std::uint32_t full, std::uint32_t quick_default) const {
  if (trials > 0) return trials;
  return quick ? quick_default : full;
}

void ClaimRegistry::add(Claim claim) {
  for (const auto& c : claims_)
    if (c.id == claim.id) throw std::logic_error("claim registered twice: " + claim.id);
  claims_.push_back(std::move(claim));
}

const Claim& ClaimRegistry::find(const std::string& id) const {
  for (const auto& c : claims_)
    if (c.id == id) return c;
  throw std::invalid_argument(text("claims: unknown claim id '", id, "'"));
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
