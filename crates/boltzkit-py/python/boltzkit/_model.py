"""What every fitted boltzkit estimator shares: the native model behind it, scoring by the
library's ``Model`` trait, sampling, ``ln Z``, files and pickling."""

from __future__ import annotations

import json
import os

import numpy as np

from . import _native
from ._base import check_feature_names, check_fitted
from ._results import Estimate, log_likelihood_from
from ._settings import defaults
from ._validation import check_choice, seed_from, states_and_threshold, threads_from
from ._warnings import AisFallbackWarning, warn

# The likelihood estimate's settings (the library's ``EvalParams``): the defaults of
# ``ais_chains``, ``ais_steps``, ``raise_vectors`` and ``random_state`` (its ``seed``).
_EVAL = defaults("eval")


def eval_settings(ais_chains, ais_steps, random_state, raise_vectors=None):
    """The estimate's settings object (``EvalParams``, JSON), checked by the library."""
    return json.dumps(
        {
            "ais_chains": ais_chains,
            "ais_steps": ais_steps,
            "raise_vectors": raise_vectors,
            "seed": seed_from(random_state),
        }
    )


class ModelMixin:
    """Methods on ``self.model_`` (a ``NativeModel``) common to every estimator.

    Subclasses set ``_max_value`` (the largest state value: 1 for binary models) and may
    override :meth:`_check_values`.
    """

    _max_value = 1

    def _check_X(self, X, *, reset=False, deferred=False):
        """``X`` (an array-like, a DataFrame or a scipy sparse matrix) as a ``uint8`` state
        matrix; after ``fit``, of the fitted width and feature names (scikit-learn's check:
        ``feature_names_in_`` is set when ``reset``). ``deferred``: see :func:`check_states`
        (fits only)."""
        return self._validate(X, reset=reset, deferred=deferred)[0]

    def _validate(self, X, *, reset=False, deferred=False):
        """:meth:`_check_X` and the binarization threshold it applied (None: none)."""
        check_feature_names(self, X, reset=reset)
        return self._check_values(X, reset=reset, deferred=deferred)

    def _check_values(self, X, *, reset=False, deferred=False):
        """``X``'s values as :meth:`_check_X` checks them (no feature names), and the
        threshold applied."""
        n = None if reset else getattr(self, "n_features_in_", None)
        return states_and_threshold(
            X,
            max_value=self._max_value,
            binarize=getattr(self, "binarize", None),
            n_features=n,
            owner=type(self).__name__,
            deferred=deferred,
        )

    def _threads(self):
        return threads_from(getattr(self, "n_jobs", None))

    def _call_seed(self, random_state):
        """The seed of a sampling call: its own ``random_state``, else the estimator's."""
        if random_state is None:
            random_state = getattr(self, "random_state", None)
        return seed_from(random_state)

    def __sklearn_is_fitted__(self):
        return getattr(self, "model_", None) is not None

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True  # scipy sparse matrices, as BernoulliRBM takes them
        return tags

    # -- scores ---------------------------------------------------------------------------

    def score_samples(
        self,
        X,
        method="auto",
        ais_chains=_EVAL["ais_chains"],
        ais_steps=_EVAL["ais_steps"],
        random_state=_EVAL["seed"],
    ):
        """Log-likelihood ``ln p(x)`` of each row, in nats.

        An AIS or RAISE estimate can take minutes; Ctrl-C stops it within a second and
        raises ``KeyboardInterrupt`` (an interrupted estimate returns no figure).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
            States (0/1 for binary models).
        method : {"auto", "exact", "ais"}, default="auto"
            How ``ln Z`` is obtained: ``"exact"`` by enumeration, ``"ais"`` by forward
            annealed importance sampling (RBMs; then every row shares the estimate's error),
            ``"auto"`` exact where affordable, AIS otherwise.
        ais_chains : int, default=100
            AIS chains.
        ais_steps : int or None, default=None
            AIS intermediate distributions (None: the standard 14,500-step schedule).
        random_state : int, default=0
            Seed of the AIS chains.

        Returns
        -------
        ndarray of shape (n_samples,)
        """
        check_fitted(self)
        X = self._check_X(X)
        lp, _ = self.model_.log_probs(
            X,
            check_choice("method", method, ("auto", "exact", "ais")),
            eval_settings(ais_chains, ais_steps, random_state),
            self._threads(),
        )
        return lp

    def score(self, X, y=None):
        """The average log-likelihood of ``X`` (nats per row): exact where affordable, forward
        AIS otherwise (the figure of ``boltzkit <model> eval``; see :meth:`log_likelihood`).

        A model too large to enumerate (an RBM with both layers above 30 units) is scored by
        forward AIS with the standard 14,500-step schedule: slow (seconds to minutes), an
        estimate with an error, optimistic in expectation; an ``AisFallbackWarning`` says so.
        Call :meth:`log_likelihood` with ``method="ais"`` (and fewer ``ais_steps``) or
        ``"bracket"`` to choose."""
        ll = self.log_likelihood(X)
        if ll.lower.method != "exact":
            warn(
                AisFallbackWarning,
                f"score() fell back to forward AIS ({ll.lower.method}): the model is too large "
                "to enumerate, so the figure is an estimate (optimistic in expectation); use "
                'log_likelihood(X, method="bracket") for both ends',
            )
        return float(ll.value)

    def log_likelihood(
        self,
        X,
        method="auto",
        ais_chains=_EVAL["ais_chains"],
        ais_steps=_EVAL["ais_steps"],
        raise_vectors=_EVAL["raise_vectors"],
        random_state=_EVAL["seed"],
    ):
        """The average log-likelihood of ``X`` with its uncertainty.

        An AIS or RAISE estimate can take minutes; Ctrl-C stops it within a second and
        raises ``KeyboardInterrupt`` (an interrupted estimate returns no figure).

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)
        method : {"auto", "exact", "ais", "raise", "bracket"}, default="auto"
            ``"raise"`` (conservative, RBMs) and ``"bracket"`` (the interval [RAISE, forward
            AIS], RBMs) are for models too large to enumerate.
        ais_chains, ais_steps : see :meth:`score_samples`
        raise_vectors : int or None, default=None
            RAISE on a seeded random subset of this many rows (None: all).
        random_state : int, default=0

        Returns
        -------
        LogLikelihood
            ``lower`` and ``upper`` :class:`Estimate` (equal unless bracketed), ``log_z``.
        """
        check_fitted(self)
        X = self._check_X(X)
        method = check_choice("method", method, ("auto", "exact", "ais", "raise", "bracket"))
        triple = self.model_.log_likelihood(
            X,
            method,
            eval_settings(ais_chains, ais_steps, random_state, raise_vectors),
            self._threads(),
        )
        return log_likelihood_from(triple, method)

    def log_partition(
        self,
        method="auto",
        ais_chains=_EVAL["ais_chains"],
        ais_steps=_EVAL["ais_steps"],
        random_state=_EVAL["seed"],
    ):
        """``ln Z`` with its standard error and interval.

        An AIS or RAISE estimate can take minutes; Ctrl-C stops it within a second and
        raises ``KeyboardInterrupt`` (an interrupted estimate returns no figure).

        Parameters
        ----------
        method : {"auto", "exact", "ais"}, default="auto"
        ais_chains : int, default=100
        ais_steps : int or None, default=None
        random_state : int, default=0

        Returns
        -------
        Estimate
            ``value``, ``stderr``, ``lower``, ``upper``, ``method``.
        """
        check_fitted(self)
        method = check_choice("method", method, ("auto", "exact", "ais"))
        d = self.model_.log_partition(
            method, eval_settings(ais_chains, ais_steps, random_state), self._threads()
        )
        return Estimate.from_dict(d)

    # -- sampling -------------------------------------------------------------------------

    def sample(self, n_samples=1, n_steps=None, random_state=None):
        """``n_samples`` states drawn from the model, as a ``uint8`` array.

        Parameters
        ----------
        n_samples : int, default=1
        n_steps : int or None, default=None
            Gibbs steps per chain. RBMs are always sampled by block Gibbs from uniform
            random states (None: 1,000 steps, as ``boltzkit rbm sample``); other models are
            sampled exactly where affordable unless ``n_steps`` is given.
        random_state : int, Generator or None, default=None
            None: the estimator's ``random_state``.
        """
        check_fitted(self)
        n = check_states_count(n_samples)
        return self.model_.sample(n, self._call_seed(random_state), n_steps, self._threads())

    # -- files ----------------------------------------------------------------------------

    def save(self, path, data_file=None):
        """Writes the model file: the bytes the CLI writes for the same fit.

        Parameters
        ----------
        path : str or path-like
            Where to write the model (safetensors, the format the CLI writes and reads).
        data_file : str or path-like, optional
            The file the training data was read from (e.g. with :func:`boltzkit.read_dataset`).
            The model file then records its path, as given, and the SHA-256 of its bytes
            (``data_file``, ``data_sha256``), as the CLI's ``--data`` does; without it those
            two entries are absent. Every other entry is the CLI's for the same settings and
            seed (RBM, FrankWolfeRBM, FVBM); a warm start from a model file's path
            (``fit(X, init=PATH)``) records that path as given (``init_model``), as the CLI's
            ``--model PATH`` does, and one from a model in memory (``init=estimator``,
            ``warm_start``, ``partial_fit``) records ``"(a model in memory)"``. An FSLL
            file's ``record`` differs: the CLI's holds its run figures (KL to the data,
            timings), a Python fit's the learner's record.

        Returns
        -------
        self
        """
        check_fitted(self)
        self.model_.save(os.fspath(path), None if data_file is None else os.fspath(data_file))
        return self

    @property
    def metadata_(self):
        """The metadata of the model file (settings, seed, algorithm, ``format``)."""
        check_fitted(self)
        return dict(self.model_.metadata)


def as_native_model(model, name="model"):
    """The ``NativeModel`` of ``model``: a fitted estimator's, a ``NativeModel`` itself, or
    the model file at a path (read as ``boltzkit.load`` reads it)."""
    if isinstance(model, _native.NativeModel):
        return model
    if isinstance(model, (str, os.PathLike)):
        return _native.NativeModel.load(os.fspath(model))
    if isinstance(model, ModelMixin):
        check_fitted(model)
        return model.model_
    raise TypeError(
        f"{name} must be a fitted boltzkit estimator, a NativeModel or a model file's path, "
        f"got {type(model).__name__}"
    )


def check_states_count(n):
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n_samples must be an int >= 1, got {n!r}")
    return int(n)
