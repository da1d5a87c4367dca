#!/usr/bin/python3
"""NumPy peer of attnlab's SOFT attention (soft_attention, src/soft/pinv.cpp) and Newton–Schulz pseudo-inverse.

For tokens Q (n×d, the rows of an H×W grid, row-major) and values V (n×c), with K = Q:
  Q̃ = adaptive average pooling of the grid to √m × √m cells (PyTorch's AdaptiveAvgPool2d cells: cell a of
      side s spans rows [⌊aH/s⌋, ⌈(a+1)H/s⌉), likewise for columns), as bottleneck_tokens' pool branch;
      or the first m tokens (the `first` sampler);
  A = exp(−‖q̃_i − q̃_j‖²/(2√d)) (m×m),  P = exp(−‖q̃_i − q_j‖²/(2√d)) (m×n), ‖q − k‖² = ‖q‖² + ‖k‖² − 2q·k ≥ 0;
  A⁺ by Newton–Schulz X_{k+1} = 2X_k − X_k A X_k from X_0 = αAᵀ, α = 2/‖A‖₁², a fixed number of iterations
      (PinvOptions{newton, max_iterations, tolerance = 0, trace = false});
  output Pᵀ(A⁺(P V)) (n×c), never n×n.
Everything is matrix products and whole-array ufuncs; the only Python loops run over the ≤ m pooling cells
and over the iterations.

  /usr/bin/python3 tests/reference/soft_numpy.py --n 1024,4096 --m 49,256 [--d 64 --c 64 --iterations 20 --repeat 3]
prints one JSON line: a list of {"what", "n", "grid", "m", "d", "c", "iterations", "calls", "seconds",
"best_s"} (seconds per call of each timed run), "what" being "soft_attention" for every (n, m) (n must be a
square: the grid is √n × √n) and, with --pinv, "pinv" for every m (Newton–Schulz alone on the A of the
largest n's pooled tokens). Inputs: tokens_on_grid(H, W, d, seed) and N(0, 1) values.

It also ports SOFT's two released pseudo-inverses (released_newton_inv, released_beta_newton_inv), written from
the behaviour of github:fudan-zvg/SOFT's SOFT/kernel/inverse.py and models/softmax_free_transformer.py:

  /usr/bin/python3 tests/reference/soft_numpy.py --released-fixture tests/reference/fixtures/released_pinv.txt
writes the fixture that attnlab's released and released-beta pseudo-inverses are compared with
(tests/property/test_pinv_rules.cpp).
"""
import argparse
import json
import math
import time

import numpy as np

ITERATIONS = 20  # Newton–Schulz iterations, as PinvOptions{.max_iterations = 20, .tolerance = 0} in the benchmark
SECONDS_PER_RUN = 0.2  # each timed run repeats the call for about this long


