#!/usr/bin/python3
"""NumPy peer of attnlab's activation kernels (activation_rows, src/attention/row_map.cpp).

For a batch of rows S (rows × n: the activation's argument, logit scale already applied) and tangents T
of the same shape, returns Y = ϕ(S) row by row and JT = J(S)·T, each row's Jacobian-vector product,
vectorised over the whole batch (no loop over rows):
  elementwise     ϕ = c·h(s),   Jt = c·h'(s)∘t              c = out_scale: relu, gelu 1/N; x^3 1/√N
  row-normalised  ϕ = g(s)/Σg,  Jt = (g'(s)∘t − ϕ (g'(s)·t))/Σg
  name+prenorm    z = (s − s̄)/σ, σ = √(unbiased var + 1e-5), first; the tangent becomes
                  ż = (t − t̄ − z (z·t)/(n−1))/σ
  name+prenorm-released   PERIODIC demo.py's placement before the 1/√d: z = c·prenorm(s/c), c the logit scale
The attention length N of the out_scales is the row length n, as in ActivationSpec::resolve(n, d); the logit
scale c = 1/√d (d = HEAD_DIM, bench_activations' kHeadDim) is read only by the `-released` definitions of
PERIODIC's demo.py, which act on the unscaled logit m = s/c.

  /usr/bin/python3 tests/reference/activations_numpy.py --activation softmax,gelu --n 64,4096 [--repeat 3]
prints one JSON line: a list of {"activation", "n", "rows", "calls", "seconds", "entries_per_s"} (seconds per call
of each timed run, best rate), rows·n = --entries (2^20) entries per call, inputs N(0, 1).
"""
import argparse
import json
import math
import time

import numpy as np

PRENORM_EPS = 1e-5
HEAD_DIM = 64  # d of the logit scale c = 1/√d, as tests/bench/bench_activations.cpp's kHeadDim
LOGIT_SCALE = 1 / math.sqrt(HEAD_DIM)
QUARTER_PI = 0.78539816339744831
ENTRIES = 1 << 20  # entries (rows·n) per call, as in tests/bench/bench_activations.cpp
SECONDS_PER_RUN = 0.2  # each timed run repeats the call for about this long

# W. J. Cody, "Rational Chebyshev approximations for the error function", Math. Comp. 23 (1969), as in
# netlib specfun's CALERF: erf on |x| ≤ 0.46875 (A/B), erfc·e^{x²} on (0.46875, 4] (C/D) and beyond (P/Q).
CODY_A = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02, 3.20937758913846947e03,
          1.85777706184603153e-1)
CODY_B = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03, 2.84423683343917062e03)
CODY_C = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01, 2.98635138197400131e02,
          8.81952221241769090e02, 1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03,
          2.15311535474403846e-8)
CODY_D = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02, 1.62138957456669019e03,
          3.29079923573345963e03, 4.36261909014324716e03, 3.43936767414372164e03, 1.23033935480374942e03)
CODY_P = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1, 1.60837851487422766e-2,
          6.58749161529837803e-4, 1.63153871373020978e-2)
CODY_Q = (2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1, 6.05183413124413191e-2,
          2.33520497626869185e-3)
ONE_OVER_SQRT_PI = 5.6418958354775628695e-1
ERFC_UNDERFLOW = 26.543  # erfc(x) = 0 in double beyond


def _cody_ratio(num, den, v):
    """CALERF's Horner form: (((num[-1] v + num[0]) v + …) + num[-2]) / (((v + den[0]) v + …) + den[-1])."""
    xnum, xden = num[-1] * v, v
    for a, b in zip(num[:-2], den[:-1]):
        xnum = (xnum + a) * v
        xden = (xden + b) * v
    return (xnum + num[-2]) / (xden + den[-1])


def _exp_minus_square(y):
    """e^{−y²} as CALERF takes it: y² split at a multiple of 1/16 so that the large part is exact."""
    y16 = np.trunc(16 * y) / 16
    return np.exp(-y16 * y16) * np.exp(-(y - y16) * (y + y16))


def cody_erfc(x):
    """erfc(x) elementwise, about 1e-16 relative (NumPy has no erfc and scipy is not a dependency)."""
    x = np.asarray(x, dtype=float)
    y = np.abs(x)
    out = np.empty_like(y)
    small = y <= 0.46875
    xs = x[small]
    out[small] = 1 - xs * _cody_ratio(CODY_A, CODY_B, xs * xs)
    mid = ~small & (y <= 4)
    ym = y[mid]
    out[mid] = _exp_minus_square(ym) * _cody_ratio(CODY_C, CODY_D, ym)
    tail = y > 4
    yt = np.minimum(y[tail], ERFC_UNDERFLOW)
    r = 1 / (yt * yt)
    out[tail] = np.where(yt < ERFC_UNDERFLOW,
                         _exp_minus_square(yt) * (ONE_OVER_SQRT_PI - r * _cody_ratio(CODY_P, CODY_Q, r)) / yt, 0.0)
    negative = (x < 0) & ~small
    out[negative] = 2 - out[negative]
    return out


