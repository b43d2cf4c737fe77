"""One settings schema: an estimator's settings are its library learner's ``XParams``. Its
signature, its docstring's Parameters and the settings ``TypedDict`` of ``_native.pyi`` name
exactly the fields the library serializes (``_native.default_settings``), its defaults are the
library's, and what it passes reaches the model file under the same names."""

import ast
import inspect
import json
import pathlib
import re

import numpy as np
import pytest

import boltzkit
from boltzkit import _native

STUB = pathlib.Path(boltzkit.__file__).with_name("_native.pyi")

# RBM's own parameters: the front end's, not the learner's; the learner's ``seed`` is
# ``random_state``; ``n_states`` is the categorical layer's shape, read from the data
RBM_OWN = {
    "n_states",
    "binarize",
    "warm_start",
    "monitor",
    "eval_every",
    "verbose",
    "callback",
    "random_state",
    "n_jobs",
}


def stub_fields(name):
    tree = ast.parse(STUB.read_text())
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            return [s.target.id for s in node.body if isinstance(s, ast.AnnAssign)]
    raise AssertionError(f"no class {name} in {STUB}")


def doc_parameters(cls):
    doc = inspect.getdoc(cls)
    section = doc.split("Parameters\n----------\n", 1)[1].split("\nAttributes\n", 1)[0]
    return [m.group(1) for m in re.finditer(r"^(\w+) :", section, re.M)]


def test_signature_docstring_and_stub_name_the_library_settings():
    """RBM's settings are ``RbmParams``'s (the binary trainer's, in their order), then the
    fields ``UnitRbmParams`` adds for other unit types (in theirs); each stub lists its
    schema's fields; every default is the library's."""
    binary = json.loads(_native.default_settings("rbm"))
    units = json.loads(_native.default_settings("rbm-units"))
    assert set(binary) <= set(units)
    settings = [n for n in binary if n != "seed"] + [n for n in units if n not in binary]
    signature = inspect.signature(boltzkit.RBM.__init__).parameters
    names = [name for name in signature if name != "self"]
    assert [n for n in names if n not in RBM_OWN] == settings
    assert set(names) - set(settings) == RBM_OWN
    assert [n for n in doc_parameters(boltzkit.RBM) if n not in RBM_OWN] == settings
    assert set(doc_parameters(boltzkit.RBM)) - set(settings) == RBM_OWN
    assert stub_fields("RbmSettings") == list(binary)
    assert stub_fields("UnitRbmSettings") == list(units)
    for name in settings:
        assert signature[name].default == units[name], name
        if name in binary:
            assert binary[name] == units[name], name


def test_unknown_settings_kind_is_refused():
    with pytest.raises(ValueError, match="no settings schema"):
        _native.default_settings("nope")


def test_rbm_settings_reach_the_model_file_and_come_back(binary_data, tmp_path):
    est = boltzkit.RBM(
        n_hidden=3,
        n_epochs=2,
        batch_size=0,
        algo="pcd-2",
        learning_rate=0.07,
        shuffle=False,
        nu_mu=0.5,
        weight_sd=0.02,
        random_state=4,
    ).fit(binary_data)
    recorded = json.loads(est.model_.metadata["settings"])
    for name in boltzkit.rbm.RBM_SETTINGS:
        assert recorded[name] == pytest.approx(getattr(est, name)), name
    assert recorded["seed"] == 4
    # a settings object the library refuses names the setting
    with pytest.raises(ValueError, match="max_abs_param"):
        boltzkit.RBM(n_hidden=2, max_abs_param=-1.0).fit(binary_data)
    # a saved model gives a fresh estimator the settings it was fitted with
    path = tmp_path / "m.safetensors"
    est.save(path)
    back = boltzkit.load(path)
    for name in boltzkit.rbm.RBM_SETTINGS:
        assert getattr(back, name) == pytest.approx(getattr(est, name)), name
    np.testing.assert_array_equal(back.components_, est.components_)


def test_fvbm_settings_are_the_solvers_schema():
    """Each FVBM setting names a field of the solvers' schema (``FvbmParams``) that uses it;
    its default is theirs (None: each solver's own); the stub lists every field."""
    own = {"binarize", "verbose", "callback", "random_state", "n_jobs"}
    mapped = boltzkit.fvbm.FVBM_SETTINGS
    signature = inspect.signature(boltzkit.FVBM.__init__).parameters
    names = [name for name in signature if name != "self"]
    assert [n for n in names if n not in own] == list(mapped)
    assert [n for n in doc_parameters(boltzkit.FVBM) if n not in own] == list(mapped)
    per_algo = {a: json.loads(_native.default_settings(f"fvbm-{a}")) for a in boltzkit.fvbm.ALGOS}
    for name, field in mapped.items():
        having = [a for a, d in per_algo.items() if field in d]
        assert having, name
        if name != "algo" and signature[name].default is not None:
            assert {per_algo[a][field] for a in having} == {signature[name].default}, name
    assert set(stub_fields("FvbmSettings")) == set().union(*per_algo.values())


