"""Free functions: reading datasets, ``ln Z`` and KL divergence of any model."""

from __future__ import annotations

import itertools
import os

import numpy as np

from . import _native
from ._base import check_fitted
from ._results import Estimate
from ._settings import defaults

# The defaults of the likelihood estimate's settings (the library's ``EvalParams``).
_EVAL = defaults("eval")


def read_dataset(path, binarize=None, cardinalities=None, random_state=0):
    """Reads a dataset file with the library's readers, as a ``uint8`` array.

    Parameters
    ----------
    path : str or path-like
        ``.npy``, ``.csv`` / ``.tsv``, IDX (``*-ubyte``, MNIST), ``.amat``; any of them
        ``.gz``.
    binarize : None, float, "threshold:T" or "stochastic", default=None
        None: values must already be integers in 0..255. A number ``T`` (or
        ``"threshold:T"``): a value above ``T`` becomes 1, any other 0 (``127`` for 0..255
        grayscale, ``0.5`` for [0, 1]). ``"stochastic"``: each value becomes 1 with
        probability ``v`` (or ``v / 255``), seeded by ``random_state``.
    cardinalities : list of int or None, default=None
        Declared values per variable (a value at or above is an error).
    random_state : int, default=0
        Seed of stochastic binarization (the CLI's ``derive_seed(seed, 2)`` for ``--seed``).

    Returns
    -------
    ndarray of shape (n_samples, n_variables), uint8
    """
    if binarize is not None and not isinstance(binarize, str):
        binarize = f"threshold:{float(binarize)!r}"
    return _native.read_dataset(os.fspath(path), binarize, cardinalities, int(random_state))


def log_partition(
    model,
    method="auto",
    ais_chains=_EVAL["ais_chains"],
    ais_steps=_EVAL["ais_steps"],
    random_state=_EVAL["seed"],
):
    """``ln Z`` of a fitted estimator (or a model file's path) as an :class:`Estimate`."""
    if isinstance(model, (str, os.PathLike)):
        from ._loading import load

        model = load(model)
    return model.log_partition(method, ais_chains, ais_steps, random_state)


def _all_states(cardinalities):
    """Every state in mixed-radix order, variable 0 least significant."""
    rows = itertools.product(*[range(c) for c in reversed(cardinalities)])
    return np.array([r[::-1] for r in rows], dtype=np.uint8).reshape(-1, len(cardinalities))


def kl_divergence(p, model):
    """``KL(p ‖ q)`` in nats between a probability table ``p`` over all states (mixed-radix
    order, variable 0 least significant; the ``--truth`` files of ``boltzkit gen``) and a
    fitted model ``q`` small enough to enumerate."""
    check_fitted(model)
    p = np.ascontiguousarray(p, dtype=np.float64).ravel()
    cards = getattr(model, "cardinalities_", None) or [2] * model.n_features_in_
    n_states = int(np.prod(cards, dtype=np.float64))
    if p.size != n_states:
        raise ValueError(f"p has {p.size} entries; the model has {n_states} states")
    log_q = model.score_samples(_all_states(cards), method="exact")
    return float(_native.kl_divergence(p, np.ascontiguousarray(log_q, dtype=np.float64)))


__all__ = ["read_dataset", "log_partition", "kl_divergence", "Estimate"]
