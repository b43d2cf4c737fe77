"""scikit-learn's input and output conventions (issue 35): feature names and DataFrames in and
out, scipy sparse input equal to dense bit for bit, warm starts, and the kind and bits of every
estimator after pickling or saving and loading."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest

import boltzkit

pytest.importorskip("sklearn")


def small_rbm(**kw):
    return boltzkit.RBM(n_hidden=3, n_epochs=2, batch_size=50, random_state=0, **kw)


def test_dataframes_in_and_out(binary_data):
    pd = pytest.importorskip("pandas")
    cols = [f"px{i}" for i in range(binary_data.shape[1])]
    df = pd.DataFrame(binary_data, columns=cols, index=np.arange(300) * 2)
    rbm = small_rbm().set_output(transform="pandas")
    out = rbm.fit(df).transform(df)
    assert list(rbm.feature_names_in_) == cols and rbm.n_features_in_ == len(cols)
    assert list(rbm.get_feature_names_out()) == ["rbm0", "rbm1", "rbm2"]
    assert isinstance(out, pd.DataFrame) and list(out.columns) == ["rbm0", "rbm1", "rbm2"]
    assert out.index.equals(df.index)
    # the same bits as a fit on the array
    plain = small_rbm().fit(binary_data)
    assert np.array_equal(out.to_numpy(), plain.transform(binary_data))
    assert bytes(rbm.model_.to_bytes()) == bytes(plain.model_.to_bytes())
    assert not hasattr(plain, "feature_names_in_")
    assert isinstance(small_rbm().set_output(transform="pandas").fit_transform(df), pd.DataFrame)
    # names checked as scikit-learn checks them
    with pytest.raises(ValueError, match="feature names"):
        rbm.transform(df.rename(columns={"px0": "other"}))
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        rbm.score_samples(binary_data)
    # every estimator records the names
    for est in (boltzkit.FVBM(), boltzkit.FSLL(), boltzkit.FrankWolfeRBM(max_units=2, n_chains=50)):
        est.fit(df.iloc[:, :6])
        assert list(est.feature_names_in_) == cols[:6], type(est).__name__
    codes = pd.DataFrame(np.asarray(df.iloc[:40, :4]) * 2, columns=cols[:4])
    potts = boltzkit.Potts(alphabet="-AB", max_iter=5).fit(codes)
    assert list(potts.feature_names_in_) == cols[:4]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no "X does not have valid feature names"
        assert potts.score_samples(codes).shape == (40,)
        for est in (rbm, potts):  # every scoring path of both
            est.score(codes if est is potts else df)
            est.log_likelihood(codes if est is potts else df)
    for call in (potts.score_samples, potts.generative_check):
        with pytest.raises(ValueError, match="feature names"):
            call(codes.rename(columns={"px0": "other"}))
    fw = boltzkit.FrankWolfeRBM(max_units=2, n_chains=50, random_state=0).fit(df)
    assert list(fw.get_feature_names_out()) == [f"frankwolferbm{i}" for i in range(fw.n_units_)]


def test_sparse_input_equals_dense_bit_for_bit(binary_data):
    sparse = pytest.importorskip("scipy.sparse")
    dense = small_rbm().fit(binary_data)
    gray = np.random.default_rng(2).random(binary_data.shape) * binary_data
    for fmt in ("csr", "csc", "coo"):
        X = sparse.csr_matrix(binary_data).asformat(fmt)
        est = small_rbm().fit(X)
        assert bytes(est.model_.to_bytes()) == bytes(dense.model_.to_bytes()), fmt
        assert np.array_equal(est.transform(X), dense.transform(binary_data))
        assert np.array_equal(est.score_samples(X), dense.score_samples(binary_data))
        assert np.array_equal(
            est.gibbs(X, random_state=1), dense.gibbs(binary_data, random_state=1)
        )
        assert bytes(small_rbm().partial_fit(X).model_.to_bytes()) == bytes(
            small_rbm().partial_fit(binary_data).model_.to_bytes()
        )
        # grayscale: thresholded alike ("auto": 0.5), explicit zeros and duplicates included
        assert np.array_equal(est.transform(sparse.csr_matrix(gray)), est.transform(gray))
    coo = sparse.coo_matrix(([0.3, 0.4, 0.0], ([0, 0, 1], [2, 2, 3])), shape=(2, 12))
    assert np.array_equal(dense.transform(coo), dense.transform(coo.toarray()))
    # (their files record timings: the parameters are compared)
    for est, names in ((boltzkit.FVBM(), ("coef_", "intercept_")), (boltzkit.FSLL(), ("theta_",))):
        est.fit(sparse.csr_matrix(binary_data[:, :6]))
        a = [getattr(est, n).tobytes() for n in names]
        assert a == [getattr(est.fit(binary_data[:, :6]), n).tobytes() for n in names]
    # a bad stored value is named by its row and column, as in a dense matrix
    bad = sparse.lil_matrix(binary_data.astype(float))
    bad[4, 7] = 2.0
    with pytest.raises(ValueError, match=r"X\[4, 7\] = 2.0: expected 0 or 1"):
        small_rbm(binarize=None).fit(bad.tocsr())
    bad[5, 1] = np.nan
    with pytest.raises(ValueError, match=r"X\[5, 1\] is nan"):
        small_rbm().fit(bad)
    with pytest.raises(ValueError, match="X has 5 features, but RBM is expecting 12"):
        dense.transform(sparse.csr_matrix(binary_data[:, :5]))


def test_auto_binarize_takes_0_1_data_as_they_are(binary_data):
    gray = binary_data * 0.9 + 0.05  # 0.05 and 0.95: thresholded at 0.5 to the same bits
    auto = small_rbm().fit(gray)
    assert bytes(auto.model_.to_bytes()) == bytes(
        small_rbm(binarize=0.5).fit(gray).model_.to_bytes()
    )
    assert np.array_equal(auto.components_, small_rbm().fit(binary_data).components_)
    assert '"binarize":"Threshold(0.5)"' in auto.metadata_["settings"]
    assert '"binarize":"None"' in small_rbm().fit(binary_data).metadata_["settings"]


def test_warm_start_and_init_continue_a_fit(binary_data, tmp_path):
    first = small_rbm().fit(binary_data)
    continued = small_rbm().fit(binary_data, init=first)
    warm = small_rbm(warm_start=True).fit(binary_data)
    assert bytes(warm.model_.to_bytes()) == bytes(first.model_.to_bytes())
    warm.fit(binary_data)  # the second fit starts from the first's model
    assert np.array_equal(warm.components_, continued.components_)
    assert not np.array_equal(warm.components_, first.components_)
    # without warm_start a second fit starts afresh
    cold = small_rbm().fit(binary_data).fit(binary_data)
    assert bytes(cold.model_.to_bytes()) == bytes(first.model_.to_bytes())
    # a NativeModel or a model file's path are starting models too
    first.save(tmp_path / "first.safetensors")
    for init in (first.model_, tmp_path / "first.safetensors", str(tmp_path / "first.safetensors")):
        again = small_rbm().fit(binary_data, init=init)
        assert np.array_equal(again.components_, continued.components_)
    with pytest.raises(ValueError, match="n_hidden=4 does not match the 3 hidden units"):
        boltzkit.RBM(n_hidden=4).fit(binary_data, init=first)
    with pytest.raises(TypeError, match="init must be a fitted boltzkit estimator"):
        small_rbm().fit(binary_data, init=3)
    with pytest.raises(boltzkit.NotFittedError):
        small_rbm().fit(binary_data, init=small_rbm())
    # Frank-Wolfe grows on from a standard RBM, as its --model
    fw = boltzkit.FrankWolfeRBM(max_units=5, n_chains=50, random_state=0)
    grown = fw.fit(binary_data, init=first)
    assert grown.n_units_ == 5
    # max_units counts every unit, as n_estimators of scikit-learn's warm-started ensembles
    warm_fw = boltzkit.FrankWolfeRBM(max_units=2, n_chains=50, random_state=0, warm_start=True)
    assert warm_fw.fit(binary_data).n_units_ == 2
    assert warm_fw.set_params(max_units=4).fit(binary_data).n_units_ == 4


def test_every_estimator_keeps_its_kind_and_bits(binary_data, tmp_path):
    """Pickled: the same class, model kind and model bytes, so the same scores. Saved and
    loaded: the same class, and the file written again is the same bytes (a standard
    Frank-Wolfe model is saved as the f32 RBM it equals, the CLI's file, which pickling
    does not round)."""
    X = binary_data[:, :6]
    codes = np.random.default_rng(0).integers(0, 3, size=(40, 4)).astype(np.uint8)
    for est, data in [
        (boltzkit.RBM(n_hidden=3, n_epochs=2, random_state=1), X),
        (boltzkit.FrankWolfeRBM(max_units=3, n_chains=50, random_state=1), X),
        (boltzkit.FrankWolfeRBM(max_units=3, n_chains=50, free_alpha=0.1, random_state=1), X),
        (boltzkit.FVBM(), X),
        (boltzkit.FSLL(), X),
        (boltzkit.Potts(alphabet="-AB", max_iter=5), codes),
    ]:
        est.fit(data)
        back = pickle.loads(pickle.dumps(est))
        assert type(back) is type(est) and back.model_.kind == est.model_.kind
        assert bytes(back.model_.to_bytes()) == bytes(est.model_.to_bytes())
        assert np.array_equal(back.score_samples(data), est.score_samples(data))
        path, again = tmp_path / "a.safetensors", tmp_path / "b.safetensors"
        est.save(path)
        loaded = boltzkit.load(path)
        assert type(loaded) is type(est), (type(loaded), type(est))
        loaded.save(again)
        assert path.read_bytes() == again.read_bytes(), type(est).__name__
        if est.model_.kind != "frank-wolfe":
            assert loaded.model_.kind == est.model_.kind
            assert np.array_equal(loaded.score_samples(data), est.score_samples(data))
