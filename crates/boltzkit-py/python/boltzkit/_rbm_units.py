"""The unit types of :class:`boltzkit.RBM` other than 0/1 (``visible="categorical"`` or
``"gaussian"``, ``hidden="relu"``, ``"drelu"`` or ``"gaussian"``, issue 34): their settings,
data checks and fit, each the library's (``boltzkit::rbm::units``, through
``_native.fit_unit_rbm`` and ``NativeUnitModel``), the run of ``boltzkit rbm fit
--visible-units V --hidden-units H``. The (bernoulli, bernoulli) pair is not here: it stays the
binary RBM with every trainer."""

from __future__ import annotations

import numbers
import os

import numpy as np

from . import _native
from ._settings import defaults, settings_json
from ._validation import check_choice, check_states

VISIBLE = ("bernoulli", "categorical", "gaussian")
HIDDEN = ("bernoulli", "relu", "drelu", "gaussian")

#: The unit-type RBM's default settings (the library's ``UnitRbmParams``), by name.
UNITS = defaults("rbm-units")
#: Every setting the unit trainer takes (``seed`` is ``random_state``).
UNIT_SETTINGS = tuple(name for name in UNITS if name != "seed")


def is_units(est):
    """Whether ``est`` has a layer other than 0/1 (checked names)."""
    visible = check_choice("visible", est.visible, VISIBLE)
    hidden = check_choice("hidden", est.hidden, HIDDEN)
    return (visible, hidden) != ("bernoulli", "bernoulli")


def refuse_on_binary(est, binary_names, sample_weight):
    """Fails when a unit-type setting is set away from its default on a bernoulli/bernoulli
    RBM, whose trainer would ignore it (as the CLI refuses those flags)."""
    for name in UNIT_SETTINGS:
        if name in binary_names or name in ("visible", "hidden"):
            continue
        if getattr(est, name) != UNITS[name]:
            raise ValueError(
                f"{name} applies to visible/hidden other than bernoulli/bernoulli "
                "(set visible= or hidden=)"
            )
    if est.n_states is not None:
        raise ValueError("n_states applies to visible='categorical'")
    if sample_weight is not None:
        raise ValueError(
            "sample_weight applies to visible/hidden other than bernoulli/bernoulli yet"
        )


def unit_states(est, X, *, reset, n_features):
    """``X`` as the unit trainer reads it: ``uint8`` codes for Bernoulli (with
    ``binarize``) and categorical units (0 to 255, each site's states below its
    ``n_states``), ``float64`` finite values for Gaussian units; ``n_features`` columns
    after a fit."""
    owner = type(est).__name__
    if est.visible == "gaussian":
        X = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
        if X.ndim != 2 or X.shape[0] == 0:
            raise ValueError(f"X must be a non-empty 2-D matrix, got shape {X.shape}")
        bad = np.argwhere(~np.isfinite(X))
        if len(bad):
            r, c = bad[0]
            raise ValueError(f"X[{r}, {c}] = {X[r, c]}: expected a finite value")
    elif est.visible == "categorical":
        X = check_states(X, max_value=255, n_features=n_features, owner=owner)
    else:
        X = check_states(
            X, binarize=getattr(est, "binarize", None), n_features=n_features, owner=owner
        )
    if n_features is not None and X.shape[1] != n_features:
        raise ValueError(
            f"X has {X.shape[1]} features, but {owner} is expecting {n_features} features"
        )
    if est.visible == "categorical" and reset:
        site_states(est, X)
    return X, None


def site_states(est, X):
    """Each site's states from ``n_states`` (None: the native reader's inference, each
    column's largest code + 1), checked against the codes of ``X``."""
    q = est.n_states
    if q is None:
        return None
    d = X.shape[1]
    if isinstance(q, numbers.Integral) and not isinstance(q, bool):
        q = [int(q)] * d
    q = [int(k) for k in q]
    if len(q) != d:
        raise ValueError(f"n_states has {len(q)} entries, X has {d} sites")
    for i, k in enumerate(q):
        if not 2 <= k <= 256:
            raise ValueError(f"n_states[{i}] = {k}: a site has 2 to 256 states")
    top = X.max(axis=0) if X.shape[0] else np.zeros(d, dtype=np.uint8)
    for i, (k, m) in enumerate(zip(q, top)):
        if m >= k:
            raise ValueError(f"X column {i} holds the code {int(m)}, but n_states[{i}] = {k}")
    return q


def check_sample_weight(sample_weight, n):
    """``sample_weight`` as a ``float64`` vector of ``n`` entries (None stays None); the
    library checks its values."""
    if sample_weight is None:
        return None
    w = np.ascontiguousarray(np.asarray(sample_weight, dtype=np.float64))
    if w.shape != (n,):
        raise ValueError(f"sample_weight must have shape ({n},), got {w.shape}")
    return w


def fit_units(est, X, sample_weight, seed, hook, threads, init=None, **override):
    """The unit trainer's fit (``_native.fit_unit_rbm``) from a fresh model, or from
    ``init`` (a ``NativeUnitModel``) trained further; ``override``: settings replaced (as
    ``n_epochs=1``). The model, the record, and the exception to raise once the model is
    kept."""
    return _native.fit_unit_rbm(
        X,
        settings_json(est, UNIT_SETTINGS, seed=seed, **override),
        site_states(est, X) if est.visible == "categorical" and init is None else None,
        check_sample_weight(sample_weight, X.shape[0]),
        hook,
        threads,
        init,
    )


def unit_start(est, init):
    """The ``NativeUnitModel`` a unit-type fit starts from: ``init`` (a fitted RBM, a
    ``NativeUnitModel`` or a ``boltzkit/rbm/v2`` file's path), else with ``warm_start`` the
    estimator's own fitted model, else None (a fresh one)."""
    if init is None:
        if est.warm_start and getattr(est, "model_", None) is not None:
            init = est.model_
        else:
            return None
    if isinstance(init, (str, os.PathLike)):
        return _native.NativeUnitModel.load(os.fspath(init))
    model = getattr(init, "model_", init)
    if not isinstance(model, _native.NativeUnitModel):
        raise TypeError(
            f"init of a {est.visible}/{est.hidden} RBM must be a fitted RBM of unit types, "
            f"its NativeUnitModel or its model file, got {type(init).__name__}"
        )
    return model


def is_unit_model_file(path):
    """Whether the model file at ``path`` is a unit-type RBM's (``boltzkit/rbm/v2``)."""
    return _native.is_unit_model_file(os.fspath(path))