# Elementwise h: (h(s), h'(s)) and the out_scale c as a function of N, as resolve() sets them
# (alpha = 1 for relu and gelu; p = 3, k = √N, convention inside for poly).
def _relu(S):
    return np.maximum(S, 0.0), (S > 0).astype(float)


def _gelu(S):
    """Exact GELU s Φ(s), with attnlab's constants."""
    cdf = 0.5 * cody_erfc(-0.70710678118654752 * S)
    pdf = 0.39894228040143268 * np.exp(-0.5 * S * S)
    return S * cdf, cdf + S * pdf


def _cube(S):
    S2 = S * S
    return S2 * S, 3 * S2


ELEMENTWISE = {
    "relu": (_relu, lambda N: 1.0 / N),
    "gelu": (_gelu, lambda N: 1.0 / N),
    "poly": (_cube, lambda N: 1.0 / math.sqrt(N)),
}


# Row-normalised g: (g(s), g'(s)), as evaluate_row in include/attnlab/attention/activation.hpp; c is the logit
# scale, read by demo.py's `-released` definitions only.
def _softmax(S, c):
    g = np.exp(S - S.max(axis=-1, keepdims=True))  # shifted by the row maximum; cancels in g/Σg
    return g, g


def _sinmax_constant(S, c):
    S10 = 10 * S
    return 1 + np.sin(S10), 10 * np.cos(S10)


def _cosmax(S, c):
    return np.cos(S), -np.sin(S)


def _sin2max_shifted(S, c):
    s = np.sin(S + QUARTER_PI)
    return s * s, np.cos(2 * S)


def _sirenmax(S, c):
    """(sin x + 1)/(2 − 2 sin x): poles where sin x = 1."""
    s = np.sin(S)
    gap = 1 - s
    return (s + 1) / (2 * gap), np.cos(S) / (gap * gap)


def _sinsoftmax(S, c):
    g = np.exp(np.sin(S))
    return g, np.cos(S) * g


def _sin2max_released(S, c):
    """demo.py's sin_2_max: sin²((m − π/4)c + π/4) of the unscaled m = S/c."""
    phase = S + QUARTER_PI * (1 - c)
    s = np.sin(phase)
    return s * s, np.sin(2 * phase)


def _sinsoftmax_released(S, c):
    """demo.py's sin_softmax: softmax(c·sin m) of the unscaled m = S/c."""
    m = S / c
    g = np.exp(c * np.sin(m))
    return g, np.cos(m) * g


ROW_NORMALISED = {
    "softmax": _softmax,
    "sinmax-constant": _sinmax_constant,
    "cosmax": _cosmax,
    "sin2max-shifted": _sin2max_shifted,
    "sirenmax": _sirenmax,
    "sinsoftmax": _sinsoftmax,
    "sin2max-released": _sin2max_released,
    "sinsoftmax-released": _sinsoftmax_released,
}

NAMES = tuple(ELEMENTWISE) + tuple(ROW_NORMALISED)


TRANSFORMS = ("", "prenorm", "prenorm-released")


def split_name(name):
    """"softmax+prenorm" → ("softmax", "prenorm"); raises ValueError on unknown names."""
    base, _, transform = name.partition("+")
    if base not in NAMES or transform not in TRANSFORMS:
        raise ValueError(f"unknown activation '{name}' (known: {', '.join(NAMES)}, each with an optional +prenorm or "
                         f"+prenorm-released)")
    return base, transform


def prenorm(S, T=None, gain=1.0):
    """z = (s − s̄)/σ per row, σ = √(unbiased var + gain²·eps)/gain (gain = c: demo.py's z = c·prenorm(s/c)),
    and with T its tangent ż = (t − t̄ − z (z·t)/((n−1)gain²))/σ."""
    n = S.shape[-1]
    centred = S - S.mean(axis=-1, keepdims=True)
    sigma = np.sqrt(np.einsum("...j,...j->...", centred, centred)[..., None] / (n - 1) + gain * gain * PRENORM_EPS)
    sigma /= gain
    Z = centred / sigma
    if T is None:
        return Z, None
    along = np.einsum("...j,...j->...", Z, T)[..., None] / ((n - 1) * gain * gain)
    return Z, (T - T.mean(axis=-1, keepdims=True) - Z * along) / sigma


