"""Ctrl-C during ``fit``: KeyboardInterrupt within a second, the last good model kept; during
a long estimate (AIS, RAISE, the bracket): KeyboardInterrupt within a second, no figure."""

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


def interrupt_child(code, after_s, timeout_s):
    """Runs ``code`` in a fresh interpreter, sends SIGINT ``after_s`` seconds after it prints
    ``started``; returns its stdout (after the ``started`` line) and the time of the signal."""
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout.readline().strip() == "started"
        time.sleep(after_s)
        sent = time.monotonic()
        child.send_signal(signal.SIGINT)
        out, err = child.communicate(timeout=timeout_s)
    finally:
        if child.poll() is None:  # a child that did not stop in time: end it, reap it
            child.kill()
            child.communicate()
    assert child.returncode == 0, err
    return out, sent


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_ctrl_c_keeps_the_last_good_model(kind):
    out, sent = interrupt_child(CHILD.format(kind=KINDS[kind]), after_s=1.0, timeout_s=30)
    words = out.split()
    assert words[0] == "interrupted", out
    assert float(words[1]) - sent < 1.0, f"took {float(words[1]) - sent:.2f} s"
    assert "interrupted after" in out and out.strip().endswith("True")


SCORING_CHILD = textwrap.dedent(
    """
    import time
    import numpy as np
    import boltzkit

    rng = np.random.default_rng(0)
    X = (rng.random((300, 400)) < 0.3).astype(np.uint8)
    rbm = boltzkit.RBM(n_hidden=300, n_epochs=1, random_state=0).fit(X)
    print("started", flush=True)
    try:
        out = {call}
        print("finished", out, flush=True)
    except KeyboardInterrupt:
        print("interrupted", time.monotonic(), flush=True)
    # the model answers again after the interrupt
    print("again", rbm.log_partition(method="ais", ais_chains=4, ais_steps=10).value, flush=True)
    """
)

# each runs for minutes on two cores (10^6 temperatures)
SCORING = {
    "score_samples-ais": "rbm.score_samples(X, method='ais', ais_steps=10**6)",
    "log_partition-ais": "rbm.log_partition(method='ais', ais_steps=10**6)",
    "log_likelihood-raise": "rbm.log_likelihood(X, method='raise', ais_steps=10**6)",
    "log_likelihood-bracket": "rbm.log_likelihood(X, method='bracket', ais_steps=10**6)",
}


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
@pytest.mark.parametrize("call", sorted(SCORING))
def test_ctrl_c_stops_a_long_estimate(call):
    out, sent = interrupt_child(SCORING_CHILD.format(call=SCORING[call]), after_s=1.5, timeout_s=60)
    lines = out.splitlines()
    words = lines[0].split()
    assert words[0] == "interrupted", out
    assert float(words[1]) - sent < 1.0, f"took {float(words[1]) - sent:.2f} s"
    assert lines[1].startswith("again "), out


FVBM_CHILD = textwrap.dedent(
    """
    import time
    import numpy as np
    import boltzkit

    # a random 60-unit FVBM's samples: a Newton step builds a 1,830² Hessian (seconds), and
    # the existence LP after one gradient-ascent step takes seconds too
    X = np.load({data!r})
    est = {kind}
    print("started", flush=True)
    try:
        est.fit(X)
        print("finished", est.stop_reason_, flush=True)
    except KeyboardInterrupt:
        t = time.monotonic()
        print("interrupted", t, est.stop_reason_, est.coef_.shape == (60, 60), flush=True)
    """
)

FVBM_KINDS = {
    "newton-step": "boltzkit.FVBM(algo='newton')",
    # the existence check polls the interrupt (the dense certificate's rows and columns; the
    # LP's slices on a worker thread the check leaves behind, since microlp looks at its
    # deadline only every 1,000 pivots)
    "existence-lp": "boltzkit.FVBM(algo='ga', max_iter=1)",
}


@pytest.fixture
def fvbm60(cli, tmp_path):
    path = tmp_path / "f60.npy"
    subprocess.run(
        [cli, "gen", "fvbm", "--vars", "60", "--samples", "3000", "--seed", "1", "-q", "-o"]
        + [str(path)],
        check=True,
    )
    return str(path)


@pytest.mark.skipif(sys.platform == "win32", reason="SIGINT is a POSIX signal")
@pytest.mark.parametrize("kind", FVBM_KINDS.values(), ids=FVBM_KINDS.keys())
def test_ctrl_c_inside_a_long_fvbm_step_keeps_the_last_good_model(kind, fvbm60):
    code = FVBM_CHILD.format(data=fvbm60, kind=kind)
    # 5 s: an interrupt honoured ends the child at once (and the xfail costs no more)
    out, sent = interrupt_child(code, after_s=1.0, timeout_s=5)
    words = out.split()
    assert words[0] == "interrupted", out
    assert float(words[1]) - sent < 1.0, f"took {float(words[1]) - sent:.2f} s"
    assert "interrupted after" in out and out.strip().endswith("True"), out
