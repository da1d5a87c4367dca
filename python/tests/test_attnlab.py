"""The Python module against the C++ binaries of the same build: the same numbers from every entry point, the
command line's error messages as ValueError/RuntimeError, and bad arrays refused with a message, never a crash."""
import json
import os
import pydoc
import re
import subprocess

import numpy as np
import pandas as pd
import pytest

import attnlab

from conftest import SEED


def binary(studies_dir, name, *args):
    """Runs a study binary; returns (exit code, stderr)."""
    r = subprocess.run([os.path.join(studies_dir, name), *map(str, args)], capture_output=True, text=True)
    return r.returncode, r.stderr


def rows_csv(path, rows):
    with open(path, "w") as f:
        for row in rows:
            f.write(",".join(repr(float(v)) for v in row) + "\n")


@pytest.mark.parametrize("name", ["softmax", "sirenmax+prenorm", "poly", "relu"])
def test_activation_values_equal_the_activation_rows_binary(tmp_path, studies_dir, name):
    rows = np.random.default_rng(SEED).normal(size=(4, 7))
    rows_csv(tmp_path / "rows.csv", rows)
    code, err = binary(studies_dir, "activation_rows", "--rows", tmp_path / "rows.csv", "--activation", name,
                       "--out", tmp_path / "out")
    assert code == 0, err
    want = np.loadtxt(tmp_path / "out" / f"values_{name}.csv", delimiter=",", ndmin=2)
    got = attnlab.activation(name).value(rows)
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=1e-300)
    norms = pd.read_csv(tmp_path / "out" / "activation_rows.csv")
    jac = norms[norms.quantity == "jac_frob"].sort_values("row")["mean"].to_numpy()
    act = attnlab.activation(name)
    # The CSV keeps ten significant digits.
    np.testing.assert_allclose([np.linalg.norm(act.row_jacobian(r)) for r in rows], jac, rtol=1e-9)


@pytest.mark.parametrize("name", ["softmax", "sinsoftmax", "poly", "gelu", "softmax+prenorm"])
def test_row_jacobian_matches_central_differences_and_jvp_applies_it(name):
    rng = np.random.default_rng(SEED + 1)
    act = attnlab.activation(name)
    x = rng.normal(size=6)
    J = act.row_jacobian(x)
    h = 1e-6
    for k in range(x.size):
        e = np.zeros_like(x)
        e[k] = h
        column = (act.value((x + e)[None, :])[0] - act.value((x - e)[None, :])[0]) / (2 * h)
        np.testing.assert_allclose(J[:, k], column, rtol=1e-6, atol=1e-8)
    t = rng.normal(size=(1, 6))
    np.testing.assert_allclose(act.jvp(x[None, :], t)[0], J @ t[0], rtol=1e-13, atol=1e-15)


def entry_names():
    """The names of the entries of include/attnlab/attention/*_functions.def, read from the files themselves."""
    folder = os.path.join(os.path.dirname(__file__), "..", "..", "include", "attnlab", "attention")
    names = []
    for file in ("elementwise_functions.def", "row_normalised_functions.def"):
        with open(os.path.join(folder, file)) as f:
            names += re.findall(r'^ATTNLAB_(?:ELEMENTWISE|ROW_NORMALISED)\(\s*\w+,\s*"([^"]+)"', f.read(), re.M)
    return names


def test_every_entry_is_an_activation():
    """One entry in a .def file is all an activation needs to reach Python."""
    assert entry_names() and set(entry_names()) <= set(attnlab.activation_names())


@pytest.mark.parametrize("name", attnlab.activation_names())
def test_every_registered_activation_has_its_values_and_jacobian(name):
    rng = np.random.default_rng(SEED + 2)
    act = attnlab.activation(name)
    rows = 0.3 * rng.normal(size=(2, 5))  # logits of order 1/3: far from sirenmax's poles
    values = act.value(rows)
    assert values.shape == rows.shape and np.isfinite(values).all()
    J = act.row_jacobian(rows[0])
    t = rng.normal(size=(1, 5))
    np.testing.assert_allclose(act.jvp(rows[:1], t)[0], J @ t[0], rtol=1e-12, atol=1e-14)


def test_pseudo_inverse_trace_equals_newton_pinv_binary(tmp_path, studies_dir):
    i = np.arange(12.0)
    A = np.exp(-np.subtract.outer(i, i) ** 2 / 4.5)
    np.savetxt(tmp_path / "A.csv", A, delimiter=",", fmt="%.17g")
    code, err = binary(studies_dir, "newton_pinv", "--matrix", tmp_path / "A.csv", "--method", "newton",
                       "--tolerance", "1e-10", "--out", tmp_path / "out")
    assert code == 0, err
    trace = pd.read_csv(tmp_path / "out" / "newton_pinv_trace.csv")
    X, steps = attnlab.pseudo_inverse(A, method="newton", tolerance=1e-10)
    assert steps.attrs["converged"]
    np.testing.assert_allclose(steps["residual"].to_numpy(), trace["residual"].to_numpy(), rtol=1e-9)
    np.testing.assert_allclose(X, np.linalg.pinv(A), rtol=0, atol=1e-6 * np.linalg.norm(np.linalg.pinv(A), 2))


