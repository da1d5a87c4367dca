#!/usr/bin/python3
"""The NumPy activation peer's JVPs against central finite differences of its value function.

JT = J(S)·T is compared row by row with (ϕ(S + hT) − ϕ(S − hT))/2h, where ϕ is `value`, written
without the JVP's shared terms; Richardson extrapolation of two steps leaves an O(h⁴) error, which the test
estimates from the same extrapolation at twice the step (rows of two nearly equal entries under prenorm, or
sinmax-constant rows whose Σg nearly vanishes, curve on the scale of the step).
Run by hand: /usr/bin/python3 tests/reference/test_activations_numpy.py
"""
import itertools
import math
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from activations_numpy import LOGIT_SCALE, NAMES, PRENORM_EPS, cody_erfc, value, value_and_jvp  # noqa: E402

SEED = int(os.environ.get("ATTNLAB_TEST_SEED", "20261123"))
STEP = 1e-3
REL = 1e-7  # of the row's largest |JT| entry: Richardson's truncation and rounding both stay far below
ABS = 1e-11  # rounding of the differences, about ε|ϕ|/STEP: JT vanishes for prenorm at n = 2
KINK_GAP = 10 * STEP  # relu's kink at 0: finite differences across it are not derivatives
TRANSFORMED = ("softmax+prenorm", "gelu+prenorm", "softmax+prenorm-released", "gelu+prenorm-released",
               "sin2max-released+prenorm-released", "sinsoftmax-released+prenorm-released")


def finite_difference_jvp(name, S, T, logit_scale, h=STEP):
    """Richardson extrapolation of central differences with steps h and h/2, and the row's largest change from the
    same extrapolation with steps 2h and h: about 15 times its own O(h⁴) error."""
    def central(step):
        return (value(name, S + step * T, logit_scale) - value(name, S - step * T, logit_scale)) / (2 * step)
    half, full, double = central(h / 2), central(h), central(2 * h)
    fine, coarse = (4 * half - full) / 3, (4 * full - double) / 3
    return fine, np.abs(fine - coarse).max(axis=-1)


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
        for name in NAMES + TRANSFORMED:
            for (rows, n), c in itertools.product(((3, 2), (4, 7), (2, 64)), (LOGIT_SCALE, 0.5)):
                S, T = inputs(rng, rows, n)
                with self.subTest(activation=name, rows=rows, n=n, logit_scale=c):
                    Y, JT = value_and_jvp(name, S, T, c)
                    np.testing.assert_allclose(Y, value(name, S, c), rtol=1e-14, atol=1e-15)
                    fd, truncation = finite_difference_jvp(name, S, T, c)
                    err = np.abs(JT - fd).max(axis=-1) / (ABS + REL * np.abs(JT).max(axis=-1) + truncation)
                    self.assertLess(err.max(), 1.0, f"worst row error {err.max():.1%} of its limit")

    def test_batch_equals_single_rows(self):
        rng = np.random.default_rng(SEED + 1)
        S, T = inputs(rng, 5, 16)
        for name in NAMES + ("softmax+prenorm", "softmax+prenorm-released"):
            Y, JT = value_and_jvp(name, S, T)
            for i in range(S.shape[0]):
                y, jt = value_and_jvp(name, S[i], T[i])
                np.testing.assert_allclose(Y[i], y, rtol=1e-15, atol=0, err_msg=f"{name} row {i}")
                np.testing.assert_allclose(JT[i], jt, rtol=1e-15, atol=1e-300, err_msg=f"{name} row {i}")

    def test_row_normalised_rows_sum_to_one(self):
        S, _ = inputs(np.random.default_rng(SEED + 2), 8, 32)
        for name in ("softmax", "sinsoftmax", "cosmax", "sin2max-shifted", "sinmax-constant", "sirenmax",
                     "sin2max-released", "sinsoftmax-released"):
            np.testing.assert_allclose(value(name, S).sum(axis=-1), 1.0, rtol=1e-13, err_msg=name)

    def test_released_definitions_follow_demo_py(self):
        """demo.py on the unscaled logits m, written as it writes them, against the peer on S = c·m; at c = 1 the
        released definitions are the paper's."""
        m = np.random.default_rng(SEED + 3).normal(scale=3.0, size=(6, 17))

        def map_norm(q):
            centred = q - q.mean(axis=-1, keepdims=True)
            return centred / np.sqrt(q.var(axis=-1, ddof=1, keepdims=True) + PRENORM_EPS)

        def rows(g):
            return g / g.sum(axis=-1, keepdims=True)

        for c in (LOGIT_SCALE, 0.5):
            demo = {
                "sin2max-released": rows(np.sin((m - 0.25 * np.pi) * c + 0.25 * np.pi) ** 2),
                "sinsoftmax-released": rows(np.exp(np.sin(m) * c)),
                "softmax+prenorm-released": rows(np.exp(map_norm(m) * c)),
                "sin2max-released+prenorm-released": rows(np.sin((map_norm(m) - 0.25 * np.pi) * c + 0.25 * np.pi) ** 2),
                "sinsoftmax-released+prenorm-released": rows(np.exp(np.sin(map_norm(m)) * c)),
            }
            for name, expected in demo.items():
                with self.subTest(activation=name, logit_scale=c):
                    # atol: a score near a zero of sin² carries the rounding of its phase, not of its value
                    np.testing.assert_allclose(value(name, c * m, c), expected, rtol=1e-12, atol=1e-14)
                    np.testing.assert_allclose(value_and_jvp(name, c * m, np.zeros_like(m), c)[0], expected,
                                               rtol=1e-12, atol=1e-14)
        paper = {"sin2max-released": rows(np.sin(m) ** 2), "sinsoftmax-released": value("sinsoftmax", m, 1.0),
                 "softmax+prenorm-released": value("softmax+prenorm", m, 1.0)}
        for name, expected in paper.items():
            np.testing.assert_allclose(value(name, m, 1.0), expected, rtol=1e-12, atol=0, err_msg=name)

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
