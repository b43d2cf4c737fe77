"""A panic inside the library (on a rayon worker) reaches Python as a ``RuntimeError`` on
both paths the binding runs work through, with 1 and 2 workers, instead of hanging the
caller or raising pyo3's ``PanicException`` (a ``BaseException``). Each call runs in a
subprocess under a timeout, so a hang fails the test instead of stopping the suite."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(
    """
    from boltzkit import _native
    try:
        _native._panic_in_worker({path!r}, n_jobs={n_jobs})
    except RuntimeError as e:
        print("RuntimeError:", e, flush=True)
    """
)


@pytest.mark.parametrize("path", ["fit", "released"])
@pytest.mark.parametrize("n_jobs", [1, 2])
def test_panic_in_worker_raises_runtime_error(path, n_jobs):
    out = subprocess.run(
        [sys.executable, "-c", CHILD.format(path=path, n_jobs=n_jobs)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("RuntimeError: internal error in boltzkit"), out.stdout
    assert "test panic on item 37" in out.stdout


def test_panic_hook_rejects_unknown_path():
    from boltzkit import _native

    with pytest.raises(ValueError, match="path must be"):
        _native._panic_in_worker("nowhere")
