#pragma once
// Exact Gaussian moments of the Frobenius norms (Isserlis/Wick), next to the papers' formulas.
//
// Notation: [n]_p = n(n+2)…(n+2p−2) = E[(χ²_n)^p]; (2p−1)!! = E[z^{2p}] for z ~ N(0,1).
// With u_i = Qᵀx_i, v_j = Kᵀx_j, M = XQKᵀXᵀ, M_ij = u_i·v_j and, given X, u_i ~ N(0, σt²‖x_i‖² I_d)
// independently of v_j. Hence for i ≠ j, M_ij = σt²‖x_i‖‖x_j‖ (g·h) with g, h ~ N(0, I_d)
// independent, and E(g·h)^{2p} = (2p−1)!![d]_p; on the diagonal ‖x_i‖‖x_j‖ becomes ‖x_i‖²:
//   E M_ij^{2p} = (2p−1)!! [d]_p σx^{4p} σt^{4p} [D]_p²      (i ≠ j)
//   E M_ii^{2p} = (2p−1)!! [d]_p σx^{4p} σt^{4p} [D]_{2p}
// The gradients follow the same way from ‖∂M_ij^p/∂Q‖² = p² M_ij^{2p−2} ‖x_i‖² ‖v_j‖².
#include <attnlab/attention/activation.hpp>
#include <attnlab/core/ensemble.hpp>

#include <cstdint>
#include <string>

namespace attnlab::theory {

double rising_by_two(double n, int p);      // [n]_p
double double_factorial(int n);             // n!! with (−1)!! = 0!! = 1
double falling_factorial(double n, int p);  // n!/(n−p)!

struct Ensemble {
  double N, D, d, sigma_x, sigma_t;
};

// E‖M^p‖_F² for M = XQKᵀXᵀ (no 1/√d, no 1/k): exact.
double frobenius2_exact(const Ensemble& e, int p);
// The independent-factor model of POLY's proof: S ≈ A B with A = XQ, B = KᵀXᵀ independent,
// entries N(0, Dσx²σt²), inner dimension d, with the exact moment (2p−1)!![d]_p.
double frobenius2_independent_exact(const Ensemble& e, int p);

// E(c11^{2p}) for C = AB, A ∈ R^{N×D} ~ N(0,σ1²), B ∈ R^{D×N} ~ N(0,σ2²) independent.
double product_moment_exact(double D, int p, double sigma1, double sigma2);
double product_moment_paper(double D, int p, double sigma1, double sigma2);  // POLY eq (41)/(43)

// E‖∂(M^p)/∂Q‖_F² of the N×N×D×d tensor, M = XQKᵀXᵀ: exact and POLY eq (55)/(71).
double qgrad2_exact(const Ensemble& e, int p);
double qgrad2_paper(const Ensemble& e, int p);   // p = 1: eq (55); p > 1: eq (71)
double qgrad2_paper_leading(const Ensemble& e);  // eq (56): N²D²dσx⁴σt²

// E of the squared norm `quantity` (frob2, jac2, qgrad2 or kgrad2; attention_norms_streamed's definitions) of ϕ =
// o·h(c·M) for h = s^p, s (identity), relu = 1{s > 0}·s and relu² = 1{s > 0}·s², without transforms: exact. M's law is
// symmetric (Q → −Q flips it and keeps X and V), so relu and relu² have half the moments of s and s². NaN for any other
// activation or quantity.
double squared_norm_exact(const EnsembleSpec& e, const Activation& a, const std::string& quantity);

}  // namespace attnlab::theory
