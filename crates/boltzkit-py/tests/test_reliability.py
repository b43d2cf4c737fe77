"""Nothing aborted, nothing silent (issue 33): the library's size refusals raise MemoryError /
ValueError with the CLI's one line, and trouble is a warning the user can filter."""

from __future__ import annotations

import json
import re
import struct
import warnings

import numpy as np
import pytest

import boltzkit
from boltzkit import FSLL, FVBM, RBM


def _rbm_file(path, w, b, c):
    """A boltzkit RBM model file with these parameters (f32), written by hand."""
    tensors = {"W": np.asarray(w, np.float32), "b": np.asarray(b, np.float32)}
    tensors["c"] = np.asarray(c, np.float32)
    header, blobs, offset = {"__metadata__": {"format": "boltzkit/rbm/v1"}}, [], 0
    for name, t in tensors.items():
        raw = t.tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(t.shape),
            "data_offsets": [offset, offset + len(raw)],
        }
        blobs.append(raw)
        offset += len(raw)
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    path.write_bytes(struct.pack("<Q", len(text)) + text + b"".join(blobs))
    return path


@pytest.fixture
def fitted(binary_data):
    return RBM(n_hidden=4, n_epochs=1, random_state=0).fit(binary_data)


def test_sampling_more_than_fits_is_a_memory_error_not_an_abort(fitted, monkeypatch):
    with pytest.raises(
        MemoryError, match=r"sampling 1000000000000 chains .* needs about .* available"
    ):
        fitted.sample(10**12)
    # 10^8 chains of one step: refused with the figures (pinned: 4 GiB available), never the
    # 20 GB the kernel's OOM killer used to end
    monkeypatch.setenv("BOLTZKIT_MEMORY_AVAILABLE", str(4 << 30))
    with pytest.raises(
        MemoryError, match=r"needs about .* GiB of memory, but this machine has 4.0 GiB"
    ):
        fitted.sample(10**8, n_steps=1)
    assert fitted.sample(5, n_steps=1).shape == (5, 12)


def test_a_hidden_layer_that_cannot_exist_is_a_memory_error(binary_data):
    with pytest.raises(MemoryError, match=r"an RBM of 12 × 1000000000 units needs about"):
        RBM(n_hidden=10**9, n_epochs=1).fit(binary_data)


def test_fsll_on_31_variables_is_refused_with_the_cli_line(monkeypatch):
    monkeypatch.setenv("BOLTZKIT_MEMORY_AVAILABLE", str(40 << 30))
    X31 = np.array([[0] * 31, [1] * 31], dtype=np.uint8)
    with pytest.raises(MemoryError) as e:
        FSLL().fit(X31)
    assert str(e.value) == (
        "an FSLL fit on 31 variables needs about 48.0 GiB of memory, but this machine has "
        "40.0 GiB available; reduce the size"
    )


def test_thread_counts_are_bounded_not_a_hang(binary_data):
    with pytest.raises(ValueError, match=r"`n_jobs`: 100000 threads asked for, at most"):
        RBM(n_hidden=2, n_epochs=1, n_jobs=100000).fit(binary_data)


def test_absurd_steps_are_refused_up_front(fitted, binary_data):
    with pytest.raises(MemoryError, match="annealing schedule of 1000000000000 steps"):
        fitted.log_likelihood(binary_data, method="ais", ais_steps=10**12)
    # little memory, but more than a year of work: refused with the estimate
    with pytest.raises(ValueError, match=r"operations \(.* years at 1e10 per second\)"):
        fitted.sample(10_000, n_steps=10**12)


def test_an_mple_that_does_not_exist_warns_and_is_not_converged():
    # x1 copies x0: the coupling runs off to infinity, no maximizer exists
    rng = np.random.default_rng(1)
    x0 = rng.integers(0, 2, 200, dtype=np.uint8)
    X = np.ascontiguousarray(np.stack([x0, x0, rng.integers(0, 2, 200, dtype=np.uint8)], 1))
    with pytest.warns(boltzkit.MpleExistenceWarning):
        model = FVBM().fit(X)
    assert model.mple_exists_ is False
    assert not model.stop_reason_.startswith("converged"), model.stop_reason_
    assert "does not exist" in model.stop_reason_
    with pytest.warns(boltzkit.MpleExistenceWarning, match="standard errors"):
        model.wald_test()


