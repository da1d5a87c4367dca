#!/usr/bin/python3
"""The NumPy SOFT peer against independent computations.

  - Newton–Schulz converges to numpy.linalg.pinv (SVD) on SPD and on singular PSD Gaussian-kernel matrices,
    and its first step is the closed form 2αA − α²AAA;
  - adaptive average pooling equals a direct per-token loop over PyTorch's cell bounds (⌊·⌋/⌈·⌉ taken with
    exact fractions), including grids the cells do not divide (overlapping cells) and m = n (the identity);
  - the Gaussian kernel equals the elementwise definition exp(−‖q − k‖²/(2√d));
  - the ports of the released pseudo-inverses: α from the signed row sums of A taken by an explicit loop, the
    shift (0.01, or 0.01f as float32 builds it), convergence to (A + sI)⁻¹, the released β rule's halvings against
    a brute-force search over n = 0..10, and its iterations when the rule stays unmet;
  - SOFT attention is exact where the Nyström reconstruction is: with m = n (first sampler, and pool with
    one token per cell) Ŝ = Pᵀ A⁺ P = K, and with tokens constant on every pooling cell (K of rank m) Ŝ = K,
    so Ŝ V = K V for the dense kernel K of the tokens.
Run by hand: /usr/bin/python3 tests/reference/test_soft_numpy.py
"""
import math
import os
import sys
import unittest
from fractions import Fraction

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from soft_numpy import (gaussian_kernel, newton_alpha, newton_schulz, pool_tokens, released_beta_newton_inv,  # noqa: E402
                        released_newton_inv, soft_attention, tokens_on_grid)

SEED = int(os.environ.get("ATTNLAB_TEST_SEED", "20261124"))
print(f"seed {SEED} (ATTNLAB_TEST_SEED replays it)", file=sys.stderr)


def direct_pool(Q, grid_h, grid_w, m):
    """Cell means by a loop over every token and every cell, bounds ⌊a·H/s⌋ and ⌈(a+1)·H/s⌉ from Fractions."""
    side = math.isqrt(m)
    sums, counts = np.zeros((m, Q.shape[1])), np.zeros(m)
    for h in range(grid_h):
        for w in range(grid_w):
            for a in range(side):
                if not math.floor(Fraction(a * grid_h, side)) <= h < math.ceil(Fraction((a + 1) * grid_h, side)):
                    continue
                for b in range(side):
                    if math.floor(Fraction(b * grid_w, side)) <= w < math.ceil(Fraction((b + 1) * grid_w, side)):
                        sums[a * side + b] += Q[h * grid_w + w]
                        counts[a * side + b] += 1
    return sums / counts[:, None]


def exact_kernel(Q, K):
    d = Q.shape[1]
    diff = Q[:, None, :] - K[None, :, :]
    return np.exp(-(diff * diff).sum(axis=-1) / (2 * math.sqrt(d)))


class NewtonSchulz(unittest.TestCase):
    def test_converges_to_pinv_on_spd_kernel(self):
        rng = np.random.default_rng(SEED)
        for m, d in ((16, 8), (49, 16)):
            A = gaussian_kernel(*(2 * [rng.standard_normal((m, d))]))
            self.assertGreater(np.linalg.eigvalsh(A).min(), 0)  # SPD: distinct tokens, Gaussian kernel
            with self.subTest(m=m, d=d, cond=np.linalg.cond(A)):
                np.testing.assert_allclose(newton_schulz(A, 100), np.linalg.pinv(A), rtol=0,
                                           atol=1e-10 * np.abs(np.linalg.pinv(A)).max())

    def test_converges_to_pinv_on_singular_kernel(self):
        """Repeated tokens: A is PSD of rank 6 < 10. On A's range the error 1 − λx_k (x_0 = αλ) squares every
        step, so ⌈log2(1/(αλ_min⁺²))⌉ + 6 steps reach A⁺. Rounding leaves null-space components that double every step
        after that (measured: 1e-13 at that count, 1e-4 forty steps later, 1e12 at 100), so the count is derived."""
        rng = np.random.default_rng(SEED + 1)
        X = rng.standard_normal((6, 4))[[0, 1, 2, 3, 4, 5, 0, 1, 2, 3]]
        A = gaussian_kernel(X, X)
        eigenvalues = np.linalg.eigvalsh(A)
        positive = eigenvalues[eigenvalues > 1e-12 * eigenvalues.max()]
        self.assertEqual(positive.size, 6)
        steps = math.ceil(math.log2(1 / (newton_alpha(A) * positive.min() ** 2))) + 6
        ref = np.linalg.pinv(A, rcond=1e-12, hermitian=True)
        got = newton_schulz(A, steps)
        np.testing.assert_allclose(got, ref, rtol=0, atol=1e-10 * np.abs(ref).max())
        np.testing.assert_allclose(A @ got @ A, A, rtol=0, atol=1e-12)

    def test_first_step_and_start(self):
        rng = np.random.default_rng(SEED + 2)
        A = rng.standard_normal((7, 5))  # rectangular, not symmetric: X_0 = αAᵀ
        alpha = newton_alpha(A)
        self.assertAlmostEqual(alpha, 2 / max(np.abs(A).sum(axis=0)) ** 2, delta=1e-16 * alpha)
        np.testing.assert_array_equal(newton_schulz(A, 0), alpha * A.T)
        X0 = alpha * A.T
        np.testing.assert_allclose(newton_schulz(A, 1), 2 * X0 - X0 @ A @ X0, rtol=1e-14, atol=0)