def test_run_study_returns_the_binarys_csv(tmp_path, studies_dir):
    flags = dict(quick=True, N=[8, 16, 32], trials=5, activation=["softmax", "relu"], sigma_t=0.5)
    table = attnlab.run_study("poly_frobenius", out=tmp_path / "py", threads=1, **flags)
    code, err = binary(studies_dir, "poly_frobenius", "--quick", "--N", "8,16,32", "--trials", 5, "--activation",
                       "softmax,relu", "--sigma-t", 0.5, "--threads", 1, "--out", tmp_path / "cli")
    assert code == 0, err
    pd.testing.assert_frame_equal(table, pd.read_csv(tmp_path / "cli" / "poly_frobenius.csv"), check_like=False)
    assert (tmp_path / "cli" / "poly_frobenius.csv").read_bytes() == (tmp_path / "py" / "poly_frobenius.csv").read_bytes()


def test_claims_are_the_registry_and_verify_returns_the_binarys_verdicts(tmp_path, studies_dir):
    ids = set(attnlab.claims()["id"])
    committed = pd.read_csv(os.path.join(os.path.dirname(__file__), "..", "..", "results", "claims.csv"))
    assert ids == set(committed["claim_id"])
    chosen = ["poly.softmax_fro_bound", "relu.row_sum"]
    verdicts = attnlab.verify(ids=chosen, quick=True, out=tmp_path / "py", threads=1)
    code, err = binary(studies_dir, "verify", "--quick", "--claims", ",".join(chosen), "--threads", 1,
                       "--out", tmp_path / "cli")
    assert code == 0, err
    assert list(verdicts["claim_id"]) == chosen
    pd.testing.assert_frame_equal(verdicts, pd.read_csv(tmp_path / "cli" / "claims.csv"))


def test_train_reports_progress_and_returns_the_binarys_curves(tmp_path, studies_dir):
    config = dict(model="micro", steps=4, batch=16, train_limit=256, validation=64, eval_every=2, log_every=2, threads=1)
    calls = []
    curves = attnlab.train(out=tmp_path / "py", progress=lambda *event: calls.append(event), **config)
    assert calls, "the progress callback was never called"
    args = [a for k, v in config.items() for a in ("--" + k.replace("_", "-"), v)]
    code, err = binary(studies_dir, "train", *args, "--out", tmp_path / "cli")
    assert code == 0, err
    pd.testing.assert_frame_equal(curves, pd.read_csv(tmp_path / "cli" / "train.csv"))
    assert set(curves["quantity"]) >= {"loss", "accuracy"}


def test_train_takes_the_recall_task_read_at_its_query(tmp_path):
    curves = attnlab.train(out=tmp_path / "py", model="micro", data="recall", readout="last", patch="8x8", steps=4,
                           batch=16, train_limit=256, validation=64, eval_every=2, threads=1)
    assert set(curves["N"]) == {16}
    with open(tmp_path / "py" / "train.json") as f:
        config = json.load(f)["config"]
    assert config["data"] == "recall"
    assert ":readout=last" in config["run"]


def test_errors_carry_the_command_lines_message(tmp_path, studies_dir):
    code, err = binary(studies_dir, "poly_frobenius", "--N", "0", "--out", tmp_path / "cli")
    assert code == 2
    with pytest.raises(ValueError) as bad:
        attnlab.run_study("poly_frobenius", out=tmp_path / "py", N=[0])
    assert err.strip() == f"poly_frobenius: error: {bad.value}"
    with pytest.raises(ValueError, match="unknown study 'poly_frobenious'"):
        attnlab.run_study("poly_frobenious")
    with pytest.raises(ValueError, match="unknown flag --trails"):
        attnlab.run_study("poly_frobenius", out=tmp_path / "py2", trails=3)
    with pytest.raises(ValueError, match="sofmax"):
        attnlab.activation("sofmax")
    with pytest.raises(ValueError):
        attnlab.pseudo_inverse(np.zeros((3, 3)))
    # Past validation, a failure: the training claims read a sweep CSV that is not one.
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "k_sweep.csv").write_text("study,quantity\nk_sweep,val_accuracy,extra\n")
    with pytest.raises(RuntimeError, match="k_sweep.csv"):
        attnlab.verify(ids=["poly.k_vs_N"], quick=True, out=tmp_path / "py3", training_results=tmp_path / "bad")


