#!/usr/bin/python3
"""NumPy peer of attnlab's Monte-Carlo estimate of E‖ϕ(S)‖_F² and E‖∂ϕ/∂S‖_F² for row-normalised ϕ (poly_frobenius
--activation softmax, or a periodic alternative): per trial X (N×D), Q, K (D×d) ~ N(0, 1), S = XQKᵀXᵀ/√d, then row by row
  softmax:  P = softmax(S) in place,  frob2 = Σ_ij P_ij²,  jac2 = Σ_i (Σ_j P_ij² − 2 Σ_j P_ij³ + (Σ_j P_ij²)²)
  g/Σg:     G = Σg, A = Σg², B = Σg'², C = Σg·g'² per row,  frob2 = Σ_i A/G²,  jac2 = Σ_i (B − 2C/G + A·B/G²)/G²
(‖diag(r) − s rᵀ‖_F² with s = g/G, r = g'/G). Trials are evaluated in batches (stacked matmul) so that small N is not
dominated by Python overhead.

  /usr/bin/python3 tests/reference/row_normalised_norms_numpy.py --N 256 --trials 64 [--activation sin2max]
prints {"N": ..., "trials": ..., "seconds": ..., "frob2": [mean, se], "jac2": [mean, se]} as one JSON line.
"""
import argparse
import json
import math
import time

import numpy as np

BATCH_LOGITS = 1 << 24  # entries of S held at once (128 MiB)


# g and g' of the PERIODIC paper's alternatives (attnlab's registry names).
PERIODIC = {
    "sinmax": lambda S: (np.sin(S), np.cos(S)),
    "cosmax": lambda S: (np.cos(S), -np.sin(S)),
    "sin2max": lambda S: (np.sin(S) ** 2, np.sin(2 * S)),
    "sirenmax": lambda S: ((np.sin(S) + 1) / (2 - 2 * np.sin(S)), np.cos(S) / (1 - np.sin(S)) ** 2),
    "sinsoftmax": lambda S: (np.exp(np.sin(S)), np.cos(S) * np.exp(np.sin(S))),
}


def logits(X, Q, K):
    S = (X @ Q) @ np.swapaxes(X @ K, -1, -2)
    S *= 1 / math.sqrt(Q.shape[-1])
    return S


def periodic_norms(S, activation):
    g, dg = PERIODIC[activation](S)
    G = g.sum(axis=-1)
    A = np.einsum("...ij,...ij->...i", g, g)
    dg2 = np.square(dg, out=dg)
    B = dg2.sum(axis=-1)
    C = np.einsum("...ij,...ij->...i", g, dg2)
    return (A / G**2).sum(axis=-1), ((B - 2 * C / G + A * B / G**2) / G**2).sum(axis=-1)


def softmax_norms(S):
    S -= S.max(axis=-1, keepdims=True)
    np.exp(S, out=S)
    S /= S.sum(axis=-1, keepdims=True)
    p2 = np.einsum("...ij,...ij->...i", S, S)
    p3 = np.einsum("...ij,...ij,...ij->...i", S, S, S)
    return p2.sum(axis=-1), (p2 - 2 * p3 + p2 * p2).sum(axis=-1)


def run(N, trials, D, d, seed, activation="softmax"):
    rng = np.random.default_rng(seed)
    batch = max(1, min(trials, BATCH_LOGITS // (N * N)))
    frob2, jac2 = np.empty(trials), np.empty(trials)
    for t0 in range(0, trials, batch):
        b = min(batch, trials - t0)
        S = logits(rng.standard_normal((b, N, D)), rng.standard_normal((b, D, d)), rng.standard_normal((b, D, d)))
        frob2[t0:t0 + b], jac2[t0:t0 + b] = softmax_norms(S) if activation == "softmax" else periodic_norms(S, activation)
    return frob2, jac2


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--N", type=int, required=True)
    ap.add_argument("--trials", type=int, default=16)
    ap.add_argument("--D", type=int, default=64)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--activation", default="softmax", choices=["softmax", *PERIODIC])
    a = ap.parse_args()
    start = time.perf_counter()
    frob2, jac2 = run(a.N, a.trials, a.D, a.d, a.seed, a.activation)
    seconds = time.perf_counter() - start
    stats = {q: [v.mean(), v.std(ddof=1) / math.sqrt(len(v)) if len(v) > 1 else math.nan]
             for q, v in (("frob2", frob2), ("jac2", jac2))}
    print(json.dumps({"N": a.N, "trials": a.trials, "seconds": seconds, **stats}))


if __name__ == "__main__":
    main()