def value_and_jvp(name, S, T, logit_scale=LOGIT_SCALE):
    """Y = ϕ(S) and JT = J(S)·T for every row of S (…, n); T has S's shape."""
    base, transform = split_name(name)
    S, T = np.asarray(S, dtype=float), np.asarray(T, dtype=float)
    if S.shape != T.shape:
        raise ValueError(f"S is {S.shape} but T is {T.shape}")
    if transform:
        S, T = prenorm(S, T, logit_scale if transform == "prenorm-released" else 1.0)
    if base in ELEMENTWISE:
        h_dh, out_scale = ELEMENTWISE[base]
        c = out_scale(S.shape[-1])
        h, dh = h_dh(S)
        h *= c
        dh *= c
        dh *= T
        return h, dh
    g, dg = ROW_NORMALISED[base](S, logit_scale)  # softmax's g and g' are one array
    total = g.sum(axis=-1, keepdims=True)
    jt = dg * T
    dg_t = jt.sum(axis=-1, keepdims=True)
    g /= total
    jt -= g * dg_t
    jt /= total
    return g, jt


def value(name, S, logit_scale=LOGIT_SCALE):
    """ϕ(S) alone, written without the JVP's shared terms (what the finite differences differentiate); demo.py's
    prenorm as it writes it, on the unscaled logits."""
    base, transform = split_name(name)
    S = np.asarray(S, dtype=float)
    if transform == "prenorm":
        S = prenorm(S)[0]
    elif transform == "prenorm-released":
        S = logit_scale * prenorm(S / logit_scale)[0]
    if base in ELEMENTWISE:
        h_dh, out_scale = ELEMENTWISE[base]
        return out_scale(S.shape[-1]) * h_dh(S)[0]
    g = ROW_NORMALISED[base](S, logit_scale)[0]
    return g / g.sum(axis=-1, keepdims=True)


def batch(n, entries=ENTRIES, seed=1):
    """S and T of entries/n rows of length n, N(0, 1)."""
    rows = max(1, entries // n)
    rng = np.random.default_rng(seed)
    return rng.standard_normal((rows, n)), rng.standard_normal((rows, n))


def entries_per_second(names, sizes, entries=ENTRIES, repeat=3, seed=1):
    """Best entries/s of value_and_jvp over `repeat` timed runs per (activation, n), after a warm-up call.

    The runs are interleaved: each pass times every configuration once, so that a burst of load on a shared
    machine spoils one run of many configurations rather than every run of one.
    """
    configs = [(name, n) for name in names for n in sizes]
    calls, seconds = {}, {c: [] for c in configs}
    for _ in range(repeat):
        for name, n in configs:
            S, T = batch(n, entries, seed)
            if (name, n) not in calls:
                value_and_jvp(name, S, T)  # warm-up: the first call also faults in its temporaries' pages
                start = time.perf_counter()
                value_and_jvp(name, S, T)
                calls[(name, n)] = max(1, round(SECONDS_PER_RUN / (time.perf_counter() - start)))
            start = time.perf_counter()
            for _ in range(calls[(name, n)]):
                value_and_jvp(name, S, T)
            seconds[(name, n)].append((time.perf_counter() - start) / calls[(name, n)])
    return [{"activation": name, "n": n, "rows": max(1, entries // n), "calls": calls[(name, n)],
             "seconds": seconds[(name, n)], "entries_per_s": max(1, entries // n) * n / min(seconds[(name, n)])}
            for name, n in configs]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--activation", required=True,
                    help="comma-separated names (" + ", ".join(NAMES) + ", +prenorm or +prenorm-released)")
    ap.add_argument("--n", required=True, help="comma-separated row lengths")
    ap.add_argument("--entries", type=int, default=ENTRIES, help="rows·n per call")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs; the best is reported")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    names = a.activation.split(",")
    for name in names:
        try:
            split_name(name)
        except ValueError as e:
            ap.error(str(e))
    try:
        sizes = [int(n) for n in a.n.split(",")]
    except ValueError:
        ap.error(f"--n must be a comma-separated list of integers (got '{a.n}')")
    if min(sizes) < 2 or a.entries < 1 or a.repeat < 1:
        ap.error("--n must be at least 2, --entries and --repeat at least 1")
    print(json.dumps(entries_per_second(names, sizes, a.entries, a.repeat, a.seed)))


if __name__ == "__main__":
    main()
