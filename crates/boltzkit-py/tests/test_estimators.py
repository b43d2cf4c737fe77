"""Every estimator fits, scores, samples and round-trips (save → load, pickle); bad input
raises one clear ValueError and changes nothing; the thread count changes no bit."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import boltzkit
from conftest import assert_same_file


def small_estimators():
    return [
        boltzkit.RBM(n_hidden=4, n_epochs=10, batch_size=50, learning_rate=0.1, random_state=3),
        boltzkit.FrankWolfeRBM(max_units=3, n_chains=200, eval_every=0, random_state=3),
        boltzkit.FVBM(algo="newton"),
        boltzkit.FVBM(algo="bslm", convention="binary"),
        boltzkit.FVBM(algo="mle"),
        boltzkit.FVBM(algo="pcd", n_updates=200, random_state=2),
        boltzkit.FVBM(algo="ga", max_iter=200),
        boltzkit.FSLL(),
    ]


def params_of(est):
    """The fitted parameters that define the model."""
    if isinstance(est, boltzkit.FSLL):
        return [est.basis_, est.theta_]
    if isinstance(est, boltzkit.FVBM):
        return [est.coef_, est.intercept_]
    return [est.components_, est.intercept_visible_, est.intercept_hidden_]


def assert_same_bits(a, b):
    pa, pb = params_of(a), params_of(b)
    assert len(pa) == len(pb)
    for x, y in zip(pa, pb):
        assert x.dtype == y.dtype and x.shape == y.shape
        assert x.tobytes() == y.tobytes()


def assert_same_scores(est, a, b):
    if isinstance(est, boltzkit.FrankWolfeRBM):
        # the grown model scores in f64; its file (and pickle) is the f32 RBM of the
        # library's format
        assert np.allclose(a, b, rtol=1e-6)
    else:
        assert np.array_equal(a, b)


@pytest.mark.parametrize("est", small_estimators(), ids=lambda e: repr(e))
def test_fit_score_sample_roundtrip(est, binary_data, tmp_path):
    X = binary_data
    assert est.fit(X) is est
    lp = est.score_samples(X)
    assert lp.shape == (X.shape[0],) and np.all(np.isfinite(lp)) and np.all(lp < 0)
    assert est.score(X) == pytest.approx(lp.mean())
    # exact ln Z for these small models; the per-row figures are normalized
    z = est.log_partition()
    assert z.method == "exact" and z.stderr == 0.0 and z.lower == z.value == z.upper
    S = est.sample(50, random_state=1)
    assert S.shape == (50, X.shape[1]) and S.dtype == np.uint8 and S.max() <= 1
    assert np.array_equal(S, est.sample(50, random_state=1))

    path = tmp_path / "m.safetensors"
    est.save(path)
    back = boltzkit.load(path)
    assert type(back) is type(est)
    assert_same_bits(est, back)
    assert_same_scores(est, back.score_samples(X), lp)
    path2 = tmp_path / "m2.safetensors"
    back.save(path2)
    assert_same_file(path, path2)

    clone = pickle.loads(pickle.dumps(est))
    path3 = tmp_path / "m3.safetensors"
    clone.save(path3)
    assert_same_file(path, path3)
    assert_same_bits(est, clone)
    assert_same_scores(est, clone.score_samples(X), lp)
    assert clone.get_params() == est.get_params()


def test_rbm_every_trainer(binary_data):
    X = binary_data
    for algo in (
        "cd-1",
        "pcd-1",
        "cg-2",
        "sdcp-3-1",
        "csdcp-3-1",
        "popcd-1",
        "popcd-1-loo",
        "pt-4",
    ):
        rbm = boltzkit.RBM(
            n_hidden=4, algo=algo, n_epochs=5, batch_size=50, learning_rate=0.05, random_state=1
        ).fit(X)
        assert rbm.stop_reason_ == "all epochs done", algo
        assert np.isfinite(rbm.score(X)), algo
    with pytest.raises(ValueError, match="algo"):
        boltzkit.RBM(algo="nope-1").fit(X)


def test_rbm_attributes_and_methods(binary_data):
    X = binary_data
    rbm = boltzkit.RBM(
        n_hidden=5, n_epochs=20, batch_size=0, learning_rate=0.2, monitor="exact", random_state=4
    ).fit(X)
    assert rbm.components_.shape == (5, 12)
    assert rbm.intercept_visible_.shape == (12,) and rbm.intercept_hidden_.shape == (5,)
    H = rbm.transform(X)
    assert H.shape == (300, 5) and H.dtype == np.float32 and 0 <= H.min() and H.max() <= 1
    # E[h|v] by hand from the parameters
    pre = X @ rbm.components_.T.astype(np.float64) + rbm.intercept_hidden_
    assert np.allclose(H, 1 / (1 + np.exp(-pre)), atol=1e-5)
    assert len(rbm.history_) == 21 and "train_ll" in rbm.history_[-1]
    assert rbm.history_[-1]["train_ll"] == pytest.approx(rbm.score(X), abs=1e-6)
    V = rbm.gibbs(X[:10], random_state=2)
    assert V.shape == (10, 12) and set(np.unique(V)) <= {0, 1}
    ais = rbm.log_partition(method="ais", ais_chains=200, ais_steps=2000)
    exact = rbm.log_partition(method="exact")
    assert ais.method == "ais" and ais.stderr > 0
    assert abs(ais.value - exact.value) < max(0.05, 5 * ais.stderr)
    b = rbm.log_likelihood(X, method="bracket", ais_steps=500)
    assert b.lower.method == "raise" and b.upper.method == "ais"
    assert abs(b.value - rbm.score(X)) < 0.1


def test_partial_fit_is_reproducible(binary_data):
    X = binary_data
    a = boltzkit.RBM(n_hidden=4, batch_size=50, learning_rate=0.1, random_state=9)
    b = boltzkit.RBM(n_hidden=4, batch_size=50, learning_rate=0.1, random_state=9)
    for _ in range(3):
        a.partial_fit(X)
        b.partial_fit(X)
    assert_same_bits(a, b)
    assert a.n_partial_fits_ == 3
    first = boltzkit.RBM(n_hidden=4, batch_size=50, learning_rate=0.1, random_state=9)
    first.partial_fit(X)
    assert not np.array_equal(first.components_, a.components_)


def test_fvbm_statistics(binary_data):
    est = boltzkit.FVBM(algo="newton").fit(binary_data)
    d = binary_data.shape[1]
    assert est.coef_.shape == (d, d) and np.allclose(est.coef_, est.coef_.T)
    assert np.all(np.diag(est.coef_) == 0) and est.intercept_.shape == (d,)
    assert est.mple_exists_ is True
    se = est.standard_errors()
    assert se.shape == (d + d * (d - 1) // 2,) and np.all(se > 0)
    table = est.wald_test(level=0.9)
    assert len(table) == se.size and table.name[0] == "b_1" and table.name[d] == "m_1_2"
    assert np.allclose(table.z, table.estimate / table.std_error)
    assert np.all(table.ci_lower < table.estimate) and np.all(table.estimate < table.ci_upper)
    assert "p_value" in str(table).splitlines()[0]


def test_fvbm_separated_data_has_no_mple():
    X = np.array([[0, 0], [1, 1], [0, 0], [1, 1]], dtype=np.uint8)
    est = boltzkit.FVBM(algo="newton", max_iter=50).fit(X)
    assert est.mple_exists_ is False
    est = boltzkit.FVBM(algo="newton", l2=0.1).fit(X)
    assert np.all(np.isfinite(est.coef_))


def test_fsll_multivalued_and_kl():
    rng = np.random.default_rng(1)
    X = rng.integers(0, 3, size=(500, 3)).astype(np.uint8)
    est = boltzkit.FSLL(cardinalities=[3, 3, 3]).fit(X)
    assert est.cardinalities_ == [3, 3, 3]
    assert est.basis_.dtype == np.uint64 and est.theta_.shape == est.basis_.shape
    p = np.full(27, 1 / 27)
    kl = boltzkit.kl_divergence(p, est)
    assert 0 <= kl < 0.1
    assert est.sample(10, random_state=0).max() <= 2


@pytest.mark.parametrize(
    "bad, pattern",
    [
        (lambda X: np.where(np.arange(12) == 5, 2, X), r"X\[0, 5\] = 2: expected 0 or 1"),
        # uint8: the library's check (the fits'), the cell named as everywhere else
        (
            lambda X: np.where(np.arange(12) == 7, 3, X).astype(np.uint8),
            r"X\[0, 7\] = 3: expected 0 or 1",
        ),
        (lambda X: X.astype(float) * 0.5, r"X\[\d+, \d+\] = 0.5: expected 0 or 1"),
        (lambda X: np.where(np.arange(12) == 3, np.nan, X), r"X\[0, 3\] is nan"),
        (lambda X: X[0], "2-D array"),
        (lambda X: X.astype(np.int64) - 1, r"X\[\d+, \d+\] = -1"),
    ],
)
def test_bad_input_is_one_clear_line_and_changes_nothing(binary_data, bad, pattern):
    # binarize=None: the states as they are (the default, "auto", thresholds other data)
    rbm = boltzkit.RBM(n_hidden=3, n_epochs=2, random_state=0, binarize=None).fit(binary_data)
    before = (rbm.components_.copy(), rbm.get_params(), dict(vars(rbm)))
    Xbad = bad(binary_data)
    for call in (rbm.transform, rbm.score_samples, rbm.fit):
        with pytest.raises(ValueError, match=pattern) as info:
            call(Xbad)
        assert "\n" not in str(info.value)
    assert np.array_equal(rbm.components_, before[0]) and rbm.get_params() == before[1]
    assert vars(rbm).keys() == before[2].keys()


def test_refused_uint8_input_changes_nothing(binary_data):
    """uint8 input goes unchecked to the library, whose check refuses it: the estimator is
    left as it was, fitted or not."""
    bad = binary_data.copy()
    bad[4, 2] = 5
    for est in (
        boltzkit.RBM(n_hidden=3, random_state=0, binarize=None),
        boltzkit.FVBM(binarize=None),
    ):
        for call in (est.fit, getattr(est, "partial_fit", est.fit)):
            before = dict(vars(est))
            with pytest.raises(ValueError, match=r"X\[4, 2\] = 5: expected 0 or 1"):
                call(bad)
            assert vars(est).keys() == before.keys()


def test_wrong_width_after_fit(binary_data):
    rbm = boltzkit.RBM(n_hidden=3, n_epochs=2, random_state=0).fit(binary_data)
    for call in (rbm.transform, rbm.score_samples, rbm.gibbs):
        with pytest.raises(ValueError, match="X has 5 features, but RBM is expecting 12"):
            call(binary_data[:, :5])


def test_bad_settings_name_the_parameter(binary_data):
    for est, name in [
        (boltzkit.RBM(n_hidden=0), "n_hidden"),
        (boltzkit.RBM(momentum=1.5), "momentum"),
        (boltzkit.RBM(learning_rate=float("nan")), "learning_rate"),
        (boltzkit.FVBM(algo="lbfgs"), "algo"),
        (boltzkit.FVBM(l2=-1.0), "l2"),
        (boltzkit.FSLL(epsilon=-1.0), "epsilon"),
        (boltzkit.RBM(binarize="yes"), "binarize must be None, 'auto' or a finite number"),
        (boltzkit.FVBM(binarize=float("nan")), "binarize"),
        (boltzkit.FrankWolfeRBM(binarize=[0.5]), "binarize"),
    ]:
        with pytest.raises(ValueError, match=name):
            est.fit(binary_data)


def test_input_dtypes_give_the_same_model(binary_data):
    fits = []
    for dtype in (np.uint8, bool, np.int32, np.int64, np.float32, np.float64):
        X = binary_data.astype(dtype)
        fits.append(boltzkit.RBM(n_hidden=3, n_epochs=3, random_state=1).fit(X))
    Xf = np.asfortranarray(binary_data)
    fits.append(boltzkit.RBM(n_hidden=3, n_epochs=3, random_state=1).fit(Xf))
    for f in fits[1:]:
        assert_same_bits(fits[0], f)


def test_uint8_c_contiguous_is_not_copied(binary_data):
    from boltzkit._validation import check_states

    assert check_states(binary_data) is binary_data
    assert check_states(binary_data.astype(np.int64)) is not binary_data


@pytest.mark.parametrize(
    "make",
    [
        lambda t: boltzkit.RBM(
            n_hidden=32,
            n_epochs=3,
            batch_size=40,
            algo="pcd-1",
            learning_rate=0.05,
            random_state=5,
            n_jobs=t,
        ),
        lambda t: boltzkit.RBM(
            n_hidden=16,
            n_epochs=2,
            batch_size=40,
            algo="pt-3",
            learning_rate=0.05,
            random_state=5,
            n_jobs=t,
        ),
        lambda t: boltzkit.FVBM(algo="pcd", n_updates=100, random_state=5, n_jobs=t),
        lambda t: boltzkit.FVBM(algo="newton", n_jobs=t),
    ],
)
def test_same_bits_with_1_and_2_threads(make):
    rng = np.random.default_rng(11)
    d = 12 if "FVBM" in repr(make(1)) else 40
    X = (rng.random((400, d)) < rng.random(d)).astype(np.uint8)
    one, two = make(1).fit(X), make(2).fit(X)
    assert_same_bits(one, two)
    assert np.array_equal(one.sample(20, random_state=3), two.sample(20, random_state=3))


def test_callback_and_verbose(binary_data, capsys):
    seen = []

    def cb(info):
        seen.append(info["epoch"])
        return info["epoch"] < 3  # stop after epoch 3

    rbm = boltzkit.RBM(
        n_hidden=3, n_epochs=50, eval_every=1, callback=cb, verbose=1, random_state=0
    ).fit(binary_data)
    assert seen == [0, 1, 2, 3]
    assert "callback" in rbm.stop_reason_
    assert "[RBM] epoch=1" in capsys.readouterr().err

    def boom(info):
        raise RuntimeError("from the callback")

    est = boltzkit.RBM(n_hidden=3, n_epochs=50, callback=boom, random_state=0)
    with pytest.raises(RuntimeError, match="from the callback"):
        est.fit(binary_data)
    assert est.model_ is not None  # the model so far is kept


def test_read_dataset(tmp_path, binary_data):
    path = tmp_path / "x.npy"
    np.save(path, binary_data)
    assert np.array_equal(boltzkit.read_dataset(path), binary_data)
    gray = (binary_data * 200).astype(np.uint8)
    np.savetxt(tmp_path / "g.csv", gray, fmt="%d", delimiter=",")
    assert np.array_equal(boltzkit.read_dataset(tmp_path / "g.csv", binarize=127), binary_data)
    with pytest.raises(ValueError, match="binarize"):
        boltzkit.read_dataset(path, binarize="sometimes")
    with pytest.raises(OSError):
        boltzkit.read_dataset(tmp_path / "missing.npy")


def test_unfitted_estimators_say_so(binary_data):
    for est in (boltzkit.RBM(), boltzkit.FVBM(), boltzkit.FSLL(), boltzkit.FrankWolfeRBM()):
        with pytest.raises(boltzkit.NotFittedError):
            est.score_samples(binary_data)


def test_help_explains_every_parameter():
    """Every constructor parameter has a numpydoc entry that states its default."""
    import ast
    import inspect
    import re

    for cls in (boltzkit.RBM, boltzkit.FrankWolfeRBM, boltzkit.FVBM, boltzkit.FSLL):
        doc = cls.__doc__
        for name, p in inspect.signature(cls.__init__).parameters.items():
            if name == "self":
                continue
            m = re.search(rf"^    {name} : .*default=(\S+)$", doc, re.MULTILINE)
            assert m, f"{cls.__name__}: no numpydoc line with a default for {name}"
            assert ast.literal_eval(m.group(1)) == p.default, (cls.__name__, name)


def test_works_without_scikit_learn():
    """scikit-learn is optional: with it unimportable the estimators keep the same
    get_params / set_params / fit / pickle behaviour on the minimal base."""
    import subprocess
    import sys
    import textwrap

    code = textwrap.dedent(
        """
        import pickle, sys
        sys.modules["sklearn"] = None  # import sklearn now fails
        import numpy as np
        import boltzkit
        assert not boltzkit.HAVE_SKLEARN
        X = (np.random.default_rng(0).random((100, 6)) < 0.4).astype(np.uint8)
        r = boltzkit.RBM(n_hidden=3).set_params(n_epochs=2, random_state=1)
        assert r.get_params()["n_epochs"] == 2 and "n_epochs=2" in repr(r)
        try:
            r.set_params(n_layers=2)
        except ValueError as e:
            assert "n_layers" in str(e)
        else:
            raise AssertionError("set_params accepted an unknown name")
        H = r.fit_transform(X)
        assert H.shape == (100, 3)
        assert r.__sklearn_tags__().transformer_tags.preserves_dtype == ["float32"]
        assert r.__sklearn_tags__().input_tags.sparse
        assert list(r.get_feature_names_out()) == ["rbm0", "rbm1", "rbm2"]
        assert not hasattr(r, "feature_names_in_")  # input names need scikit-learn
        back = pickle.loads(pickle.dumps(r))
        assert np.array_equal(back.components_, r.components_)
        try:
            boltzkit.FVBM().score(X)
        except boltzkit.NotFittedError as e:
            assert isinstance(e, ValueError) and isinstance(e, AttributeError)
        print("ok")
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_frank_wolfe_selects_a_size_on_validation_data():
    rng = np.random.default_rng(0)
    X = (rng.random((300, 12)) < 0.3).astype(np.uint8)
    V = (rng.random((100, 12)) < 0.3).astype(np.uint8)
    fw = boltzkit.FrankWolfeRBM(max_units=6, eval_every=2, n_chains=200, random_state=1)
    fw.fit(X, X_valid=V)
    assert [u for u, _ in fw.gap_curve_] == [2, 4, 6]
    assert fw.n_units_ == 6 and fw.selected_units_ in (2, 4, 6)
    sel = fw.selected_model_
    assert isinstance(sel, boltzkit.FrankWolfeRBM)
    assert sel.components_.shape == (fw.selected_units_, 12)
    assert np.isfinite(sel.score(V))
    with pytest.raises(ValueError, match="X_valid"):
        boltzkit.FrankWolfeRBM(early_stop=True).fit(X)
