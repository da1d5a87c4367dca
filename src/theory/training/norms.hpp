#pragma once
// What the training_norms claims' files share (norms.cpp, norm_theorems.cpp): the sweep's activations and the paper's
// setup named beside ours, and the theorems' claims, which register_training_norm_claims adds in catalogue order.
#include "runs.hpp"

namespace attnlab::training_claims {

inline constexpr const char* kPolyNormsSetup =
    "ViT-Tiny (D 192, depth 12, 3 heads) on Tiny-ImageNet, 200 epochs, AdamW, N = 256, layers 2, 7 and 12";

inline const std::string kSoftmax = "softmax", kUnscaled = "x^3 (inside)", kScaled = "x^3/sqrtN (inside)";

// poly.train_growth of one regime of the sweeps' model (Thm 4.2, Cor 4.1 at the end of training), after the regime's
// poly.train_norms.
void register_train_growth_claims(ClaimRegistry& r, const Regime& regime);

// poly.train_softmax_bounds (Thm 4.1 on every logged attention matrix of every regime), after the regimes' claims.
void register_train_softmax_bound_claims(ClaimRegistry& r);

}  // namespace attnlab::training_claims
