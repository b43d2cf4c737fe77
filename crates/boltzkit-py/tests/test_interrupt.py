"""Ctrl-C during ``fit``: KeyboardInterrupt within a second, the last good model kept."""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
import time

import pytest

CHILD = textwrap.dedent(
    """
    import sys, time
    import numpy as np
    import boltzkit

    X = (np.random.default_rng(0).random((4000, 200)) < 0.3).astype(np.uint8)
    started = []

    def cb(info):
        if not started:
            started.append(1)
            print("started", flush=True)

    est = {kind}
    try:
        est.fit(X)
        print("finished", flush=True)
    except KeyboardInterrupt:
        t = time.monotonic()
        kept = est.sample(2, n_steps=3, random_state=0).shape == (2, 200)
        print("interrupted", t, est.stop_reason_, kept, flush=True)
    """
)

KINDS = {
    "rbm": "boltzkit.RBM(n_hidden=100, n_epochs=100000, batch_size=10, callback=cb, "
    "random_state=0)",
    "frank-wolfe": "boltzkit.FrankWolfeRBM(max_units=100000, n_chains=500, eval_every=0, "
    "callback=cb, random_state=0)",
    "fvbm-pcd": "boltzkit.FVBM(algo='pcd', n_updates=10**9, callback=cb, random_state=0)",
}


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_ctrl_c_keeps_the_last_good_model(kind):
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD.format(kind=KINDS[kind])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout.readline().strip() == "started"
        time.sleep(1.0)  # well inside the run
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=30)
    finally:
        child.kill()
    assert child.returncode == 0, err
    words = out.split()
    assert words[0] == "interrupted", out + err
    assert float(words[1]) - sent < 1.0, f"took {float(words[1]) - sent:.2f} s"
    assert "interrupted after" in out and out.strip().endswith("True")
