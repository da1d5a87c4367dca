#!/usr/bin/python3
"""The NumPy activation peer's JVPs against central finite differences of its value function.

JT = J(S)·T is compared row by row with (ϕ(S + hT) − ϕ(S − hT))/2h, where ϕ is `value`, written
without the JVP's shared terms; Richardson extrapolation of two steps leaves an O(h⁴) error.
Run by hand: /usr/bin/python3 tests/reference/test_activations_numpy.py
"""
import math
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from activations_numpy import NAMES, cody_erfc, value, value_and_jvp  # noqa: E402

SEED = int(os.environ.get("ATTNLAB_TEST_SEED", "20261123"))
STEP = 1e-3
REL = 1e-7  # of the row's largest |JT| entry: Richardson's truncation and rounding both stay far below
ABS = 1e-11  # rounding of the differences, about ε|ϕ|/STEP: JT vanishes for prenorm at n = 2
KINK_GAP = 10 * STEP  # relu's kink at 0: finite differences across it are not derivatives


def finite_difference_jvp(name, S, T, h=STEP):
    """Richardson extrapolation of central differences with steps h and h/2."""
    def central(step):
        return (value(name, S + step * T) - value(name, S - step * T)) / (2 * step)
    return (4 * central(h / 2) - central(h)) / 3


def inputs(rng, rows, n):
    """N(0, 1) logits kept KINK_GAP away from 0 and from sirenmax's poles (sin s = 1), and N(0, 1) tangents."""
    S = rng.standard_normal((rows, n))
    S[np.abs(S) < KINK_GAP] += 2 * KINK_GAP
    to_pole = np.remainder(S - math.pi / 2 + math.pi, 2 * math.pi) - math.pi
    S[np.abs(to_pole) < 0.2] += 0.4
    return S, rng.standard_normal((rows, n))


class JvpAgainstFiniteDifferences(unittest.TestCase):
    def test_every_activation(self):
        print(f"ATTNLAB_TEST_SEED={SEED} replays this run", file=sys.stderr)
        rng = np.random.default_rng(SEED)
        for name in NAMES + ("softmax+prenorm", "gelu+prenorm"):
            for rows, n in ((3, 2), (4, 7), (2, 64)):
                S, T = inputs(rng, rows, n)
                with self.subTest(activation=name, rows=rows, n=n):
                    Y, JT = value_and_jvp(name, S, T)
                    np.testing.assert_allclose(Y, value(name, S), rtol=1e-14, atol=1e-15)
                    fd = finite_difference_jvp(name, S, T)
                    err = np.abs(JT - fd).max(axis=-1) / (ABS + REL * np.abs(JT).max(axis=-1))
                    self.assertLess(err.max(), 1.0, f"worst row error {err.max():.1%} of its limit")

    def test_batch_equals_single_rows(self):
        rng = np.random.default_rng(SEED + 1)
        S, T = inputs(rng, 5, 16)
        for name in NAMES + ("softmax+prenorm",):
            Y, JT = value_and_jvp(name, S, T)
            for i in range(S.shape[0]):
                y, jt = value_and_jvp(name, S[i], T[i])
                np.testing.assert_allclose(Y[i], y, rtol=1e-15, atol=0, err_msg=f"{name} row {i}")
                np.testing.assert_allclose(JT[i], jt, rtol=1e-15, atol=1e-300, err_msg=f"{name} row {i}")

    def test_row_normalised_rows_sum_to_one(self):
        S, _ = inputs(np.random.default_rng(SEED + 2), 8, 32)
        for name in ("softmax", "sinsoftmax", "cosmax", "sin2max-shifted", "sinmax-constant", "sirenmax"):
            np.testing.assert_allclose(value(name, S).sum(axis=-1), 1.0, rtol=1e-13, err_msg=name)

    def test_erfc_against_math(self):
        x = np.concatenate([np.linspace(-30, 30, 6001), [-0.46875, 0.46875, -4.0, 4.0, 0.0, 26.6, -1e-20]])
        ref = np.array([math.erfc(v) for v in x])
        got = cody_erfc(x)
        tiny = ref < 1e-300  # math.erfc is subnormal or 0 where Cody's tail returns 0
        np.testing.assert_allclose(got[~tiny], ref[~tiny], rtol=2e-15, atol=0)
        self.assertTrue(np.all(got[tiny] < 1e-300))

    def test_unknown_name(self):
        with self.assertRaises(ValueError):
            value("softmaks", np.zeros((1, 4)))
        with self.assertRaises(ValueError):
            value("softmax+qkln", np.zeros((1, 4)))


if __name__ == "__main__":
    unittest.main()
