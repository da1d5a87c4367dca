#!/usr/bin/python3
"""The NumPy peer's closed forms against explicit Jacobians built entry by entry.

The Jacobians are taken by complex-step differentiation of a loop-only ϕ(XQKᵀXᵀ/√d)^p/k
(exact to rounding, since ϕ is a polynomial), so they share no formula with the peer.
Run by hand: /usr/bin/python3 tests/reference/test_attention_norms_numpy.py
"""
import itertools
import math
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attention_norms_numpy import attention_norms  # noqa: E402

SEED = int(os.environ.get("ATTNLAB_TEST_SEED", "20261122"))
STEP = 1e-30  # complex step: no subtractive cancellation, so it can be tiny
REL, ABS = 1e-11, 1e-13


def activation_loops(X, Q, K, p, k):
    """ϕ_ij = (x_iᵀ Q Kᵀ x_j / √d)^p / k, by explicit sums."""
    N, D = X.shape
    d = Q.shape[1]
    phi = np.zeros((N, N), dtype=complex)
    for i, j in itertools.product(range(N), repeat=2):
        m = sum(X[i, a] * Q[a, c] * K[b, c] * X[j, b] for a in range(D) for b in range(D) for c in range(d))
        phi[i, j] = (m / math.sqrt(d)) ** p / k
    return phi


def jacobian(f, A):
    """∂f(A)/∂A, shaped f(A).size × A.size, one complex step per entry of A."""
    columns = []
    for idx in np.ndindex(A.shape):
        Ah = A.astype(complex)
        Ah[idx] += 1j * STEP
        columns.append(f(Ah).imag.ravel() / STEP)
    return np.stack(columns, axis=1)


def explicit_norms(X, Q, K, p, k):
    d = Q.shape[1]
    S = (X @ Q) @ (X @ K).T / math.sqrt(d)
    return {
        "frob2": np.sum(activation_loops(X, Q, K, p, k).real ** 2),
        "jac2": np.sum(jacobian(lambda A: A**p / k, S) ** 2),
        "qgrad2": np.sum(jacobian(lambda A: activation_loops(X, A, K, p, k), Q) ** 2),
        "kgrad2": np.sum(jacobian(lambda A: activation_loops(X, Q, A, p, k), K) ** 2),
    }


class PeerAgainstExplicitJacobians(unittest.TestCase):
    def test_closed_forms(self):
        print(f"ATTNLAB_TEST_SEED={SEED} replays this run", file=sys.stderr)
        rng = np.random.default_rng(SEED)
        for (N, D, d), p, k in itertools.product([(4, 3, 2), (5, 2, 3), (1, 2, 2)], [1, 2, 3, 4], [1.0, 2.5]):
            X, Q, K = rng.standard_normal((N, D)), rng.standard_normal((D, d)), rng.standard_normal((D, d))
            fast = attention_norms(X, Q, K, p, k)
            for name, ref in explicit_norms(X, Q, K, p, k).items():
                with self.subTest(N=N, D=D, d=d, p=p, k=k, quantity=name):
                    self.assertLessEqual(abs(fast[name] - ref), ABS + REL * abs(ref), f"{fast[name]} vs {ref}")

    def test_batch_equals_single_trials(self):
        rng = np.random.default_rng(SEED + 1)
        X, Q, K = rng.standard_normal((3, 6, 4)), rng.standard_normal((3, 4, 5)), rng.standard_normal((3, 4, 5))
        batched = attention_norms(X, Q, K)
        for t in range(3):
            for name, value in attention_norms(X[t], Q[t], K[t]).items():
                self.assertAlmostEqual(batched[name][t] / value, 1.0, places=12, msg=f"trial {t} {name}")


if __name__ == "__main__":
    unittest.main()
