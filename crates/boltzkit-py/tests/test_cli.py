"""The CLI and the package agree: a CLI model file loads in Python and is written back bit
for bit, a Python model file is read by the CLI, and a fit with the same seed and settings
gives the CLI's model file byte for byte (``save(path, data_file=...)`` records the data
file as the CLI's ``--data`` does)."""

from __future__ import annotations

import json
import subprocess

import numpy as np

import boltzkit
from conftest import assert_same_file


def run(cli, *args):
    out = subprocess.run([cli, *map(str, args)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_rbm_fit_matches_the_cli_bit_for_bit(cli, binary_data, tmp_path):
    data = tmp_path / "x.npy"
    np.save(data, binary_data)
    for algo, extra in [("pcd-1", []), ("csdcp-3-2", []), ("pt-3", [])]:
        out = tmp_path / f"{algo}.safetensors"
        run(
            cli,
            "rbm",
            "fit",
            "--data",
            data,
            "--algo",
            algo,
            "--hidden",
            5,
            "--epochs",
            7,
            "--batch-size",
            50,
            "--lr",
            0.05,
            "--seed",
            42,
            "-q",
            "-o",
            out,
            *extra,
        )
        py = boltzkit.RBM(
            n_hidden=5, algo=algo, n_epochs=7, batch_size=50, learning_rate=0.05, random_state=42
        ).fit(binary_data)
        mine = tmp_path / f"{algo}-py.safetensors"
        py.save(mine, data_file=data)
        assert_same_file(out, mine)
        # without the data file, the only difference is its two entries
        bare = tmp_path / f"{algo}-bare.safetensors"
        py.save(bare)
        meta = dict(boltzkit.load(out).metadata_)
        del meta["data_file"], meta["data_sha256"]
        assert boltzkit.load(bare).metadata_ == meta


def test_fvbm_and_fsll_fits_match_the_cli(cli, binary_data, tmp_path):
    data = tmp_path / "x.npy"
    np.save(data, binary_data)
    for algo in ("newton", "bslm", "pcd"):
        out = tmp_path / f"{algo}.safetensors"
        run(
            cli,
            "fvbm",
            "fit",
            "--data",
            data,
            "--algo",
            algo,
            "--updates",
            300,
            "--seed",
            8,
            "-q",
            "-o",
            out,
        )
        py = boltzkit.FVBM(algo=algo, n_updates=300, random_state=8).fit(binary_data)
        mine = tmp_path / f"{algo}-py.safetensors"
        py.save(mine, data_file=data)
        assert_same_file(out, mine)
    out = tmp_path / "fsll.safetensors"
    run(cli, "fsll", "fit", "--data", data, "-q", "-o", out)
    py = boltzkit.FSLL().fit(binary_data)
    back = boltzkit.load(out)
    assert py.basis_.tobytes() == back.basis_.tobytes()
    assert py.theta_.tobytes() == back.theta_.tobytes()
    # FSLL files differ in `record`, the CLI's run figures (not computed by a Python fit)
    mine = tmp_path / "fsll-py.safetensors"
    py.save(mine, data_file=data)
    cli_meta, py_meta = dict(back.metadata_), dict(boltzkit.load(mine).metadata_)
    assert cli_meta.pop("record") != py_meta.pop("record")
    assert cli_meta == py_meta


def test_cli_file_to_python_and_back(cli, binary_data, tmp_path):
    data = tmp_path / "x.npy"
    np.save(data, binary_data)
    files = {
        "rbm": ["rbm", "fit", "--data", data, "--hidden", 4, "--epochs", 3, "--seed", 1],
        "centered": [
            "rbm",
            "fit",
            "--data",
            data,
            "--algo",
            "cg-1",
            "--hidden",
            4,
            "--epochs",
            3,
            "--seed",
            1,
        ],
        "fw": [
            "rbm",
            "fit",
            "--data",
            data,
            "--algo",
            "frank-wolfe",
            "--max-units",
            3,
            "--chains",
            100,
            "--seed",
            1,
        ],
        "fvbm": ["fvbm", "fit", "--data", data],
        "fsll": ["fsll", "fit", "--data", data],
    }
    for name, args in files.items():
        src = tmp_path / f"{name}.safetensors"
        run(cli, *args, "-q", "-o", src)
        est = boltzkit.load(src)
        dst = tmp_path / f"{name}-py.safetensors"
        est.save(dst)
        assert_same_file(src, dst)
        again = tmp_path / f"{name}-pickled.safetensors"
        import pickle

        pickle.loads(pickle.dumps(est)).save(again)
        assert_same_file(src, again)


def test_python_file_is_read_by_the_cli(cli, binary_data, tmp_path):
    data = tmp_path / "x.npy"
    np.save(data, binary_data)
    rbm = boltzkit.RBM(n_hidden=4, n_epochs=5, random_state=0).fit(binary_data)
    path = tmp_path / "py.safetensors"
    rbm.save(path)
    out = json.loads(
        run(
            cli, "rbm", "eval", "--model", path, "--data", data, "--method", "exact", "--json", "-q"
        )
    )
    ll = next(v for k, v in out.items() if "log_likelihood" in k and isinstance(v, float))
    assert abs(ll - rbm.score(binary_data)) < 1e-9
    fv = boltzkit.FVBM().fit(binary_data)
    fv.save(tmp_path / "f.safetensors")
    run(cli, "fvbm", "tests", "--model", tmp_path / "f.safetensors", "--data", data, "-q")


def test_frank_wolfe_fit_matches_the_cli(cli, binary_data, tmp_path):
    data = tmp_path / "x.npy"
    np.save(data, binary_data)
    out = tmp_path / "fw.safetensors"
    run(
        cli,
        "rbm",
        "fit",
        "--algo",
        "frank-wolfe",
        "--data",
        data,
        "--max-units",
        4,
        "--chains",
        100,
        "--seed",
        4,
        "-q",
        "-o",
        out,
    )
    py = boltzkit.FrankWolfeRBM(max_units=4, n_chains=100, random_state=4).fit(binary_data)
    back = boltzkit.load(out)
    assert isinstance(back, boltzkit.FrankWolfeRBM)
    mine = tmp_path / "fw-py.safetensors"
    py.save(mine, data_file=data)
    assert_same_file(out, mine)
    # grown on from the file, as `--model FILE`: the same bytes, the path recorded alike
    grown = tmp_path / "fw-grown.safetensors"
    args = ["--data", data, "--max-units", 6, "--chains", 100, "--seed", 5, "-q"]
    run(cli, "rbm", "fit", "--algo", "frank-wolfe", "--model", out, *args, "-o", grown)
    py = boltzkit.FrankWolfeRBM(max_units=6, n_chains=100, random_state=5)
    py.fit(binary_data, init=out).save(mine, data_file=data)
    assert_same_file(grown, mine)
    assert json.loads(py.metadata_["settings"])["init_model"] == str(out)


def test_binarized_fit_writes_the_cli_file(cli, tmp_path):
    """Grayscale data thresholded by the CLI's reader (--binarize threshold:127) and by the
    estimator (binarize=127): the same file, `binarize` recorded alike."""
    gray = np.random.default_rng(3).integers(0, 256, size=(200, 10), dtype=np.uint8)
    data = tmp_path / "g.npy"
    np.save(data, gray)
    out = tmp_path / "cli.safetensors"
    run(
        cli,
        "rbm",
        "fit",
        "--data",
        data,
        "--binarize",
        "threshold:127",
        "--algo",
        "cd-1",
        "--hidden",
        4,
        "--epochs",
        3,
        "--batch-size",
        20,
        "--lr",
        0.02,
        "--seed",
        5,
        "-q",
        "-o",
        out,
    )
    py = boltzkit.RBM(
        n_hidden=4,
        algo="cd-1",
        n_epochs=3,
        batch_size=20,
        learning_rate=0.02,
        binarize=127,
        random_state=5,
    ).fit(gray)
    mine = tmp_path / "py.safetensors"
    py.save(mine, data_file=data)
    assert_same_file(out, mine)
    assert '"binarize":"Threshold(127.0)"' in py.metadata_["settings"]


def test_fit_from_a_model_is_the_cli_warm_start(cli, binary_data, tmp_path):
    """`fit(X, init=model)` and `rbm fit --model FILE` are the same library call: the same
    bits. From the same file (`init=PATH`) the model files are the same bytes, the path
    recorded alike (`init_model`); from a model in memory they differ only there."""
    data = tmp_path / "x.npy"
    np.save(data, binary_data)
    first = tmp_path / "first.safetensors"
    common = ["--algo", "pcd-1", "--epochs", 3, "--batch-size", 50, "--lr", 0.05, "-q"]
    run(cli, "rbm", "fit", "--data", data, "--hidden", 4, "--seed", 1, "-o", first, *common)
    out = tmp_path / "cli.safetensors"
    run(cli, "rbm", "fit", "--data", data, "--model", first, "--seed", 9, "-o", out, *common)
    settings = dict(algo="pcd-1", n_epochs=3, batch_size=50, learning_rate=0.05)
    start = boltzkit.RBM(n_hidden=4, random_state=1, **settings).fit(binary_data)
    for init, recorded in [(first, str(first)), (start, "(a model in memory)")]:
        py = boltzkit.RBM(n_hidden=4, random_state=9, **settings).fit(binary_data, init=init)
        mine = tmp_path / "py.safetensors"
        py.save(mine, data_file=data)
        if init is first:
            assert_same_file(out, mine)
        cli_meta, py_meta = boltzkit.load(out).metadata_, boltzkit.load(mine).metadata_
        cli_settings = json.loads(cli_meta.pop("settings"))
        py_settings = json.loads(py_meta.pop("settings"))
        assert cli_settings.pop("init_model") == str(first)
        assert py_settings.pop("init_model") == recorded
        assert (cli_meta, cli_settings) == (py_meta, py_settings)
        assert bytes(py.model_.to_bytes()) != b""
        for a, b in zip(boltzkit.load(out).model_.rbm_params(), py.model_.rbm_params()):
            assert a.tobytes() == b.tobytes()
