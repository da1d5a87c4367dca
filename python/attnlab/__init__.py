"""attnlab from Python: activations and pseudo-inverses on NumPy arrays, the claims, and every study as a pandas
DataFrame with the numbers its binary writes (the studies run in this process, without the GIL)."""
import os
import tempfile

import pandas as pd

from . import _core
from ._core import activation, activation_names, study_names

__all__ = ["activation", "activation_names", "study_names", "pseudo_inverse", "claims", "run_study", "verify", "train"]


def pseudo_inverse(A, method="newton", iterations=0, tolerance=1e-10, trace=True):
    """The pseudo-inverse of the float64 matrix A by `method` (svd, newton, newton-beta, released, released-beta,
    nystromformer), and its per-iteration trace as a DataFrame (iteration, residual ||A X A - A||_2/||A||_2, error
    ||X - A+||_2, and the shifted ones of the released method); the run's summary is in trace.attrs."""
    result = _core.pseudo_inverse(A, method, iterations, tolerance, trace)
    steps = pd.DataFrame(result["trace"])
    steps.attrs.update({k: result[k] for k in ("iterations", "alpha", "converged", "diverged", "status")})
    return result["inverse"], steps


def claims():
    """Every registered claim: id, source and statement."""
    return pd.DataFrame(_core.claims())


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


def run_study(name, out=None, progress=None, **flags):
    """Runs study `name` as `build/studies/<name> --out OUT --flag value ...` would (N=[16, 32] is --N 16,32,
    quick=True is --quick, sigma_t=0.3 is --sigma-t 0.3) and returns <name>.csv as a DataFrame; OUT (a new temporary
    folder unless given) holds every other output and is in df.attrs["out"]. progress(stage, task, done, total) is
    called as the run goes. Bad flags raise ValueError, failures RuntimeError, with the command line's message."""
    out = out or tempfile.mkdtemp(prefix=f"attnlab-{name}-")
    _core.run_study(name, ["--out", str(out)] + _arguments(flags), progress)
    table = pd.read_csv(os.path.join(out, f"{name}.csv"), keep_default_na=True)
    table.attrs["out"] = str(out)
    return table


def verify(ids=None, quick=False, out=None, progress=None, **flags):
    """Judges the claims `ids` (all when None) as the verify binary does and returns claims.csv: one verdict row each."""
    table = run_study("verify", out=out, progress=progress, claims=list(ids) if ids else None, quick=quick, **flags)
    verdicts = pd.read_csv(os.path.join(table.attrs["out"], "claims.csv"))
    verdicts.attrs["out"] = table.attrs["out"]
    return verdicts


def train(out=None, progress=None, **config):
    """Trains the ViT mini-trainer as `build/studies/train` does with these flags (steps=200, activation="poly",
    train_limit=4096, data="recall" for the generated associative-recall task, ...) and returns its curves
    (train.csv): loss and accuracy per step and split, and the attention norms."""
    return run_study("train", out=out, progress=progress, **config)