def cell_bounds(size, cells):
    """[(start, end)] of the `cells` adaptive-pooling cells along an axis of `size`: [⌊a·size/s⌋, ⌈(a+1)·size/s⌉)."""
    return [(a * size // cells, ((a + 1) * size + cells - 1) // cells) for a in range(cells)]


def pool_tokens(Q, grid_h, grid_w, m):
    """Adaptive average pooling of the grid_h × grid_w token grid (rows of Q, row-major) to √m × √m cell means."""
    side = math.isqrt(m)
    n, d = Q.shape
    if side * side != m or grid_h * grid_w != n or grid_h < side or grid_w < side or m < 1:
        raise ValueError(f"pool needs a square m ≤ n and a grid of n tokens with sides ≥ √m "
                         f"(got m = {m}, grid {grid_h}x{grid_w}, n = {n})")
    grid = Q.reshape(grid_h, grid_w, d)
    out = np.empty((m, d))
    for a, (h0, h1) in enumerate(cell_bounds(grid_h, side)):
        for b, (w0, w1) in enumerate(cell_bounds(grid_w, side)):
            out[a * side + b] = grid[h0:h1, w0:w1].sum(axis=(0, 1)) / ((h1 - h0) * (w1 - w0))
    return out


def bottleneck(Q, m, sampler="pool", grid_h=0, grid_w=0):
    """Q̃ (m×d): the pooled cells, or the first m tokens."""
    if sampler == "pool":
        return pool_tokens(Q, grid_h, grid_w, m)
    if sampler == "first":
        if not 1 <= m <= Q.shape[0]:
            raise ValueError(f"m must be in [1, n = {Q.shape[0]}] (got {m})")
        return Q[:m].copy()
    raise ValueError(f"sampler must be pool or first (got '{sampler}')")


def gaussian_kernel(Q, K):
    """exp(−‖q_i − k_j‖²/(2√d)) for the rows of Q (r×d) and K (s×d), computed in place in one r×s array."""
    c = 1.0 / (2.0 * math.sqrt(Q.shape[1]))
    S = Q @ K.T
    S *= -2.0
    S += np.einsum("ij,ij->i", Q, Q)[:, None]
    S += np.einsum("ij,ij->i", K, K)[None, :]
    np.maximum(S, 0.0, out=S)  # rounding can leave ‖q − k‖² slightly negative
    S *= -c
    return np.exp(S, out=S)


def newton_alpha(A):
    """SOFT's α = 2/‖A‖₁² (‖·‖₁ the largest absolute column sum)."""
    norm1 = np.abs(A).sum(axis=0).max()
    return 2.0 / (norm1 * norm1)


def newton_schulz(A, iterations=ITERATIONS, alpha=None):
    """X_{k+1} = 2X_k − X_k A X_k from X_0 = αAᵀ, `iterations` times; converges to A⁺ for 0 < α < 2/σ₁²."""
    X = (newton_alpha(A) if alpha is None else alpha) * A.T
    for _ in range(iterations):
        X = 2.0 * X - X @ A @ X
    return X


def released_newton_inv(A, iterations=ITERATIONS, float32_shift=False):
    """NumPy port of newton_inv in SOFT/kernel/inverse.py (github:fudan-zvg/SOFT), for one m×m matrix A:
    α = 0.9·2/r², r = max_i Σ_j A_ij (signed row sums of A, before the shift); P = A + 0.01·I; V = αP; then
    `iterations` times V ← 2V − V P V. torch.eye's I is float32, so the shift it adds is 0.01f: float32_shift
    reproduces that value, otherwise 0.01 in float64. Returns (V, α, shift)."""
    r = A.sum(axis=-1).max()
    alpha = 0.9 * 2 / r ** 2
    if float32_shift:
        shifted = np.float32(0.01) * np.eye(A.shape[0], dtype=np.float32)
    else:
        shifted = 0.01 * np.eye(A.shape[0])
    P = A + shifted
    V = alpha * P
    for _ in range(iterations):
        V = 2 * V - V @ P @ V
    return V, alpha, float(shifted[0, 0])


def released_beta_newton_inv(A, iterations=ITERATIONS, max_halvings=10):
    """NumPy port of SoftmaxFreeNormAttentionKernel.newton_inv in models/softmax_free_transformer.py (SOFT++), for
    one matrix A: α = 2/r² (r as above), V = αA; while ‖I − A V‖₁ (largest absolute column sum) > 1.01 and fewer
    than `max_halvings` halvings: α ← α/2, V = αA; then `iterations` times V ← 2V − V A V, met or not.
    Returns (V, α, halvings, the last ‖I − A V‖₁, and every ‖I − A V‖₁ the loop tested)."""
    r = A.sum(axis=-1).max()
    alpha = 2 / r ** 2
    identity = np.eye(A.shape[0])
    V = alpha * A
    pnorms = [np.abs(identity - A @ V).sum(axis=-2).max()]
    halvings = 0
    while pnorms[-1] > 1.01 and halvings < max_halvings:
        alpha *= 0.5
        V = alpha * A
        pnorms.append(np.abs(identity - A @ V).sum(axis=-2).max())
        halvings += 1
    for _ in range(iterations):
        V = 2 * V - V @ A @ V
    return V, alpha, halvings, pnorms[-1], pnorms


def soft_attention(Q, V, m, grid_h=0, grid_w=0, iterations=ITERATIONS, sampler="pool"):
    """Ŝ V = Pᵀ(A⁺(P V)) with K = Q, A⁺ by `iterations` Newton–Schulz steps."""
    Qt = bottleneck(Q, m, sampler, grid_h, grid_w)
    A = gaussian_kernel(Qt, Qt)
    P = gaussian_kernel(Qt, Q)
    X = newton_schulz(A, iterations)
    return P.T @ (X @ (P @ V))


def tokens_on_grid(grid_h, grid_w, d, seed=1, spread=0.1):
    """A smooth H×W 'image' of d-dimensional tokens (row-major), like attnlab's grid ensemble: Σ over
    frequencies (u, v) ∈ {0, 1, 2}² of a_uv cos(2π(u h/H + v w/W) + φ_uv), a_uv ~ N(0, I/9), plus N(0, spread²)."""
    rng = np.random.default_rng(seed)
    amplitude = rng.standard_normal((9, d)) / 3
    phase = rng.standard_normal(9)
    h = np.arange(grid_h)[:, None, None] / grid_h
    w = np.arange(grid_w)[None, :, None] / grid_w
    u, v = np.divmod(np.arange(9), 3)
    waves = np.cos(2 * math.pi * (u * h + v * w) + phase)  # H × W × 9
    return waves.reshape(grid_h * grid_w, 9) @ amplitude + spread * rng.standard_normal((grid_h * grid_w, d))


def problem(n, d=64, c=64, seed=1):
    """(Q, V, side) for n = side² tokens on a side × side grid."""
    side = math.isqrt(n)
    if side * side != n:
        raise ValueError(f"n must be a square (the grid is √n × √n; got {n})")
    Q = tokens_on_grid(side, side, d, seed)
    V = np.random.default_rng(seed + 1).standard_normal((n, c))
    return Q, V, side


def _time(call, repeat):
    """Seconds per call of `repeat` timed runs of about SECONDS_PER_RUN each, after a warm-up call."""
    call()
    start = time.perf_counter()
    call()
    calls = max(1, round(SECONDS_PER_RUN / (time.perf_counter() - start)))
    seconds = []
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        seconds.append((time.perf_counter() - start) / calls)
    return calls, seconds


def timings(sizes, ms, d=64, c=64, iterations=ITERATIONS, repeat=3, seed=1, pinv=False):
    out = []
    for n in sizes:
        Q, V, side = problem(n, d, c, seed)
        for m in ms:
            calls, seconds = _time(lambda: soft_attention(Q, V, m, side, side, iterations), repeat)
            out.append({"what": "soft_attention", "n": n, "grid": [side, side], "m": m, "d": d, "c": c,
                        "iterations": iterations, "calls": calls, "seconds": seconds, "best_s": min(seconds)})
    if pinv:
        Q, _, side = problem(max(sizes), d, c, seed)
        for m in ms:
            Qt = pool_tokens(Q, side, side, m)
            A = gaussian_kernel(Qt, Qt)
            calls, seconds = _time(lambda: newton_schulz(A, iterations), repeat)
            out.append({"what": "pinv", "n": max(sizes), "grid": [side, side], "m": m, "d": d, "c": c,
                        "iterations": iterations, "calls": calls, "seconds": seconds, "best_s": min(seconds)})
    return out


def released_fixture_cases(seed=20261124, iterations=ITERATIONS):
    """The parity inputs, (name, A, iterations): Gaussian-kernel bottlenecks that 20 iterations invert (gaussian,
    pooled_grid) or do not (clustered), exactly singular (each token twice) and numerically singular (16 tokens
    evenly spaced on a segment: κ ~ 1e18), one not symmetric (exp(Q̃ ⊖ K̃), Q̃ ≠ K̃: both released functions start
    from αA, not αAᵀ, and diverge; 8 iterations stay finite) and one with negative entries, whose signed row sums
    are not its ∞-norm."""
    rng = np.random.default_rng(seed)
    d = 16
    scale = d ** -0.25  # entries N(0, d^-1/2): unit kernel bandwidth, as attnlab's token ensembles
    gaussian = scale * rng.standard_normal((16, d))
    centres = scale * rng.standard_normal((4, d))
    clustered = centres[np.arange(32) % 4] + 0.1 * scale * rng.standard_normal((32, d))
    distinct = scale * rng.standard_normal((8, d))
    keys = scale * rng.standard_normal((16, d))
    grid = tokens_on_grid(30, 30, 64, seed)
    pooled = pool_tokens(grid, 30, 30, 36)
    segment = np.linspace(0, 1, 16)[:, None] * np.full((1, d), d ** -0.5)
    return [
        ("gaussian", gaussian_kernel(gaussian, gaussian), iterations),
        ("clustered", gaussian_kernel(clustered, clustered), iterations),
        ("duplicated", gaussian_kernel(np.repeat(distinct, 2, axis=0), np.repeat(distinct, 2, axis=0)), iterations),
        ("segment", gaussian_kernel(segment, segment), iterations),
        ("pooled_grid", gaussian_kernel(pooled, pooled), iterations),
        ("asymmetric", gaussian_kernel(gaussian, keys), 8),
        ("signed", gaussian_kernel(gaussian, gaussian) - 0.4, iterations),
    ]


def write_released_fixture(path, iterations=ITERATIONS):
    """Writes tests/reference/fixtures/released_pinv.txt, read by tests/property/test_pinv_rules.cpp:
      case <name> <m> <iterations>, then A as m lines of m numbers;
      released <α> <shift>, released-float32 <α> <shift>, released-beta <α> <halvings> <‖I − A V‖₁>, each followed
      by the final iterate V as m lines; then end. Numbers are Python's repr (they read back exactly)."""
    def rows(M):
        return "".join(" ".join(repr(float(v)) for v in row) + "\n" for row in M)

    out = ["# attnlab released pseudo-inverse parity fixture, version 1: written by "
           "/usr/bin/python3 tests/reference/soft_numpy.py --released-fixture " + path + "\n"]
    for name, A, steps in released_fixture_cases(iterations=iterations):
        out.append(f"case {name} {A.shape[0]} {steps}\n" + rows(A))
        for label, float32 in (("released", False), ("released-float32", True)):
            V, alpha, shift = released_newton_inv(A, steps, float32)
            out.append(f"{label} {alpha!r} {shift!r}\n" + rows(V))
        V, alpha, halvings, pnorm, pnorms = released_beta_newton_inv(A, steps)
        # A norm within rounding of 1.01 could take a different branch in a different summation order.
        if min(abs(p - 1.01) for p in pnorms) < 1e-9:
            raise ValueError(f"case {name}: ||I - A V||_1 within 1e-9 of 1.01; the halving count is not robust")
        out.append(f"released-beta {alpha!r} {halvings} {float(pnorm)!r}\n" + rows(V))
        out.append("end\n")
    with open(path, "w") as f:
        f.write("".join(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--released-fixture", metavar="PATH",
                    help="write the released pseudo-inverse parity fixture to PATH and exit")
    ap.add_argument("--n", help="comma-separated token counts (squares: the grid is √n × √n)")
    ap.add_argument("--m", help="comma-separated bottleneck sizes (squares ≤ n)")
    ap.add_argument("--d", type=int, default=64, help="token dimension")
    ap.add_argument("--c", type=int, default=64, help="value dimension")
    ap.add_argument("--iterations", type=int, default=ITERATIONS, help="Newton–Schulz iterations")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per configuration")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--pinv", action="store_true", help="also time Newton–Schulz alone for every m")
    a = ap.parse_args()
    if a.released_fixture:
        write_released_fixture(a.released_fixture)
        return
    if a.n is None or a.m is None:
        ap.error("--n and --m are required (unless --released-fixture)")
    try:
        sizes = [int(n) for n in a.n.split(",")]
        ms = [int(m) for m in a.m.split(",")]
    except ValueError:
        ap.error("--n and --m must be comma-separated lists of integers")
    for n in sizes:
        if n < 1 or math.isqrt(n) ** 2 != n:
            ap.error(f"--n must list positive squares (got {n})")
    for m in ms:
        if m < 1 or math.isqrt(m) ** 2 != m or m > min(sizes):
            ap.error(f"--m must list squares in [1, min n] (got {m})")
    if a.d < 1 or a.c < 1 or a.iterations < 0 or a.repeat < 1:
        ap.error("--d, --c and --repeat must be at least 1, --iterations at least 0")
    print(json.dumps(timings(sizes, ms, a.d, a.c, a.iterations, a.repeat, a.seed, a.pinv)))


if __name__ == "__main__":
    main()
