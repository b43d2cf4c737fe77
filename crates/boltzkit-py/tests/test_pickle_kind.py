"""A pickled model comes back as the same kind with the same bits (issue 35)."""

from __future__ import annotations

import pickle

import numpy as np

import boltzkit


def test_a_pickled_frank_wolfe_rbm_keeps_its_kind_and_bits(binary_data):
    fw = boltzkit.FrankWolfeRBM(max_units=3, n_chains=50, random_state=1).fit(binary_data)
    back = pickle.loads(pickle.dumps(fw))
    assert type(back) is boltzkit.FrankWolfeRBM
    assert back.model_.kind == fw.model_.kind == "frank-wolfe"
    assert bytes(back.model_.to_bytes()) == bytes(fw.model_.to_bytes())
    assert back.score(binary_data) == fw.score(binary_data)
    assert np.array_equal(back.components_, fw.components_)


def test_every_kind_pickles_to_the_same_scores(binary_data):
    for est in [
        boltzkit.RBM(n_hidden=3, n_epochs=2, random_state=1),
        boltzkit.FVBM(algo="newton"),
        boltzkit.FSLL(),
    ]:
        est.fit(binary_data[:, :6])
        back = pickle.loads(pickle.dumps(est))
        assert type(back) is type(est) and back.model_.kind == est.model_.kind
        assert back.score(binary_data[:, :6]) == est.score(binary_data[:, :6])