def test_a_budget_stop_warns(binary_data):
    with pytest.warns(boltzkit.ConvergenceWarning, match="iteration budget"):
        FVBM(algo="bslm", max_iter=1).fit(binary_data)


def test_divergence_warns_and_says_so(binary_data):
    with pytest.warns(boltzkit.DivergenceWarning, match="diverged"):
        model = RBM(n_hidden=4, n_epochs=20, learning_rate=1e8, random_state=0).fit(binary_data)
    assert model.stop_reason_.startswith("diverged")


def test_the_divergence_watch_keeps_the_best_epoch():
    # the CLI test's run (3×3 bars and stripes as `gen bars-stripes` writes it, PCD at rate
    # 1 in batches of 4, the parameter guard out of the way): it learns, then the watch stops
    # it, says which epoch's model it kept, and that model is the same seeded run's for that
    # many epochs
    rows = [[(m >> (i // 3)) & 1 for i in range(9)] for m in range(8)]
    rows += [[(m >> (i % 3)) & 1 for i in range(9)] for m in range(1, 7)]
    X = np.array(rows, dtype=np.uint8)
    settings = dict(n_hidden=8, batch_size=4, learning_rate=1.0, algo="pcd-1")
    settings.update(max_abs_param=1e30, random_state=3)
    with pytest.warns(boltzkit.DivergenceWarning, match="pseudo-likelihood") as seen:
        model = RBM(n_epochs=300, **settings).fit(X)
    assert model.stop_reason_.startswith("diverged"), model.stop_reason_
    kept = int(re.search(r"kept the model of epoch (\d+), its best", str(seen[0].message))[1])
    assert kept >= 1, model.stop_reason_
    twin = RBM(n_epochs=kept, divergence_tol=0.0, **settings).fit(X)
    assert twin.stop_reason_.startswith("all"), twin.stop_reason_
    np.testing.assert_array_equal(model.components_, twin.components_)
    np.testing.assert_array_equal(model.intercept_visible_, twin.intercept_visible_)
    np.testing.assert_array_equal(model.intercept_hidden_, twin.intercept_hidden_)
    with warnings.catch_warnings():
        warnings.simplefilter("error", boltzkit.DivergenceWarning)
        healthy = RBM(n_hidden=4, batch_size=0, learning_rate=0.2, n_epochs=30, random_state=1)
        assert healthy.fit(X).stop_reason_.startswith("all"), healthy.stop_reason_
    with pytest.raises(ValueError, match="divergence_tol"):
        RBM(n_epochs=1, divergence_tol=-1.0).fit(X)


def test_a_wide_bracket_and_the_ais_fallback_warn(tmp_path):
    rng = np.random.default_rng(3)
    w = rng.normal(0, 1.5, (40, 40))
    path = _rbm_file(tmp_path / "big.safetensors", w, np.zeros(40), np.zeros(40))
    model = boltzkit.load(path)
    X = np.ascontiguousarray(rng.integers(0, 2, (20, 40), dtype=np.uint8))
    with pytest.warns(boltzkit.BracketWarning, match=r"^(wide|inverted)"):
        model.log_likelihood(X, method="bracket", ais_steps=5, ais_chains=10)
    with pytest.warns(boltzkit.AisFallbackWarning, match="fell back to forward AIS"):
        model.score(X[:2])
    assert "AIS" in type(model).score.__doc__


def test_every_warning_is_a_boltzkit_warning_a_user_can_filter(binary_data):
    for cat in (
        boltzkit.MpleExistenceWarning,
        boltzkit.ConvergenceWarning,
        boltzkit.DivergenceWarning,
        boltzkit.BracketWarning,
        boltzkit.AisFallbackWarning,
    ):
        assert issubclass(cat, boltzkit.BoltzkitWarning)
    with warnings.catch_warnings():
        warnings.simplefilter("error", boltzkit.BoltzkitWarning)
        with pytest.raises(boltzkit.ConvergenceWarning):
            FVBM(algo="bslm", max_iter=1).fit(binary_data)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", boltzkit.BoltzkitWarning)
        with warnings.catch_warnings(record=True) as seen:
            warnings.simplefilter("always")
            warnings.filterwarnings("ignore", category=boltzkit.BoltzkitWarning)
            FVBM(algo="bslm", max_iter=1).fit(binary_data)
        assert not seen


def test_an_infinite_parameter_bound_fits_saves_and_loads(binary_data, tmp_path):
    # max_abs_param=inf checks finiteness only: sent as the schema's "inf", recorded as null
    # in the model file, read back as inf (and fits again)
    model = RBM(n_hidden=4, n_epochs=2, max_abs_param=float("inf"), random_state=0)
    assert model.fit(binary_data).stop_reason_.startswith("all"), model.stop_reason_
    path = tmp_path / "m.safetensors"
    model.save(path)
    assert json.loads(boltzkit.load(path).model_.metadata["settings"])["max_abs_param"] is None
    back = boltzkit.load(path)
    assert back.max_abs_param == float("inf")
    assert back.get_params() == model.get_params()
    assert back.fit(binary_data).stop_reason_.startswith("all")


def test_unwritable_and_non_regular_outputs_are_refused_and_left_as_they_were(fitted, tmp_path):
    # the CLI's unwritable_outputs_are_refused_before_any_work and
    # devices_and_fifos_are_refused_and_stay_what_they_were, through save()
    import os
    import stat

    before = sorted(os.listdir(tmp_path))
    with pytest.raises(OSError, match=r"nodir does not exist; create it first"):
        fitted.save(tmp_path / "nodir" / "m.safetensors")
    with pytest.raises(OSError, match=r"\.safetensors: .*too long.*choose a shorter name"):
        fitted.save(tmp_path / ("m" * 250 + ".safetensors"))
    null = tmp_path / "null.safetensors"
    null.symlink_to("/dev/null")
    with pytest.raises(OSError, match=r"is a character device, not a regular file"):
        fitted.save(null)
    pipe = tmp_path / "pipe.safetensors"
    os.mkfifo(pipe)
    with pytest.raises(OSError, match=r"is a FIFO \(named pipe\), not a regular file"):
        fitted.save(pipe)
    assert stat.S_ISFIFO(os.stat(pipe).st_mode)
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode) and null.is_symlink()
    assert sorted(os.listdir(tmp_path)) == sorted(before + [null.name, pipe.name])
    # a valid 252-byte name: written, no temporary left beside it
    name = "m" * 240 + ".safetensors"
    fitted.save(tmp_path / name)
    assert sorted(os.listdir(tmp_path)) == sorted(before + [null.name, pipe.name, name])


def test_readers_read_or_name_what_they_found(tmp_path):
    # the CLI's readers_read_or_name_what_they_found, through read_dataset
    import gzip

    def write(name, data):
        (tmp_path / name).write_bytes(data)
        return tmp_path / name

    for name, data in [
        ("bom.csv", b"\xef\xbb\xbf0,1,0\n1,0,1\n"),
        ("space.csv", b"0 1 0\n1 0 1\n"),
        ("mac.csv", b"0,1,0\r1,0,1\r"),
    ]:
        assert boltzkit.read_dataset(write(name, data)).tolist() == [[0, 1, 0], [1, 0, 1]]
    utf16 = b"\xff\xfe" + "0,1,0\n1,0,1\n".encode("utf-16-le")
    for name, data, says in [
        ("u16.csv", utf16, r"u16.csv: .*UTF-16 little-endian.*save the file as UTF-8"),
        ("twice.csv.gz", gzip.compress(gzip.compress(b"0,1\n1,0\n")), r"compressed twice"),
        ("mixed.csv", b"0,1\n1;0\n", r"mixed.csv:2: column 1: .*holds ';'.*separator is ','"),
    ]:
        with pytest.raises(ValueError, match=says):
            boltzkit.read_dataset(write(name, data))


def test_a_corrupted_checkpoint_is_refused_with_its_path(cli, tmp_path):
    # the CLI's a_corrupted_checkpoint_is_refused_with_its_path, through load()
    import subprocess

    data = tmp_path / "x.csv"
    data.write_text("0,1,0\n1,0,1\n1,1,0\n0,0,1\n")
    ck = tmp_path / "ck.safetensors"
    fit = [cli, "rbm", "fit", "--data", data, "--hidden", "2", "--epochs", "2", "-q"]
    fit += ["--eval-every", "1", "--seed", "1", "-o", tmp_path / "m.safetensors"]
    subprocess.run([*map(str, fit), "--checkpoint", str(ck)], check=True)
    assert boltzkit.load(ck).n_hidden == 2
    raw = bytearray(ck.read_bytes())
    raw[-5] ^= 0x10
    ck.write_bytes(bytes(raw))
    with pytest.raises(ValueError, match=r"ck.safetensors: .*no longer matches the checksum"):
        boltzkit.load(ck)


def test_a_transposed_or_misshapen_w_is_refused_naming_the_file(tmp_path, binary_data):
    # the CLI's model_files_and_widths_name_the_file_at_fault, through load() and fit(init=)
    wt = _rbm_file(tmp_path / "wt.safetensors", np.zeros((2, 12)), np.zeros(12), np.zeros(2))
    says = r"wt.safetensors: .*W is stored transposed; boltzkit's W is n_visible × n_hidden"
    with pytest.raises(ValueError, match=says):
        boltzkit.load(wt)
    with pytest.raises(ValueError, match=says):
        RBM(n_hidden=2, n_epochs=1).fit(binary_data, init=wt)
    cube = _rbm_file(tmp_path / "w3.safetensors", np.zeros((12, 2, 1)), np.zeros(12), np.zeros(2))
    with pytest.raises(ValueError, match=r"w3.safetensors: .*`W` should be 2-D"):
        boltzkit.load(cube)
    short = _rbm_file(tmp_path / "b.safetensors", np.zeros((12, 2)), np.zeros(11), np.zeros(2))
    with pytest.raises(ValueError, match=r"b.safetensors: .*`b` should have shape \[12\]"):
        boltzkit.load(short)


def _two_modes(tmp_path):
    """The CLI test's two modes behind a barrier (reliability_solvers.rs): 16 units all off or
    all on, the all-on mode e⁶ times heavier; 50 rows, 25 near each mode."""
    n, beta, delta = 16, 4.0, 6.0
    path = _rbm_file(
        tmp_path / "modes.safetensors",
        np.full((n, 1), 2 * beta),
        np.full(n, -beta),
        [delta - n * beta],
    )
    r, j = np.arange(50)[:, None], np.arange(n)[None, :]
    X = (r < 25).astype(np.uint8) ^ ((r * 7 + j * 3) % 20 == 0).astype(np.uint8)
    return boltzkit.load(path), np.ascontiguousarray(X)


def test_an_inversion_that_persists_warns_not_mixing_not_more_steps(tmp_path):
    # RAISE stays about 2 nats above the exact figure as the steps double, forward AIS agrees
    # with it: the warning says the chain is not mixing and what helps, never "more steps"
    model, X = _two_modes(tmp_path)
    exact = model.log_likelihood(X, method="exact").value
    for steps in (400, 800):
        with pytest.warns(boltzkit.BracketWarning) as caught:
            b = model.log_likelihood(X, method="bracket", ais_steps=steps, random_state=1)
        assert b.lower.value - exact > 1.0, (steps, b, exact)
        assert abs(b.upper.value - exact) < 0.3 + 4 * b.upper.stderr, (steps, b, exact)
        advice = str(caught[0].message)
        assert advice.startswith("inverted"), advice
        for says in ("not mixing", "method exact", "more chains or a tempered transition"):
            assert says in advice, advice
        assert "more steps needed" not in advice, advice
