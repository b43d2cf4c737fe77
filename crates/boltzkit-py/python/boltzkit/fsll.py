"""The full-span log-linear model (Takabatake & Akaho): :class:`FSLL`."""

from __future__ import annotations

from . import _native
from ._base import BaseEstimator
from ._model import ModelMixin
from ._results import parse_record, progress_hook
from ._settings import defaults, settings_json
from ._validation import check_choice, check_number, explain_refusal, states_and_threshold

_FSLL = defaults("fsll")
# The estimator's settings by their names in the library's schema (``FsllParams``): the
# scikit-learn spelling ``max_iter`` is the schema's ``max_iterations``.
FSLL_SETTINGS = {
    "epsilon": "epsilon",
    "max_iter": "max_iterations",
    "refresh_every": "refresh_every",
    "path": "path",
}


class FSLL(ModelMixin, BaseEstimator):
    """Full-span log-linear model: an n-th order Boltzmann machine over finite discrete
    variables, ``ln p(x) = Σ_y θ_y φ_y(x) − ln Z`` over a basis chosen by the greedy MDL
    algorithm (Takabatake & Akaho, Algorithms 1-3, Eq. 7).

    Parameters
    ----------
    epsilon : float, default=1e-4
        Stop when the best candidate improves the cost by less than this (the paper's ε).
    cardinalities : list of int or None, default=None
        Values per variable; None infers them as column maximum + 1 (at least 2).
    max_iter : int, default=1000000
        Iteration cap.
    refresh_every : int, default=100
        Recompute the dual parameters from scratch every this many iterations.
    path : {"auto", "xor", "full"}, default="auto"
        How the dual parameters are kept current (``full``: the paper's Algorithm 3 plus a
        full transform per iteration).
    verbose : int, default=0
    callback : callable or None, default=None
        ``callback(info)`` per iteration (``iteration``, ``cost``, ``n_basis``); returning
        ``False`` stops the fit. Ctrl-C stops it after the current iteration, keeps the model
        so far and raises ``KeyboardInterrupt``.
    random_state : int, RandomState, Generator or None, default=None
        Seed of :meth:`sample`.
    n_jobs : int or None, default=None
        Worker threads: n, or -1 for every core; None follows the limit set around the call
        (``OMP_NUM_THREADS`` as joblib's and dask's workers set it, threadpoolctl's
        ``threadpool_limits``), else every core. Results do not depend on it.

    Attributes
    ----------
    basis_ : ndarray of uint64
        The chosen basis functions' indices ``y`` (mixed radix, variable 0 least
        significant).
    theta_ : ndarray of float64
        Their parameters ``θ_y``.
    cardinalities_ : list of int
    n_features_in_ : int
    record_ : dict
    """

    def __init__(
        self,
        epsilon=_FSLL["epsilon"],
        cardinalities=None,
        max_iter=_FSLL["max_iterations"],
        refresh_every=_FSLL["refresh_every"],
        path=_FSLL["path"],
        verbose=0,
        callback=None,
        random_state=None,
        n_jobs=None,
    ):
        self.epsilon = epsilon
        self.cardinalities = cardinalities
        self.max_iter = max_iter
        self.refresh_every = refresh_every
        self.path = path
        self.verbose = verbose
        self.callback = callback
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _check_values(self, X, *, reset=False, deferred=False):
        cards = getattr(self, "cardinalities_", None) if not reset else self.cardinalities
        max_value = 255 if cards is None else max(int(c) for c in cards) - 1
        n = None if reset else getattr(self, "n_features_in_", None)
        if reset and cards is not None:
            n = len(cards)
        return states_and_threshold(
            X, max_value=max_value, n_features=n, owner=type(self).__name__, deferred=deferred
        )

    def fit(self, X, y=None):
        """Learns the basis and parameters from the rows of ``X``; returns ``self``."""
        check_number("epsilon", self.epsilon, low=0)
        check_number("max_iter", self.max_iter, low=1, integer=True)
        check_number("refresh_every", self.refresh_every, low=1, integer=True)
        check_choice("path", self.path, ("auto", "xor", "full"))
        X = self._check_X(X, reset=True, deferred=True)
        cards = None if self.cardinalities is None else [int(c) for c in self.cardinalities]
        hook = progress_hook("FSLL", self.verbose, self.callback)
        model, record, exc = explain_refusal(
            lambda: _native.fit_fsll(
                X, settings_json(self, FSLL_SETTINGS), cards, hook, self._threads()
            ),
            lambda: self._check_values(X, reset=True),
        )
        self._set_model(model)
        self.record_ = parse_record(record)
        self.stop_reason_ = str(self.record_.get("stop"))
        if exc is not None:
            raise exc
        return self

    def _set_model(self, model):
        self.model_ = model
        basis, theta, cards = model.fsll_params()
        self.basis_ = basis
        self.theta_ = theta
        self.cardinalities_ = list(cards)
        self.n_features_in_ = len(cards)

    @classmethod
    def _from_native(cls, model):
        est = cls()
        est._set_model(model)
        est.cardinalities = list(est.cardinalities_)
        return est


__all__ = ["FSLL"]
