"""The Python examples and the README's quick start run, shortened."""

from __future__ import annotations

import importlib.util
import re

import numpy as np

from conftest import REPO


def load_example(name):
    path = REPO / "examples" / "python" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_fvbm_standard_errors_example(capsys):
    model, table, covered = load_example("fvbm_standard_errors").main(
        ["--vars", "5", "--samples", "3000"]
    )
    assert model.mple_exists_ is True and len(table) == 15
    assert covered >= 0.8
    out = capsys.readouterr().out
    assert "MPLE exists False" in out and "p_value" in out


def test_mnist_example_shortened(data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("BOLTZKIT_DATA", str(tmp_path / "cache"))
    rbm, ll = load_example("mnist_rbm").main(
        [
            "--mirror",
            str(data_dir),
            "--epochs",
            "2",
            "--rows",
            "1000",
            "--hidden",
            "20",
            "--eval-every",
            "1",
            "--ais-steps",
            "100",
            "--out",
            str(tmp_path),
        ]
    )
    assert rbm.components_.shape == (20, 784)
    assert -400 < ll.value < -100 and ll.lower.method == "ais"
    assert (tmp_path / "rbm.safetensors").exists()
    for png in ("filters.png", "samples.png", "learning_curve.png"):
        assert (tmp_path / png).stat().st_size > 1000


def readme_python_block(heading):
    """The first ``python`` code block after ``heading`` (a whole line) in the README."""
    readme = (REPO / "README.md").read_text()
    section = readme.split(f"\n{heading}\n", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)


def run_block(code):
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)
    return namespace


def test_readme_python_quick_start_runs_as_written(data_dir, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("BOLTZKIT_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("BOLTZKIT_DATA_MIRROR", str(data_dir))
    code = readme_python_block("### Python quick start")
    assert len(code.strip().splitlines()) == 5, code
    ns = run_block(code)
    assert ns["ds"]["train"].shape == (16181, 16)
    assert ns["rbm"].components_.shape == (16, 16)
    out = capsys.readouterr().out
    assert "p_value" in out


def test_readme_python_section_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns = run_block(readme_python_block("## Python"))
    assert isinstance(ns["rbm"].components_, np.ndarray)
