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


def test_readme_python_quick_start_runs_as_written(tmp_path, monkeypatch):
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1)
    monkeypatch.chdir(tmp_path)
    namespace = {}
    exec(compile(code, "README.md", "exec"), namespace)
    assert isinstance(namespace["rbm"].components_, np.ndarray)
