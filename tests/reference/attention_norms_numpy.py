#!/usr/bin/python3
"""NumPy peer of attnlab's attention-norms estimator for x^p/k attention, "inside" convention.

Per trial: X (N×D), Q, K (D×d) ~ N(0, 1); U = XQ, V = XK; S = UVᵀ/√d; ϕ = S^p/k elementwise.
  frob2  = Σ ϕ_ij²
  jac2   = Σ ϕ'(S_ij)²                       (ϕ' = p S^(p-1)/k, the diagonal Jacobian w.r.t. S)
  qgrad2 = Σ g_ij² ‖x_i‖² ‖v_j‖²,  kgrad2 = Σ g_ij² ‖u_i‖² ‖x_j‖²,  g = ϕ'(S)/√d (w.r.t. the unscaled logit)

Trials are evaluated in batches (stacked matmul) so that small N is not dominated by Python overhead.

  /usr/bin/python3 tests/reference/attention_norms_numpy.py --N 256 --trials 64
prints {"N": ..., "trials": ..., "seconds": ..., "trials_per_s": ...} as one JSON line.
"""
import argparse
import json
import math
import time

import numpy as np

QUANTITIES = ("frob2", "jac2", "qgrad2", "kgrad2")

# Upper bound on the entries of the logits S held at once by one batch (16 Mi doubles = 128 MiB).
BATCH_LOGITS = 1 << 24


def attention_norms(X, Q, K, p=3, k=1.0):
    """Squared norms of one trial (2-D X, Q, K) or of a batch (leading batch axis); arrays of shape batch."""
    d = Q.shape[-1]
    U = X @ Q
    V = X @ K
    S = U @ np.swapaxes(V, -1, -2)
    S /= math.sqrt(d)
    Sp = S ** (p - 1)  # ϕ'(S) = (p/k) S^(p-1); scalar factors are applied to the sums, not to N² arrays
    phi_k = np.multiply(Sp, S, out=S)  # k ϕ
    frob2 = np.einsum("...ij,...ij->...", phi_k, phi_k) / k**2
    G2 = np.square(Sp, out=Sp)  # (k/p)² ϕ'(S)²
    x2 = np.einsum("...ik,...ik->...i", X, X)
    u2 = np.einsum("...ik,...ik->...i", U, U)
    v2 = np.einsum("...ik,...ik->...i", V, V)
    g2_scale = (p / k) ** 2
    return {
        "frob2": frob2,
        "jac2": g2_scale * G2.sum(axis=(-2, -1)),
        "qgrad2": g2_scale / d * np.einsum("...i,...i->...", x2, (G2 @ v2[..., None])[..., 0]),
        "kgrad2": g2_scale / d * np.einsum("...i,...i->...", u2, (G2 @ x2[..., None])[..., 0]),
    }


def run(N, trials, D=64, d=64, p=3, k=1.0, seed=1, batch=None):
    """Every trial's squared norms as a dict of arrays of length `trials`, sampling included."""
    rng = np.random.default_rng(seed)
    batch = batch or max(1, min(trials, BATCH_LOGITS // (N * N)))
    out = {q: np.empty(trials) for q in QUANTITIES}
    for t0 in range(0, trials, batch):
        b = min(batch, trials - t0)
        X = rng.standard_normal((b, N, D))
        Q = rng.standard_normal((b, D, d))
        K = rng.standard_normal((b, D, d))
        for q, v in attention_norms(X, Q, K, p, k).items():
            out[q][t0:t0 + b] = v
    return out


def trials_per_second(N, trials, D=64, d=64, p=3, k=1.0, seed=1):
    """Trials/s of `run`, after one untimed warm-up batch."""
    run(N, min(trials, max(1, BATCH_LOGITS // (N * N))), D, d, p, k, seed)
    start = time.perf_counter()
    run(N, trials, D, d, p, k, seed)
    seconds = time.perf_counter() - start
    return {"N": N, "D": D, "d": d, "p": p, "trials": trials, "seconds": seconds, "trials_per_s": trials / seconds}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--N", type=int, required=True)
    ap.add_argument("--trials", type=int, required=True)
    ap.add_argument("--D", type=int, default=64)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--p", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    for name in ("N", "trials", "D", "d", "p"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} must be at least 1")
    print(json.dumps(trials_per_second(a.N, a.trials, a.D, a.d, a.p, 1.0, a.seed)))


if __name__ == "__main__":
    main()
