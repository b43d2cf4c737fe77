"""Fully visible Boltzmann machines (Ising models): :class:`FVBM`."""

from __future__ import annotations

import json

from . import _native
from ._base import BaseEstimator, check_fitted
from ._model import ModelMixin
from ._results import WaldTable, parse_record, progress_hook
from ._settings import defaults, settings_json
from ._validation import check_binarize, check_choice, check_number, explain_refusal, seed_from
from ._warnings import MpleExistenceWarning, warn, warn_fit

ALGOS = ("newton", "plm", "bslm", "ga", "mle", "pcd")
_DEFAULTS = {algo: defaults(f"fvbm-{algo}") for algo in ALGOS}
# The estimator's settings by their names in the library's schema (``FvbmParams``: ``algo``
# and the solver's fields): the scikit-learn spellings ``max_iter`` and ``tol`` and the
# paper's ``mu`` are the schema's ``max_iterations``, ``tau`` and ``step``.
FVBM_SETTINGS = {
    "algo": "algo",
    "convention": "convention",
    "l2": "l2",
    "max_iter": "max_iterations",
    "tol": "tau",
    "grad_tol": "grad_tol",
    "check_existence": "check_existence",
    "mu": "step",
    "learning_rate": "learning_rate",
    "n_chains": "n_chains",
    "n_updates": "n_updates",
}