def largest_signed_row_sum(A):
    """max_i Σ_j A_ij by explicit loops (no abs: the released code's torch.sum)."""
    return max(sum(float(v) for v in row) for row in A)


def one_norm(M):
    """Largest absolute column sum by explicit loops."""
    return max(sum(abs(float(M[i, j])) for i in range(M.shape[0])) for j in range(M.shape[1]))


class Released(unittest.TestCase):
    def test_alpha_from_signed_row_sums_of_a_before_the_shift(self):
        rng = np.random.default_rng(SEED + 20)
        T = rng.standard_normal((12, 8)) * 8 ** -0.25
        A = gaussian_kernel(T, T) - 0.3  # negative entries: signed and absolute row sums differ
        r = largest_signed_row_sum(A)
        self.assertLess(r, 0.99 * np.abs(A).sum(axis=1).max())
        _, alpha, _ = released_newton_inv(A, 0)
        self.assertAlmostEqual(alpha, 1.8 / r ** 2, delta=1e-14 * alpha)
        V0, _, shift = released_newton_inv(A, 0)
        np.testing.assert_array_equal(V0, alpha * (A + shift * np.eye(12)))

    def test_shift_values(self):
        A = np.eye(3) + 0.1
        self.assertEqual(released_newton_inv(A, 0)[2], 0.01)
        self.assertEqual(released_newton_inv(A, 0, float32_shift=True)[2], 0.009999999776482582)

    def test_converges_to_the_shifted_inverse(self):
        """κ(A + sI) ≈ 10 here: sixty steps of e ← e² from e₀ = 1 − αλ² < 1 leave only rounding."""
        rng = np.random.default_rng(SEED + 21)
        T = rng.standard_normal((10, 16)) * 16 ** -0.25
        A = gaussian_kernel(T, T)
        for float32 in (False, True):
            with self.subTest(float32_shift=float32):
                V, _, shift = released_newton_inv(A, 60, float32)
                ref = np.linalg.inv(A + shift * np.eye(10))
                np.testing.assert_allclose(V, ref, rtol=0, atol=1e-12 * np.abs(ref).max())

    def test_beta_halvings_match_a_brute_force_search(self):
        rng = np.random.default_rng(SEED + 22)
        T = rng.standard_normal((16, 16)) * 16 ** -0.25
        cancelling = np.array([[2.0, -1.9], [-1.9, 2.0]])  # row sums 0.1: α = 200, no n ≤ 10 meets 1.01
        for A in (gaussian_kernel(T, T), gaussian_kernel(T, T) - 0.4, 0.01 * gaussian_kernel(T, T), cancelling):
            r = largest_signed_row_sum(A)
            norms = [one_norm(np.eye(A.shape[0]) - (2 / r ** 2) * 0.5 ** n * (A @ A)) for n in range(11)]
            expected = next((n for n, v in enumerate(norms) if v <= 1.01), 10)
            with self.subTest(m=A.shape[0], entry=A[0, 1]):
                V, alpha, halvings, pnorm, _ = released_beta_newton_inv(A, 20)
                self.assertEqual(halvings, expected)
                self.assertAlmostEqual(alpha, 2 / r ** 2 * 0.5 ** expected, delta=1e-14 * alpha)
                self.assertAlmostEqual(pnorm, norms[expected], delta=1e-12 * norms[expected])

    def test_beta_iterates_even_when_unmet(self):
        """The rule's loop ends at 10 halvings with ‖I − A V‖₁ > 1.01 and the steps still run from that α (three
        here: from α_10 = 0.195 the eigenvalue 3.9 has e₀ = 1 − αλ² ≈ −2 and overflows within twenty)."""
        A = np.array([[2.0, -1.9], [-1.9, 2.0]])
        V, alpha, halvings, pnorm, _ = released_beta_newton_inv(A, 3)
        self.assertEqual(halvings, 10)
        self.assertGreater(pnorm, 1.01)
        X = alpha * A
        for _ in range(3):
            X = 2 * X - X @ A @ X
        self.assertTrue(np.isfinite(X).all())
        np.testing.assert_array_equal(V, X)