def test_fvbm_settings_reach_the_model_file(binary_data):
    X = np.ascontiguousarray(binary_data[:, :6])
    est = boltzkit.FVBM(algo="ga", mu=0.5, tol=1e-3, max_iter=50, check_existence=False)
    recorded = json.loads(est.fit(X).model_.metadata["settings"])
    assert (recorded["algo"], recorded["step"], recorded["tau"]) == ("ga", 0.5, 1e-3)
    assert (recorded["max_iterations"], recorded["check_existence"]) == (50, False)
    assert recorded["grad_tol"] == json.loads(_native.default_settings("fvbm-ga"))["grad_tol"]
    with pytest.raises(ValueError, match="step"):
        boltzkit.FVBM(algo="ga", mu=-1.0).fit(X)


def test_fsll_settings_are_the_schema(binary_data):
    """FSLL's settings name the fields of ``FsllParams`` (``max_iter``: ``max_iterations``), in
    its order, with its defaults; the stub lists them; a fit records them in its file."""
    own = {"cardinalities", "verbose", "callback", "random_state", "n_jobs"}
    mapped = boltzkit.fsll.FSLL_SETTINGS
    defaults = json.loads(_native.default_settings("fsll"))
    assert list(mapped.values()) == list(defaults)
    signature = inspect.signature(boltzkit.FSLL.__init__).parameters
    names = [name for name in signature if name != "self"]
    assert [n for n in names if n not in own] == list(mapped)
    assert [n for n in doc_parameters(boltzkit.FSLL) if n not in own] == list(mapped)
    assert stub_fields("FsllSettings") == list(defaults)
    for name, field in mapped.items():
        assert signature[name].default == defaults[field], name
    X = np.ascontiguousarray(binary_data[:, :4])
    est = boltzkit.FSLL(epsilon=1e-3, max_iter=7, refresh_every=3, path="full").fit(X)
    recorded = json.loads(est.model_.metadata["settings"])
    assert recorded == {"epsilon": 1e-3, "max_iterations": 7, "refresh_every": 3, "path": "full"}
    with pytest.raises(ValueError, match="refresh_every"):
        _native.fit_fsll(X, json.dumps({"refresh_every": 0}))