class FVBM(ModelMixin, BaseEstimator):
    """Fully visible Boltzmann machine ``P(x) ∝ exp(½ xᵀMx + bᵀx)``, M symmetric with a zero
    diagonal, fitted by maximum pseudo-likelihood (Newton, BSLM, gradient ascent), exact
    maximum likelihood or PCD.

    Data are 0/1 in every case; ``convention`` says whether the model reads them as spins
    (0 → −1, 1 → +1) or as bits. Statisticians get sandwich standard errors and Wald tests
    (:meth:`standard_errors`, :meth:`wald_test`) and the exact check whether the MPLE exists
    (``mple_exists_``: when it does not, the estimate runs away; use ``l2 > 0``).

    Parameters
    ----------
    algo : {"plm", "newton", "bslm", "ga", "mle", "pcd"}, default="plm"
        ``plm``: L-BFGS on matrix products, the CLI's default too (``d`` from a few to
        thousands, matrix-free existence check); ``newton``: Newton's method on the
        pseudo-likelihood (fast at small ``d``, but a dense Hessian: ``d`` up to about 150);
        ``bslm``: block
        successive lower-bound maximization (the BSLM paper); ``ga``: gradient ascent with
        step ``mu``; ``mle``: exact maximum likelihood by L-BFGS (at most 30 variables);
        ``pcd``: persistent contrastive divergence (seeded by ``random_state``).
    convention : {"spin", "binary"}, default="spin"
    l2 : float, default=0.0
        L2 penalty on every parameter (makes the estimate exist when the MPLE does not).
    max_iter : int or None, default=None
        Iteration budget (sweeps, Newton steps, L-BFGS iterations; None: the solver's, 100000
        for the MPLE solvers, 1000 for ``mle``).
    tol : float or None, default=None
        Gain of an iteration below which MPLE stops (``tau``; None: the solver's, off for
        ``bslm``, 1e-5 for ``ga`` and ``newton``).
    grad_tol : float or None, default=None
        Largest gradient component per sample below which the fit stops (None: the
        solver's).
    check_existence : bool, default=True
        Decide exactly whether the MPLE exists (a linear program), recorded in
        ``mple_exists_``.
    mu : float, default=1.0
        Step of ``ga``.
    learning_rate : float, default=0.01
        Step of ``pcd``.
    n_chains : int, default=100
        Chains of ``pcd``.
    n_updates : int, default=10000
        Updates of ``pcd``.
    binarize : "auto", float or None, default="auto"
        ``"auto"``: 0/1 data are taken as they are, any other data thresholded at 0.5; a
        number ``T``: a value above ``T`` becomes 1, any other 0; None: ``X`` must hold 0/1
        values (anything else is refused, naming the cell). As :class:`RBM`'s, in every
        method.
    verbose : int, default=0
    callback : callable or None, default=None
        ``callback(info)`` per sweep (``iteration``, ``objective``) or PCD update
        (``update``, ``mismatch``); returning ``False`` stops the fit. Ctrl-C stops any
        solver after its current iteration, keeps the model so far and raises
        ``KeyboardInterrupt``.
    random_state : int, RandomState, Generator or None, default=None
        Seed of ``pcd`` and of :meth:`sample`.
    n_jobs : int or None, default=None
        Worker threads: n, or -1 for every core; None follows the limit set around the call
        (``OMP_NUM_THREADS`` as joblib's and dask's workers set it, threadpoolctl's
        ``threadpool_limits``), else every core. Results do not depend on it.

    Attributes
    ----------
    coef_ : ndarray of shape (n_features, n_features)
        The couplings ``M``.
    intercept_ : ndarray of shape (n_features,)
        The fields ``b``.
    mple_exists_ : bool or None
        Whether the maximum pseudo-likelihood estimate exists (None: not checked / not MPLE).
    n_features_in_ : int
    stop_reason_ : str
    record_ : dict
        The learner's record (objective trace, iterations, timings, warnings).
    """

    def __init__(
        self,
        algo="plm",
        convention=_DEFAULTS["plm"]["convention"],
        l2=_DEFAULTS["plm"]["l2"],
        max_iter=None,
        tol=None,
        grad_tol=None,
        check_existence=_DEFAULTS["plm"]["check_existence"],
        mu=_DEFAULTS["ga"]["step"],
        learning_rate=_DEFAULTS["pcd"]["learning_rate"],
        n_chains=_DEFAULTS["pcd"]["n_chains"],
        n_updates=_DEFAULTS["pcd"]["n_updates"],
        binarize="auto",
        verbose=0,
        callback=None,
        random_state=None,
        n_jobs=None,
    ):
        self.algo = algo
        self.convention = convention
        self.l2 = l2
        self.max_iter = max_iter
        self.tol = tol
        self.grad_tol = grad_tol
        self.check_existence = check_existence
        self.mu = mu
        self.learning_rate = learning_rate
        self.n_chains = n_chains
        self.n_updates = n_updates
        self.binarize = binarize
        self.verbose = verbose
        self.callback = callback
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y=None):
        """Fits the model to the 0/1 rows of ``X`` (an array, a DataFrame or a scipy sparse
        matrix; other values as ``binarize`` says); returns ``self``."""
        check_choice("algo", self.algo, ALGOS)
        check_choice("convention", self.convention, ("spin", "binary"))
        check_number("l2", self.l2, low=0)
        check_number("max_iter", self.max_iter, low=1, integer=True, allow_none=True)
        check_number("tol", self.tol, low=0, allow_none=True)
        check_number("grad_tol", self.grad_tol, low=0, allow_none=True)
        check_binarize(self.binarize)
        X = self._check_X(X, reset=True, deferred=True)
        seed = seed_from(self.random_state)
        hook = progress_hook("FVBM", self.verbose, self.callback)
        model, record, exc = explain_refusal(
            lambda: _native.fit_fvbm(
                X,
                settings_json(self, FVBM_SETTINGS, seed=seed),
                hook,
                self._threads(),
            ),
            lambda: self._check_values(X, reset=True),
        )
        record = parse_record(record)
        self._set_model(model)
        self.n_features_in_ = X.shape[1]
        self.seed_ = seed
        self.record_ = record
        self.mple_exists_ = record.get("mple_exists")
        self.stop_reason_ = record.get("stop_reason", str(record.get("stop")))
        if self.mple_exists_ is False:
            # the solver's own criterion may have been met, but there is no estimate to meet
            self.stop_reason_ = (
                f"the MPLE does not exist for these data (solver: {self.stop_reason_})"
            )
        self._X_fit = X
        if exc is not None:
            raise exc
        warn_fit(record, self.stop_reason_)
        return self

    def _set_model(self, model):
        self.model_ = model
        b, M, _ = model.fvbm_params()
        self.intercept_ = b
        self.coef_ = M

    def _inference(self, X, level):
        check_fitted(self)
        if X is None:
            X = getattr(self, "_X_fit", None)
            if X is None:
                raise ValueError("pass X: this model was loaded, not fitted here")
        else:
            X = self._check_X(X)
        check_number("level", level)
        if not 0 < level < 1:
            raise ValueError(f"level must be in (0, 1), got {level}")
        if getattr(self, "mple_exists_", None) is False:
            warn(
                MpleExistenceWarning,
                "the MPLE does not exist for these data, so its standard errors and Wald "
                "tests mean nothing (the figures are those of where the solver stopped); "
                "fit with l2 > 0",
            )
        return _native.fvbm_inference(self.model_, X, float(self.l2), float(level), self._threads())

    def standard_errors(self, X=None):
        """Sandwich (Godambe) standard errors of every parameter, in the layout
        ``b_1 … b_d, m_1_2, m_1_3, …``.

        Parameters
        ----------
        X : array-like or None, default=None
            The data the estimate was fitted on (None: those of the last ``fit``).

        Returns
        -------
        ndarray of shape (d + d(d-1)/2,)
        """
        return self._inference(X, 0.95)["std_error"]

    def wald_test(self, X=None, level=0.95):
        """Wald z-tests of ``θ_a = 0`` for every parameter: a :class:`WaldTable` with
        estimates, standard errors, z, two-sided p-values and ``level`` confidence
        intervals (``print`` it; ``to_pandas()`` for a DataFrame)."""
        return WaldTable(self._inference(X, level), level)

    @classmethod
    def _from_native(cls, model):
        _, _, convention = model.fvbm_params()
        meta = model.metadata
        algo = meta.get("algorithm", "plm")
        algo = algo if algo in ALGOS else "plm"
        est = cls(algo=algo, convention=convention)
        settings = json.loads(meta.get("settings", "{}") or "{}")
        if isinstance(settings.get("l2"), (int, float)):
            est.l2 = settings["l2"]
        if "seed" in meta:
            est.random_state = int(meta["seed"])
        est._set_model(model)
        est.n_features_in_ = model.n_variables
        est.mple_exists_ = None
        return est

    @property
    def couplings_(self):
        """Alias of ``coef_`` (``M``)."""
        return self.coef_


__all__ = ["FVBM"]