class Pooling(unittest.TestCase):
    def test_matches_direct_loop(self):
        rng = np.random.default_rng(SEED + 3)
        for grid_h, grid_w, m in ((8, 8, 4), (7, 10, 9), (5, 13, 4), (32, 32, 49), (12, 9, 9), (6, 6, 36)):
            Q = rng.standard_normal((grid_h * grid_w, 3))
            with self.subTest(grid=(grid_h, grid_w), m=m):
                np.testing.assert_allclose(pool_tokens(Q, grid_h, grid_w, m), direct_pool(Q, grid_h, grid_w, m),
                                           rtol=1e-14, atol=1e-15)

    def test_one_token_per_cell_is_the_identity(self):
        Q = np.random.default_rng(SEED + 4).standard_normal((25, 4))
        np.testing.assert_array_equal(pool_tokens(Q, 5, 5, 25), Q)

    def test_rejects_bad_shapes(self):
        Q = np.zeros((16, 2))
        for grid_h, grid_w, m in ((4, 4, 8), (4, 4, 25), (2, 8, 9), (4, 3, 4)):
            with self.subTest(grid=(grid_h, grid_w), m=m), self.assertRaises(ValueError):
                pool_tokens(Q, grid_h, grid_w, m)


class SoftAttention(unittest.TestCase):
    def test_kernel_matches_definition(self):
        rng = np.random.default_rng(SEED + 5)
        Q, K = rng.standard_normal((9, 6)), rng.standard_normal((13, 6))
        np.testing.assert_allclose(gaussian_kernel(Q, K), exact_kernel(Q, K), rtol=1e-13, atol=0)
        np.testing.assert_allclose(np.diag(gaussian_kernel(Q, Q)), 1.0, rtol=1e-14)

    def test_full_bottleneck_is_exact(self):
        """m = n: Q̃ = Q, A = P = K, and Pᵀ K⁺ P = K for the SPD K."""
        rng = np.random.default_rng(SEED + 6)
        Q, V = rng.standard_normal((16, 8)), rng.standard_normal((16, 5))
        ref = exact_kernel(Q, Q) @ V
        for sampler in ("first", "pool"):
            with self.subTest(sampler=sampler):
                got = soft_attention(Q, V, 16, 4, 4, iterations=100, sampler=sampler)
                np.testing.assert_allclose(got, ref, rtol=0, atol=1e-11 * np.abs(ref).max())

    def test_cell_constant_tokens_are_exact(self):
        """Tokens constant on each of the m pooling cells: K has rank m, the pooled tokens are its distinct
        tokens, and the Nyström reconstruction Pᵀ A⁺ P is K itself."""
        rng = np.random.default_rng(SEED + 7)
        for grid_h, grid_w, m in ((8, 8, 4), (12, 6, 9), (16, 16, 16)):
            side = math.isqrt(m)
            cell_tokens = rng.standard_normal((side, side, 6))
            rows = np.repeat(np.arange(side), grid_h // side)
            cols = np.repeat(np.arange(side), grid_w // side)
            Q = cell_tokens[rows][:, cols].reshape(grid_h * grid_w, 6)
            V = rng.standard_normal((grid_h * grid_w, 3))
            ref = exact_kernel(Q, Q) @ V
            with self.subTest(grid=(grid_h, grid_w), m=m):
                got = soft_attention(Q, V, m, grid_h, grid_w, iterations=100)
                np.testing.assert_allclose(got, ref, rtol=0, atol=1e-11 * np.abs(ref).max())

    def test_output_shape_and_linearity_in_values(self):
        Q = tokens_on_grid(8, 8, 16, SEED)
        rng = np.random.default_rng(SEED + 8)
        V1, V2 = rng.standard_normal((64, 3)), rng.standard_normal((64, 3))
        Y = soft_attention(Q, 2 * V1 - V2, 4, 8, 8)
        self.assertEqual(Y.shape, (64, 3))
        np.testing.assert_allclose(Y, 2 * soft_attention(Q, V1, 4, 8, 8) - soft_attention(Q, V2, 4, 8, 8),
                                   rtol=0, atol=1e-10 * np.abs(Y).max())


if __name__ == "__main__":
    unittest.main()
