#pragma once
// Limit constants of attention weights at initialisation: E h(S) and E h(S)² for the elementwise h of
// ϕ = N^{-α} h(S), under Gaussian logits and under the exact law of the toolkit's logits, and softmax's
// Frobenius level for i.i.d. Gaussian logits.
//
// The law of one logit S_ij = u_i·v_j/√d, u_i = x_iQ, v_j = x_jK, in the ensemble {D, d, σx, σt}:
// given X, u_i ~ N(0, σt²‖x_i‖² I_d) and v_j ~ N(0, σt²‖x_j‖² I_d) independently (Q ⊥ K), and given u_i
// as well, S_ij ~ N(0, ‖u_i‖²σt²‖x_j‖²/d). So S = τZ with Z ~ N(0, 1) independent of
//   τ² = σx⁴σt⁴D² · (χ²_D/D)(χ²_D'/D)(χ²_d/d)      (i ≠ j: x_i ⊥ x_j)
//   τ² = σx⁴σt⁴D² · (χ²_D/D)²(χ²_d/d)             (i = j: the same ‖x_i‖² twice),
// three independent chi-squares: a Gaussian scale mixture, not a Gaussian, with Var S = σx⁴σt⁴D² off the
// diagonal and σx⁴σt⁴D(D+2) on it. Only the marginals enter mean weights, row sums and E‖ϕ‖_F².
//
// With qk-layernorm (LayerNorm without affine, biased variance) and eps neglected, û_i =
// √d·P u_i/‖P u_i‖ with P the centring projection, so û_i/√d is uniform on the unit sphere of the
// (d−1)-dimensional space orthogonal to 1, independent of X; the same holds for v̂_j and û_i ⊥ v̂_j also
// for i = j. Hence every entry has the law S = √d·t, (1 + t)/2 ~ Beta((d−2)/2, (d−2)/2), Var S = d/(d−1);
// at d = 2 the sphere is two points and S = ±√2. The eps of LayerNorm shrinks û by √(1 + eps·d/‖Pu‖²)
// with ‖Pu‖² ~ σt²‖x‖²χ²_{d−1}: a relative error ≈ eps·d/(σx²σt²D(d−3)) in S for d > 3 (1.6e-8 at
// D = d = 64, σt = 1), but O(√eps) at d = 2, where ‖Pu‖² ~ χ²_1 comes near 0 (2e-3 at eps = 1e-6).
#include <attnlab/attention/elementwise.hpp>
#include <attnlab/core/ensemble.hpp>

#include <functional>

namespace attnlab::theory {

struct Moments {
  double mean = 0;    // E h
  double second = 0;  // E h²
};

// z ~ N(0, σ²), σ ≥ 0; p is the power of Elementwise::power. Closed forms for power, relu, relu2, gelu,
// identity, relu6, sigmoid's mean, elu and exp; adaptive Gauss–Kronrod for the rest.
Moments gaussian_moments(Elementwise h, double sigma, int p = 1);

struct EntryMoments {
  Moments off_diagonal, diagonal;
};

// E h(S_ij), E h(S_ij)² of the ensemble's logits (law above): products of chi-square moments for the
// homogeneous h (power, relu, relu2, identity), quadrature over the law of log τ² otherwise;
// tanh–sinh quadrature over the Beta law with qk-layernorm. exp without qk-layernorm throws: E e^{τZ} = E e^{τ²/2} is
// infinite for a product of chi-squares.
EntryMoments logit_moments(Elementwise h, const EnsembleSpec& e, bool qk_layernorm, int p = 1);

// Var S of the off-diagonal logits, the σ² of the Gaussian-logit model of the ensemble.
double logit_variance(const EnsembleSpec& e, bool qk_layernorm);

// E f(S) for one entry of the ensemble's logits, f any function: trapezoidal rule over log τ² (its density
// a convolution of log-chi-square densities) and adaptive Gauss–Kronrod over Z (split at 0), or tanh–sinh
// over the Beta law with qk-layernorm.
double logit_expectation(const std::function<double(double)>& f, const EnsembleSpec& e, bool qk_layernorm,
                         bool diagonal);
// E f(τ) over the scale of the logits without qk-layernorm, by the same rule over log τ².
double logit_scale_expectation(const std::function<double(double)>& f, const EnsembleSpec& e, bool diagonal);

// Expectations of the toolkit's observables of ϕ = N^{-α} h(S) at N, exact given the entry moments
// (N(N−1) off-diagonal entries and N diagonal ones):
//   mean_weight = N^{-α}((N−1)μ_off + μ_diag)/N,  row_sum = N·mean_weight,
//   frob2 = E‖ϕ‖_F² = N^{-2α}(N(N−1)ν_off + Nν_diag).
struct WeightLevels {
  double mean_weight, row_sum, frob2;
};
WeightLevels weight_levels(const EntryMoments& m, double N, double alpha);
// Their large-N constants: N^α·mean_weight → μ_off, N^{α−1}·row_sum → μ_off, N^{2α−2}·frob2 → ν_off.
WeightLevels weight_limits(const EntryMoments& m);

// E‖softmax(x)‖² for a row x of N i.i.d. N(0, σ²) logits, exact up to quadrature:
//   ‖p‖² = Σ_j e^{2x_j}/B², B = Σ_l e^{x_l}, and 1/B² = ∫₀^∞ t e^{−tB} dt give
//   E‖p‖² = N ∫₀^∞ t F(t) L(t)^{N−1} dt,  L(t) = E e^{−te^x},  F(t) = E e^{2x − te^x}.
// E‖P‖_F² of N such rows is N times this.
double softmax_row_norm2(double N, double sigma);
// N·E‖softmax(x)‖² → E e^{2x}/(E e^x)² = e^{σ²} (law of large numbers in numerator and denominator).
double softmax_row_norm2_limit_times_n(double sigma);

}  // namespace attnlab::theory