@pytest.mark.parametrize("rows, message", [
    (np.ones((2, 3), dtype=np.int64), "float64"),
    (np.ones((2, 3), dtype=np.float32), "float64"),
    (np.ones(3), "2-D"),
    (np.ones((3, 4))[:, ::2], "C-contiguous"),
    (np.asfortranarray(np.ones((3, 4))), "C-contiguous"),
    (np.array([[1.0, np.nan, 0.0]]), "not finite"),
    (np.array([[1.0, np.inf, 0.0]]), "not finite"),
    ([[1.0, 2.0]], "NumPy array"),
])
def test_bad_arrays_are_refused_with_a_message(rows, message):
    with pytest.raises(ValueError, match=message):
        attnlab.activation("softmax").value(rows)
    with pytest.raises(ValueError, match=message):
        attnlab.pseudo_inverse(rows)


def test_the_readmes_python_snippet_runs(tmp_path, monkeypatch):
    readme = open(os.path.join(os.path.dirname(__file__), "..", "..", "README.md")).read()
    section = readme[readme.index("## Use from Python"):]
    snippet = section[section.index("```python") + len("```python"):section.index("```", section.index("```python") + 9)]
    monkeypatch.chdir(tmp_path)  # the studies' default output folders go to runs/ here, not into the clone
    scope = {}
    exec(compile(snippet, "README.md (Use from Python)", "exec"), scope)
    assert scope["phi"].shape == (4, 16)
    assert list(scope["verdicts"]["claim_id"]) == ["poly.softmax_fro_bound"]
    assert not scope["curves"].empty


def test_the_module_exports_its_api_and_documents_it():
    api = {"activation", "activation_names", "study_names", "pseudo_inverse", "claims", "run_study", "verify", "train",
           "characterise"}
    assert set(attnlab.__all__) == api
    assert {name for name in dir(attnlab) if not name.startswith("_")} == api  # no os, pd, tempfile beside it
    for name in api:
        doc = getattr(attnlab, name).__doc__ or ""
        assert len(doc.strip()) > 40, name
        assert doc.splitlines()[0][:40] in pydoc.render_doc(getattr(attnlab, name), renderer=pydoc.plaintext), name
    act = attnlab.activation("softmax")
    for method in ("value", "jvp", "row_jacobian"):
        assert getattr(act, method).__doc__, method


def test_run_study_is_quiet_unless_verbose(tmp_path, capfd):
    flags = dict(quick=True, N=[8, 16], trials=3, activation="softmax", threads=1)
    table = attnlab.run_study("poly_frobenius", out=tmp_path / "quiet", **flags)
    out, err = capfd.readouterr()
    assert out == ""
    assert [line for line in err.splitlines() if ": warning: " not in line] == []  # warnings (no gnuplot) still show
    assert "exponent" in table.attrs["summary"]
    loud = attnlab.run_study("poly_frobenius", out=tmp_path / "verbose", verbose=True, **flags)
    out, err = capfd.readouterr()
    assert out == loud.attrs["summary"] == table.attrs["summary"]
    assert "poly_frobenius: wrote" in err
    attnlab.train(out=tmp_path / "train", model="micro", steps=2, batch=8, train_limit=64, validation=16, threads=1)
    out, err = capfd.readouterr()
    assert out == ""
    assert [line for line in err.splitlines() if ": warning: " not in line] == []


def test_formula_activations_equal_the_built_ins_they_spell():
    rows = np.random.default_rng(SEED).normal(size=(3, 6))
    np.testing.assert_allclose(attnlab.activation("rowexpr:exp(x)").value(rows), attnlab.activation("softmax").value(rows),
                               rtol=1e-12)
    np.testing.assert_allclose(attnlab.activation("expr:a*x^3/sqrt(N)", params={"a": 2.0}).value(rows),
                               2 * rows**3 / np.sqrt(6), rtol=1e-12)
    tangents = np.ones_like(rows)
    np.testing.assert_allclose(attnlab.activation("expr:sin(x)").jvp(rows, tangents), np.cos(rows), rtol=1e-12)
    with pytest.raises(ValueError, match="at position 3"):
        attnlab.activation("expr:x^^2")
    with pytest.raises(ValueError, match="'a' .* has no value"):
        attnlab.activation("expr:a*x")


def test_characterise_returns_the_card():
    table = attnlab.characterise(["expr:x^3/sqrt(N)"], quick=True, tasks="none")
    assert set(table.activation) == {"softmax", "expr:x^3/sqrt(N)"}
    assert "frob_exponent" in set(table.quantity)
    assert table.attrs["card"].startswith("# Activation card")
