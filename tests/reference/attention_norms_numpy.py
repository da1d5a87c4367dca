#!/usr/bin/python3
"""NumPy peer of attnlab's attention-norms estimator for x^p/k attention, "inside" convention.

Per trial: X (N×D), Q, K (D×d) ~ N(0, 1); U = XQ, V = XK; S = UVᵀ/√d; ϕ = S^p/k elementwise.
  frob2  = Σ ϕ_ij²
  jac2   = Σ ϕ'(S_ij)²                       (ϕ' = p S^(p-1)/k, the diagonal Jacobian w.r.t. S)
  qgrad2 = Σ g_ij² ‖x_i‖² ‖v_j‖²,  kgrad2 = Σ g_ij² ‖u_i‖² ‖x_j‖²,  g = ϕ'(S)/√d (w.r.t. the unscaled logit)

Trials are evaluated in batches (stacked matmul) so that small N is not dominated by Python overhead.

  /usr/bin/python3 tests/reference/attention_norms_numpy.py --N 256 --trials 64 [--repeat 3]
prints {"N": ..., "trials": ..., "seconds": [...], "trials_per_s": ..., "blas_core": ...} as one JSON line;
--dgemm n times numpy's n×n×n matmul instead (GFLOP/s).
"""
import argparse
import ctypes
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


def run(N, trials, D=64, d=64, p=3, k=1.0, seed=1):
    """Every trial's squared norms as a dict of arrays of length `trials`, sampling included."""
    rng = np.random.default_rng(seed)
    batch = max(1, min(trials, BATCH_LOGITS // (N * N)))
    out = {q: np.empty(trials) for q in QUANTITIES}
    for t0 in range(0, trials, batch):
        b = min(batch, trials - t0)
        X = rng.standard_normal((b, N, D))
        Q = rng.standard_normal((b, D, d))
        K = rng.standard_normal((b, D, d))
        for q, v in attention_norms(X, Q, K, p, k).items():
            out[q][t0:t0 + b] = v
    return out


def blas_info():
    """The OpenBLAS kernel and thread count numpy runs with (OPENBLAS_CORETYPE can force a slow one)."""
    try:
        blas = ctypes.CDLL("libblas.so.3")  # numpy's BLAS is already loaded: this returns its handle
        blas.openblas_get_corename.restype = ctypes.c_char_p
        return {"blas_core": blas.openblas_get_corename().decode(), "blas_threads": blas.openblas_get_num_threads()}
    except (OSError, AttributeError):
        return {"blas_core": "not OpenBLAS", "blas_threads": None}


def trials_per_second(N, trials, D=64, d=64, p=3, k=1.0, seed=1, repeat=1):
    """Best trials/s of `repeat` timed calls of `run`, after an untimed one-trial warm-up."""
    run(N, 1, D, d, p, k, seed)
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        run(N, trials, D, d, p, k, seed)
        seconds.append(time.perf_counter() - start)
    return {"N": N, "D": D, "d": d, "p": p, "trials": trials, "seconds": seconds, "trials_per_s": trials / min(seconds),
            **blas_info()}


def dgemm_gflops(n, repeat=3):
    """Best GFLOP/s of an n×n×n double matmul (numpy's BLAS) over `repeat` calls, after a warm-up."""
    rng = np.random.default_rng(0)
    A, B = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    C = A @ B
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        np.matmul(A, B, out=C)
        best = min(best, time.perf_counter() - start)
    return {"n": n, "gflops": 2.0 * n**3 / best / 1e9, **blas_info()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--N", type=int, help="sequence length (required unless --dgemm)")
    ap.add_argument("--trials", type=int, default=16)
    ap.add_argument("--D", type=int, default=64)
    ap.add_argument("--d", type=int, default=64)
    ap.add_argument("--p", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=1, help="timed runs; the best is reported")
    ap.add_argument("--dgemm", type=int, metavar="n", help="time an n×n×n matmul instead")
    a = ap.parse_args()
    for name in ("trials", "D", "d", "p", "repeat"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} must be at least 1")
    if a.dgemm is not None:
        if a.dgemm < 1:
            ap.error("--dgemm must be at least 1")
        print(json.dumps(dgemm_gflops(a.dgemm, a.repeat)))
    elif a.N is None or a.N < 1:
        ap.error("--N must be given and at least 1")
    else:
        print(json.dumps(trials_per_second(a.N, a.trials, a.D, a.d, a.p, 1.0, a.seed, a.repeat)))


if __name__ == "__main__":
    main()