def stub_dict_fields(name):
    """The keys of a ``TypedDict`` the stub declares in the functional form."""
    tree = ast.parse(STUB.read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and node.targets[0].id == name:
            return [k.value for k in node.value.args[1].keys]
    raise AssertionError(f"no {name} = TypedDict(...) in {STUB}")


def test_frank_wolfe_settings_are_the_schema(binary_data):
    """FrankWolfeRBM's settings name the fields of ``FwParams`` (``lambda_``: ``lambda``), in
    its order, with its defaults; the stub lists them; a fit records them in its file."""
    own = {"binarize", "warm_start", "verbose", "callback", "random_state", "n_jobs"}
    mapped = boltzkit.rbm.FW_SETTINGS
    defaults = json.loads(_native.default_settings("frank-wolfe"))
    assert list(mapped.values()) == [name for name in defaults if name != "seed"]
    signature = inspect.signature(boltzkit.FrankWolfeRBM.__init__).parameters
    names = [name for name in signature if name != "self"]
    assert [n for n in names if n not in own] == list(mapped)
    assert [n for n in doc_parameters(boltzkit.FrankWolfeRBM) if n not in own] == list(mapped)
    assert stub_dict_fields("FwSettings") == list(defaults)
    for name, field in mapped.items():
        assert signature[name].default == defaults[field], name
    X = np.ascontiguousarray(binary_data[:, :6])
    est = boltzkit.FrankWolfeRBM(
        max_units=2, n_chains=50, lambda_=0.2, free_alpha=0.0, fall_tol=float("inf"), random_state=3
    ).fit(X)
    recorded = json.loads(est.model_.metadata["settings"])
    assert (recorded["max_units"], recorded["n_chains"], recorded["lambda"]) == (2, 50, 0.2)
    assert (recorded["free_alpha"], recorded["fall_tol"]) == (0.0, None)
    assert recorded["algo"] == "frank-wolfe"
    with pytest.raises(ValueError, match="bias_learning_rate"):
        _native.fit_frank_wolfe(X, json.dumps({"bias_learning_rate": "fast"}))


def test_potts_settings_are_the_schema():
    """Potts's settings name the fields of ``PlmParams`` (``max_iter``: ``max_iterations``,
    ``tol``: ``grad_tol``, ``ignore_gaps``: ``gap_state``), in its order, with the DCA
    pipeline's defaults; the stub lists them; a fit records them in its file and a loaded
    model gives them back."""
    own = {"alphabet", "verbose", "callback", "random_state", "n_jobs"}
    mapped = boltzkit.potts.POTTS_SETTINGS
    defaults = json.loads(_native.default_settings("potts"))
    assert list(mapped.values()) == list(defaults)
    signature = inspect.signature(boltzkit.Potts.__init__).parameters
    names = [name for name in signature if name != "self"]
    assert [n for n in names if n not in own] == list(mapped)
    assert [n for n in doc_parameters(boltzkit.Potts) if n not in own] == list(mapped)
    assert stub_fields("PottsSettings") == list(defaults)
    for name, field in mapped.items():
        expected = defaults[field] is not None if name == "ignore_gaps" else defaults[field]
        assert signature[name].default == expected, name
    X = np.array([[0, 1, 2], [1, 1, 0], [2, 0, 1], [0, 2, 2], [1, 0, 0]] * 4, dtype=np.uint8)
    est = boltzkit.Potts(
        mode="asymmetric", lambda_h=0.5, lambda_j=0.2, max_iter=7, lbfgs_memory=4, alphabet=None
    ).fit(X)
    recorded = json.loads(est.model_.metadata["settings"])
    got = [recorded[k] for k in ("mode", "lambda_h", "lambda_j", "max_iterations", "lbfgs_memory")]
    assert got == ["asymmetric", 0.5, 0.2, 7, 4]
    assert recorded["gap_state"] is None
    back = boltzkit.potts.Potts._from_native(est.model_)
    for name in mapped:
        assert getattr(back, name) == getattr(est, name), name
    with pytest.raises(ValueError, match="lbfgs_memory"):
        boltzkit.Potts(lbfgs_memory=0, alphabet=None).fit(X)


def test_contact_precision_defaults_are_the_library_s():
    defaults = json.loads(_native.default_settings("contacts"))
    signature = inspect.signature(boltzkit.contact_precision).parameters
    assert {n: signature[n].default for n in defaults} == defaults


def test_likelihood_estimate_settings_are_the_schema(binary_data):
    """The likelihood estimate's settings (``EvalParams``): the stub lists them; every method
    and function that takes them names them as the schema (``random_state``: ``seed``) with
    its defaults; a bad value is refused naming the setting."""
    defaults = json.loads(_native.default_settings("eval"))
    assert stub_fields("EvalSettings") == list(defaults)
    rename = {"random_state": "seed"}
    for fn in (
        boltzkit.RBM.score_samples,
        boltzkit.RBM.log_likelihood,
        boltzkit.RBM.log_partition,
        boltzkit.log_partition,
    ):
        signature = inspect.signature(fn).parameters
        named = [n for n in signature if rename.get(n, n) in defaults]
        assert "ais_chains" in named and "random_state" in named, fn
        for name in named:
            assert signature[name].default == defaults[rename.get(name, name)], (fn, name)
    X = np.ascontiguousarray(binary_data[:, :6])
    est = boltzkit.RBM(n_hidden=2, n_epochs=1, random_state=0).fit(X)
    with pytest.raises(ValueError, match="ais_chains"):
        est.log_partition(method="ais", ais_chains=0)
    with pytest.raises(ValueError, match="raise_vectors"):
        est.log_likelihood(X, method="raise", ais_steps=10, raise_vectors=0)
    a = est.log_partition(method="ais", ais_chains=20, ais_steps=50, random_state=3)
    b = est.log_partition(method="ais", ais_chains=20, ais_steps=50, random_state=3)
    assert a.value == b.value


def test_ais_monitor_is_the_library_monitor(binary_data):
    # monitor="ais" runs the library's training monitor (EvalParams::monitor: 100 chains over a
    # 1,000-step linear schedule, as `rbm fit --eval ais`): on 12 visible units its figures
    # agree with the exact ones
    X = binary_data
    rbm = boltzkit.RBM(
        n_hidden=5, n_epochs=2, batch_size=0, learning_rate=0.2, monitor="ais", random_state=4
    ).fit(X)
    last = rbm.history_[-1]
    assert last["epoch"] == 2 and "train_ll_log_z" in last
    assert abs(last["train_ll_log_z"] - rbm.log_partition(method="exact").value) < 0.1
    assert abs(last["train_ll"] - rbm.score(X)) < 0.1
