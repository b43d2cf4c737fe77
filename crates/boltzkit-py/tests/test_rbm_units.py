"""RBMs with unit types other than 0/1 (``RBM(visible=, hidden=)``, issue 34): the same run
as ``boltzkit rbm fit --visible-units V --hidden-units H`` (the same model file byte for byte,
the same exact and AIS scores as ``rbm eval``), scores and features against brute force on a
model small enough to enumerate, files, pickles, warm starts and refusals."""

from __future__ import annotations

import itertools
import json
import pickle
import subprocess

import numpy as np
import pytest

import boltzkit
from conftest import assert_same_file


def run(cli, *args):
    out = subprocess.run([cli, *map(str, args)], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.fixture
def codes():
    """80 rows of 4 sites with 3 states (site 1 copies site 0 most of the time)."""
    rng = np.random.default_rng(3)
    x = rng.integers(0, 3, (80, 4)).astype(np.uint8)
    x[:, 1] = np.where(rng.random(80) < 0.8, x[:, 0], x[:, 1])
    return np.ascontiguousarray(x)


def test_categorical_drelu_fit_is_the_clis(cli, codes, tmp_path):
    data, weights = tmp_path / "codes.npy", tmp_path / "w.txt"
    np.save(data, codes)
    w = np.linspace(0.5, 1.5, len(codes))
    np.savetxt(weights, w)
    settings = dict(
        n_hidden=3, n_epochs=3, batch_size=20, learning_rate=0.05, algo="pcd-1", l1_squared=0.1
    )
    out = tmp_path / "cli.safetensors"
    run(
        cli,
        *f"rbm fit --data {data} --visible-units categorical --hidden-units drelu --hidden 3 "
        f"--epochs 3 --batch-size 20 --lr 0.05 --algo pcd-1 --l1-squared 0.1 "
        f"--weights {weights} --seed 5 -q -o {out}".split(),
    )
    rbm = boltzkit.RBM(visible="categorical", hidden="drelu", random_state=5, **settings)
    rbm.fit(codes, sample_weight=w)
    mine = tmp_path / "py.safetensors"
    rbm.save(mine, data_file=data)
    assert_same_file(out, mine)
    # the exact weighted score and an AIS score with the CLI's seed are `rbm eval`'s
    exact = json.loads(
        run(cli, "rbm", "eval", "--model", out, "--data", data, "--weights", weights, "--json")
    )
    assert exact["method"] == "exact"
    ll = rbm.model_.log_likelihood(codes, "exact", "{}", None, w)[0]["value"]
    assert ll == pytest.approx(exact["avg_log_likelihood"], rel=1e-12)
    ais = json.loads(
        run(
            cli,
            *f"rbm eval --model {out} --data {data} --method ais --ais-steps 300 "
            "--ais-chains 40 --seed 9 --json".split(),
        )
    )
    lp = rbm.score_samples(codes, method="ais", ais_chains=40, ais_steps=300, random_state=9)
    assert lp.mean() == pytest.approx(ais["avg_log_likelihood"], rel=1e-12)
    # the file loads back as the same estimator
    back = boltzkit.load(out)
    assert (back.visible, back.hidden, back.n_hidden, back.l1_squared) == (
        "categorical", "drelu", 3, 0.1,
    )  # fmt: skip
    assert back.n_states == [3, 3, 3, 3] and back.random_state == 5
    np.testing.assert_array_equal(back.score_samples(codes), rbm.score_samples(codes))


def test_gaussian_fit_is_the_clis_and_standardized(cli, tmp_path):
    rng = np.random.default_rng(1)
    x = rng.normal(size=(60, 3)) * [1.0, 5.0, 0.2] + [0.0, 10.0, -1.0]
    data = tmp_path / "x.npy"
    np.save(data, x)
    out = tmp_path / "cli.safetensors"
    run(
        cli,
        *f"rbm fit --data {data} --visible-units gaussian --hidden-units bernoulli --hidden 2 "
        f"--epochs 4 --batch-size 15 --lr 0.02 --seed 8 -q -o {out}".split(),
    )
    rbm = boltzkit.RBM(
        visible="gaussian", n_hidden=2, n_epochs=4, batch_size=15, learning_rate=0.02,
        random_state=8,
    ).fit(x)  # fmt: skip
    mine = tmp_path / "py.safetensors"
    rbm.save(mine, data_file=data)
    assert_same_file(out, mine)
    exact = json.loads(run(cli, "rbm", "eval", "--model", out, "--data", data, "--json"))
    assert rbm.score(x) == pytest.approx(exact["avg_log_likelihood"], rel=1e-12)
    v, h = rbm.sample(7, n_steps=5, random_state=2, return_hidden=True)
    assert v.shape == (7, 3) and v.dtype == np.float64 and h.shape == (7, 2)


def test_scores_and_features_are_brute_forces(codes):
    """A categorical × Bernoulli RBM of 3^4 visible and 2^2 hidden states: ln p(v) and
    E[h | v] from the energy ``-Σ fields·v - bias·h - vᵀWh`` summed over every state."""
    rbm = boltzkit.RBM(
        visible="categorical", n_hidden=2, n_epochs=5, batch_size=10, learning_rate=0.1,
        random_state=1,
    ).fit(codes)  # fmt: skip
    p = rbm.unit_params_
    W, f, c = p["W"].astype(float), p["v.fields"].astype(float), p["h.bias"].astype(float)

    def one_hot(row):
        z = np.zeros(12)
        z[[3 * i + k for i, k in enumerate(row)]] = 1.0
        return z

    hs = np.array(list(itertools.product([0, 1], repeat=2)), dtype=float)

    def log_marginal(row):
        v = one_hot(row)
        return np.logaddexp.reduce(f @ v + hs @ c + hs @ (W.T @ v))

    states = list(itertools.product(range(3), repeat=4))
    log_z = np.logaddexp.reduce([log_marginal(s) for s in states])
    want = np.array([log_marginal(r) for r in codes]) - log_z
    np.testing.assert_allclose(rbm.score_samples(codes), want, rtol=1e-9, atol=1e-9)
    assert rbm.log_partition().value == pytest.approx(log_z, rel=1e-8)  # f32 inputs
    probs = 1.0 / (1.0 + np.exp(-(c + np.array([one_hot(r) for r in codes]) @ W)))
    np.testing.assert_allclose(rbm.transform(codes), probs, rtol=1e-5, atol=1e-6)
    v = rbm.sample(5, n_steps=3, random_state=4)
    assert v.shape == (5, 4) and v.dtype == np.uint8 and v.max() <= 2
    assert rbm.gibbs(codes[:3], random_state=0).shape == (3, 4)


def test_pickles_warm_starts_and_partial_fits(codes, tmp_path):
    rbm = boltzkit.RBM(
        visible="categorical", hidden="relu", n_hidden=2, n_epochs=2, batch_size=20,
        random_state=3,
    ).fit(codes)  # fmt: skip
    again = pickle.loads(pickle.dumps(rbm))
    np.testing.assert_array_equal(again.score_samples(codes), rbm.score_samples(codes))
    before = rbm.unit_params_["W"].copy()
    rbm.partial_fit(codes)
    assert rbm.n_partial_fits_ == 1
    assert not np.array_equal(rbm.unit_params_["W"], before)
    warm = boltzkit.RBM(**again.get_params()).set_params(warm_start=True)
    warm.model_ = again.model_
    warm.fit(codes)
    assert warm.seed_ == 3 and not np.array_equal(warm.unit_params_["W"], before)
    path = tmp_path / "m.safetensors"
    rbm.save(path)
    from_file = boltzkit.RBM(**rbm.get_params()).fit(codes, init=path)
    assert from_file.unit_params_["W"].shape == (12, 2)


def test_refusals_name_the_setting(codes, binary_data):
    with pytest.raises(ValueError, match="l1_squared applies"):
        boltzkit.RBM(n_hidden=2, n_epochs=1, l1_squared=0.1).fit(binary_data)
    with pytest.raises(ValueError, match="sample_weight applies"):
        boltzkit.RBM(n_hidden=2, n_epochs=1).fit(binary_data, sample_weight=np.ones(300))
    with pytest.raises(ValueError, match="visible must be one of"):
        boltzkit.RBM(visible="potts").fit(codes)
    with pytest.raises(ValueError, match="n_states"):
        boltzkit.RBM(visible="categorical", n_states=2, n_hidden=2).fit(codes)
    with pytest.raises(ValueError, match="sample_weight must have shape"):
        boltzkit.RBM(visible="categorical", n_hidden=2).fit(codes, sample_weight=[1.0, 2.0])
    x = np.ones((5, 2))
    x[3, 1] = np.nan
    with pytest.raises(ValueError, match=r"X\[3, 1\]"):
        boltzkit.RBM(visible="gaussian", n_hidden=2).fit(x)
    with pytest.raises(ValueError, match="cd-k or pcd-k"):
        boltzkit.RBM(visible="categorical", n_hidden=2, algo="pt-3", n_epochs=1).fit(codes)
