"""attnlab from Python: activations and pseudo-inverses on NumPy arrays, the claims, and every study as a pandas
DataFrame with the numbers its binary writes (the studies run in this process, without the GIL).

The API: activation, activation_names, study_names, pseudo_inverse, claims, run_study, verify, train, characterise;
help() on each says what it takes and returns. The studies print nothing but warnings unless called with verbose=True."""
import os as _os
import tempfile as _tempfile

import pandas as _pd

from . import _core

__all__ = ["activation", "activation_names", "study_names", "pseudo_inverse", "claims", "run_study", "verify", "train",
           "characterise"]


def activation(name, p=3, k="sqrtN", alpha=1.0, params=None):
    """The activation `name` with its exact row Jacobian: any name of activation_names(), with the transforms
    +prenorm or +prenorm-released (not +qkln, which acts on q and k, not on rows); p and k are x^p/k's exponent and
    scale (k '1', 'sqrtN' or a number) and alpha the exponent of h(S)/N^alpha. Or a formula: 'expr:x^3/sqrt(N)'
    (phi = h(x)) or 'rowexpr:exp(x)' (phi = g(x)/sum g) in x, N, d and parameters whose values `params` (a dict) gives.

    Returns an object with .value(rows) (phi of each row of a float64, C-contiguous, finite rows x n array),
    .jvp(rows, tangents) (J(x_i) t_i row by row), .row_jacobian(row) (the n x n Jacobian of one row) and .label.
    Bad names, arrays or parameters raise ValueError saying what is wrong."""
    return _core.activation(name, p, str(k), alpha, dict(params or {}))


def activation_names():
    """The registered activation names, as the studies' --activation takes them."""
    return _core.activation_names()


def study_names():
    """The studies run_study takes, as named in build/studies/."""
    return _core.study_names()


def pseudo_inverse(A, method="newton", iterations=0, tolerance=1e-10, trace=True):
    """The pseudo-inverse of the float64 matrix A by `method` (svd, newton, newton-beta, released, released-beta,
    nystromformer), and its per-iteration trace as a DataFrame (iteration, residual ||A X A - A||_2/||A||_2, error
    ||X - A+||_2, and the shifted ones of the released method); the run's summary is in trace.attrs."""
    result = _core.pseudo_inverse(A, method, iterations, tolerance, trace)
    steps = _pd.DataFrame(result["trace"])
    steps.attrs.update({k: result[k] for k in ("iterations", "alpha", "converged", "diverged", "status")})
    return result["inverse"], steps


def claims():
    """Every registered claim as a DataFrame: id, source and statement."""
    return _pd.DataFrame(_core.claims())


def _arguments(flags):
    args = []
    for key, value in flags.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, (list, tuple)):
            args += [flag, ",".join(str(v) for v in value)]
        else:
            args += [flag, str(value)]
    return args


def run_study(name, out=None, progress=None, verbose=False, **flags):
    """Runs study `name` as `build/studies/<name> --out OUT --flag value ...` would (N=[16, 32] is --N 16,32,
    quick=True is --quick, sigma_t=0.3 is --sigma-t 0.3) and returns <name>.csv as a DataFrame.

    OUT (a new temporary folder unless given) holds every other output and is in df.attrs["out"]; the summary the
    binary prints (a sweep's table, the verdict counts) is in df.attrs["summary"]. progress(stage, task, done, total)
    is called as the run goes. Nothing is printed but warnings unless verbose=True, which prints the summary and the
    binary's progress and closing lines. Bad flags raise ValueError, failures RuntimeError, with the command line's
    message."""
    out = out or _tempfile.mkdtemp(prefix=f"attnlab-{name}-")
    summary = _core.run_study(name, ["--out", str(out)] + _arguments(flags), progress, not verbose)
    if verbose:
        print(summary, end="", flush=True)
    table = _pd.read_csv(_os.path.join(out, f"{name}.csv"), keep_default_na=True)
    table.attrs["out"] = str(out)
    table.attrs["summary"] = summary
    return table


def verify(ids=None, quick=False, out=None, progress=None, verbose=False, **flags):
    """Judges the claims `ids` (all when None) as the verify binary does and returns claims.csv as a DataFrame, one
    verdict row each; the evidence (verify.csv), report.md and the figures are in the folder df.attrs["out"]. Other
    keywords are verify's flags, as for run_study."""
    table = run_study("verify", out=out, progress=progress, verbose=verbose, claims=list(ids) if ids else None,
                      quick=quick, **flags)
    verdicts = _pd.read_csv(_os.path.join(table.attrs["out"], "claims.csv"))
    verdicts.attrs.update(table.attrs)
    return verdicts


def train(out=None, progress=None, verbose=False, **config):
    """Trains the ViT mini-trainer as `build/studies/train` does with these flags (steps=200, activation="poly",
    train_limit=4096, data="recall" for the generated associative-recall task, readout="last" to read it at its
    query token, ...) and returns its curves
    (train.csv) as a DataFrame: loss and accuracy per step and split, and the attention norms."""
    return run_study("train", out=out, progress=progress, verbose=verbose, **config)


def characterise(activations, params=None, out=None, progress=None, verbose=False, **flags):
    """The activation card of each of `activations` (registered names or formulas) beside softmax, as the
    characterise binary writes it: returns characterise.csv as a DataFrame (norm growth over N with the fitted
    exponents, the largest row Jacobian found, saturation and values over logit scales, the row map's properties and
    the training readout), with card.md's text in df.attrs["card"] and the folder in df.attrs["out"]. `params` gives
    the formulas' parameters as a dict; other keywords are characterise's flags (quick=True, N=[16, 64], tasks="none")."""
    param = [f"{key}={float(value)!r}" for key, value in (params or {}).items()] or None
    table = run_study("characterise", out=out, progress=progress, verbose=verbose, activation=list(activations),
                      param=param, **flags)
    with open(_os.path.join(table.attrs["out"], "card.md")) as f:
        table.attrs["card"] = f.read()
    return table
