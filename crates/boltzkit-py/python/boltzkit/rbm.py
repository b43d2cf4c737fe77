"""Restricted Boltzmann machines: :class:`RBM` (every trainer of the library) and
:class:`FrankWolfeRBM` (an RBM grown one hidden unit at a time)."""

from __future__ import annotations

import json
import os

import numpy as np

from . import _native
from ._base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin, check_fitted
from ._model import ModelMixin, as_native_model, check_states_count
from ._rbm_units import (
    UNIT_SETTINGS,
    UNITS,
    fit_units,
    is_units,
    refuse_on_binary,
    unit_start,
    unit_states,
)
from ._results import parse_record, progress_hook
from ._settings import defaults, saved, settings_json
from ._validation import (
    check_binarize,
    check_choice,
    check_number,
    check_states,
    explain_refusal,
    seed_from,
)
from ._warnings import warn_fit

ALGORITHMS = "cd-K, pcd-K, cg-K, sdcp-D-K, csdcp-D-K, popcd-K, popcd-K-loo, pt-M, pt-M-K"

#: The RBM learner's default settings (the library's ``RbmParams``), by name.
_RBM = defaults("rbm")
#: The settings ``RBM`` passes to the library (``seed`` is its ``random_state``).
RBM_SETTINGS = tuple(name for name in _RBM if name != "seed")
_FW = defaults("frank-wolfe")
# FrankWolfeRBM's settings by their names in the library's schema (``FwParams``): ``lambda_``
# (``lambda`` is Python's keyword) is the schema's ``lambda``; ``seed`` is ``random_state``.
FW_SETTINGS = {("lambda_" if name == "lambda" else name): name for name in _FW if name != "seed"}
#: The names an older model file's ``settings`` used.
_OLD_NAMES = {"lr": "learning_rate", "lr_end": "learning_rate_end", "epochs": "n_epochs"}


class _RbmMixin(ModelMixin, ClassNamePrefixFeaturesOutMixin, TransformerMixin):
    """What both RBM estimators answer: features (named ``rbm0``, ``rbm1``, … by
    ``get_feature_names_out``; a DataFrame with ``set_output(transform="pandas")``), Gibbs
    steps, the parameters, the warm start. A ``TransformerMixin`` itself, so that
    scikit-learn wraps the ``transform`` defined here for ``set_output``."""

    def _start_model(self, init):
        """The model a fit starts from with the file it was read from (None for a model in
        memory; a model file records the path as the CLI records ``--model``): ``init``
        (:func:`as_native_model`), else with ``warm_start`` this estimator's fitted model,
        else None (a fresh one)."""
        if init is None:
            if getattr(self, "warm_start", False) and getattr(self, "model_", None) is not None:
                return self.model_, None
            return None
        path = os.fspath(init) if isinstance(init, (str, os.PathLike)) else None
        return as_native_model(init, "init"), path

    @property
    def _n_features_out(self):
        """The hidden units: the width of :meth:`transform`'s output."""
        return self._params()[0].shape[1]

    def transform(self, X):
        """Hidden-unit expectations ``E[h | v] = p(h_j = 1 | v)``, the learned features.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_features)

        Returns
        -------
        ndarray of shape (n_samples, n_hidden), float32
        """
        check_fitted(self)
        if self.model_.kind == "rbm-units":
            return self.model_.hidden_means(self._check_X(X), self._threads())
        return self.model_.hidden_probs(self._check_X(X), self._threads())

    def gibbs(self, v, random_state=None):
        """One block-Gibbs step from each row of ``v``: ``h ~ p(h|v)``, then ``v ~ p(v|h)``.

        Parameters
        ----------
        v : array-like of shape (n_samples, n_features)
        random_state : int, Generator or None, default=None
            None: the estimator's ``random_state`` (an int gives the same draw every call).

        Returns
        -------
        ndarray of shape (n_samples, n_features), uint8
        """
        check_fitted(self)
        out = self.model_.gibbs(self._check_X(v), self._call_seed(random_state), self._threads())
        return out[0] if self.model_.kind == "rbm-units" else out

    def _params(self):
        check_fitted(self)
        if self.model_.kind == "rbm-units":
            p = self.model_.params()
            hidden = next((p[k] for k in ("h.bias", "h.theta") if k in p), None)
            return p["W"], p.get("v.bias", p.get("v.fields")), hidden
        return self.model_.rbm_params()

    @property
    def unit_params_(self):
        """Every parameter by its name in the model file (``W``, ``v.fields``, ``v.q``,
        ``h.gamma_plus``, …; the layers' tensors of ``boltzkit/rbm/v2`` files); a binary
        model's ``W``, ``v.bias``, ``h.bias``."""
        check_fitted(self)
        if self.model_.kind == "rbm-units":
            return dict(self.model_.params())
        W, b, c = self.model_.rbm_params()
        return {"W": W, "v.bias": b, "h.bias": c}

    @property
    def components_(self):
        """Weights ``W`` transposed, shape (n_hidden, n_features), as scikit-learn's."""
        return np.ascontiguousarray(self._params()[0].T)

    @property
    def intercept_visible_(self):
        """Visible biases ``b``, shape (n_features,) (categorical units: the fields, one per
        site and state)."""
        return self._params()[1]

    @property
    def intercept_hidden_(self):
        """Hidden biases ``c``, shape (n_hidden,) (ReLU units: the thresholds ``θ``; dReLU
        units: None, see :attr:`unit_params_`)."""
        return self._params()[2]

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # transform returns float32 whatever the input (the library's RBM precision)
        tags.transformer_tags.preserves_dtype = ["float32"]
        return tags


class RBM(_RbmMixin, BaseEstimator):
    """Restricted Boltzmann machine with binary (0/1) units, trained by any of the library's
    trainers, or with other unit types (``visible=``, ``hidden=``).

    The energy is ``E(v, h) = -vᵀWh - bᵀv - cᵀh``. A fresh model starts from small random
    weights (sd 0.01) and the data's base-rate visible biases, as ``boltzkit rbm fit``; with
    the same ``random_state`` and settings, ``fit`` gives the CLI's model bit for bit.

    Ported from ``sklearn.neural_network.BernoulliRBM`` by a rename (``n_components`` →
    ``n_hidden``, ``n_iter`` → ``n_epochs``): ``fit``, ``partial_fit``, ``transform``,
    ``score_samples`` and ``gibbs`` have the same names. One difference: our
    ``score_samples`` is the log-likelihood ``ln p(v)`` (exact when the smaller layer is small
    enough, AIS otherwise, ``method=`` to choose), theirs a one-unit pseudo-likelihood.

    The parameters from ``n_hidden`` to ``sd_floor`` are the library's settings
    (``RbmParams``, and ``UnitRbmParams`` for other unit types: the names of a model file's
    ``settings``, the defaults the library's), passed to it as one settings object and
    checked there.

    Unit types (issue 34): ``visible="categorical"`` (Potts units: ``X`` holds integer codes,
    ``n_states`` states per site) or ``"gaussian"`` (real values, standardized by default),
    ``hidden="relu"``, ``"drelu"`` (PGM's double-sided ReLU) or ``"gaussian"``. Such an RBM
    trains with ``cd-K`` or ``pcd-K``, sample weights (``fit(X, sample_weight=w)``), L2 and
    PGM's L1², as ``boltzkit rbm fit --visible-units V --hidden-units H`` (the same library
    run: with the same ``random_state`` and settings, the same model file); it is scored
    exactly where a discrete layer is small (at most 2^22 states) and by forward AIS otherwise,
    and sampled on both layers. ``visible="bernoulli", hidden="bernoulli"`` is the binary RBM
    above, unchanged.

    Parameters
    ----------
    n_hidden : int, default=256
        Number of hidden units.
    weight_sd : float, default=0.01
        Standard deviation of the initial weights (Sec. 4.1 of the S-DCP paper).
    n_epochs : int, default=100
        Passes over the data.
    batch_size : int, default=100
        Rows per mini-batch; 0 is the full batch.
    algo : str, default="cd-1"
        The trainer in the library's notation: ``cd-K`` (contrastive divergence, K Gibbs
        steps), ``pcd-K`` (persistent CD), ``cg-K`` (centered gradient), ``sdcp-D-K``
        (stochastic difference-of-convex programming, D inner steps), ``csdcp-D-K``
        (centered S-DCP), ``popcd-K`` / ``popcd-K-loo`` (population CD), ``pt-M`` /
        ``pt-M-K`` (parallel tempering, M replicas).
    learning_rate : float, default=0.03
        Step size (the first epoch's with ``learning_rate_end``), measured best at the other
        defaults (BENCHMARKS.md, "Default learning rate").
    learning_rate_end : float or None, default=None
        Last epoch's step size: a linear schedule from ``learning_rate``.
    momentum : float, default=0.0
        Momentum in [0, 1).
    weight_decay : float, default=0.0
        L2 penalty on ``W``.
    shuffle : bool, default=True
        Shuffle the rows at each epoch.
    max_abs_param : float, default=10000.0
        The divergence guard: a parameter larger in magnitude (or not finite) stops training
        with the last good model; ``float("inf")`` keeps only the not-finite check.
    nu_mu : float, default=0.01
        Sliding factor of the visible offsets of the centered trainers (``cg``, ``csdcp``).
    nu_lambda : float, default=0.01
        Sliding factor of their hidden offsets.
    divergence_tol : float, default=0.1
        The divergence watch (0: off): when the pseudo-likelihood of fixed training (row,
        unit) pairs, or the monitored log-likelihood, falls below its best after an epoch by
        more than this fraction of the independent-units model's figure (its entropy per
        unit on those pairs), training stops as diverged with the best model kept
        (``stop_reason_`` starts with ``"diverged"``, a ``DivergenceWarning``).
    visible : {"bernoulli", "categorical", "gaussian"}, default="bernoulli"
        The visible units' type.
    hidden : {"bernoulli", "relu", "drelu", "gaussian"}, default="bernoulli"
        The hidden units' type.
    l1_squared : float, default=0.0
        PGM's L1² penalty ``λ/(2·width_v) Σ_μ (Σ_i |W_iμ|)²`` on each hidden unit's weights
        (unit types other than 0/1).
    clip_norm : float, default=0.0
        Clip each mini-batch gradient to this Euclidean norm (Liao et al. 2022, for Gaussian
        layers); 0: off.
    optimizer : {"sgd", "adam"}, default="sgd"
        The update rule of unit-type RBMs: SGD with ``momentum``, or PGM's ADAM.
    adam_beta1 : float, default=0.0
        ADAM's first-moment decay (0: none, as PGM's updates of ``W`` and the fields).
    adam_beta2 : float, default=0.99
        ADAM's second-moment decay.
    adam_epsilon : float, default=0.001
        ADAM's ``ε`` added to ``√v̂``.
    decay_after : float or None, default=None
        PGM's rate decay: the rate constant for this fraction of the epochs, then geometric
        to ``learning_rate_end`` (default 1 % of ``learning_rate``) at the last epoch.
    saturate : float or None, default=None
        PGM's gradient saturation: each gradient coordinate clipped to ``[-c, c]``.
    zero_sum_gauge : bool, default=False
        PGM's zero-sum gauge of categorical visible units after every update.
    standardize : bool, default=True
        Train Gaussian visible units on standardized columns; the model is written back in
        the data's units (the same density).
    sd_floor : float, default=0.1
        Each column's standard deviation floored at this fraction of the largest column's.
    n_states : int, sequence of int or None, default=None
        States per site of categorical visible units (one number for every site, or one per
        site); None: each column's largest code + 1 (at least 2), as the CLI reads codes.
    binarize : "auto", float or None, default="auto"
        ``"auto"``: 0/1 data are taken as they are; any other data (grayscale or
        probabilities in [0, 1], what ``BernoulliRBM`` takes) are thresholded at 0.5, and the
        model file records ``binarize`` as the CLI's ``--binarize threshold:0.5`` would. A
        number ``T``: a value above ``T`` becomes 1, any other 0 (e.g. 127 for raw 0-255
        pixels). None: ``X`` must hold 0/1 values (anything else is refused, naming the
        cell). In every method.
    warm_start : bool, default=False
        ``fit`` continues from the model of the previous ``fit`` (``n_epochs`` more epochs)
        instead of starting afresh, as ``fit(X, init=self)``.
    monitor : {None, "exact", "ais"}, default=None
        The training log-likelihood computed every ``eval_every`` epochs and recorded in
        ``history_`` (``"exact"`` needs a layer of at most about 25 units).
    eval_every : int, default=1
        Epochs between evaluations (monitor, ``verbose`` lines, ``callback`` calls).
    verbose : int, default=0
        Print one line per evaluation to stderr.
    callback : callable or None, default=None
        ``callback(info)`` per evaluation, ``info`` a dict with ``epoch``, ``step``,
        ``wall_s``, ``learning_rate``, ``metrics``; returning ``False`` stops training (the
        model so far is kept); an exception stops it and is raised from ``fit``.
    random_state : int, RandomState, Generator or None, default=None
        Seed of the initialization, the mini-batch order and the chains (the CLI's
        ``--seed``). None draws a fresh seed, recorded in ``seed_``.
    n_jobs : int or None, default=None
        Worker threads: n, or -1 for every core; None follows the limit set around the call
        (``OMP_NUM_THREADS`` as joblib's and dask's workers set it, threadpoolctl's
        ``threadpool_limits``), else every core. Results do not depend on it.

    Attributes
    ----------
    components_ : ndarray of shape (n_hidden, n_features)
    intercept_visible_ : ndarray of shape (n_features,)
    intercept_hidden_ : ndarray of shape (n_hidden,)
    n_features_in_ : int
    seed_ : int
        The seed the last ``fit`` used.
    stop_reason_ : str
        Why training stopped (all epochs done, diverged, interrupted, ...).
    history_ : list of dict
        The monitored metrics per evaluation.
    model_ : NativeModel
        The fitted model (file format of ``boltzkit rbm``).

    Examples
    --------
    >>> import numpy as np, boltzkit
    >>> X = (np.random.default_rng(0).random((200, 9)) < 0.3).astype(np.uint8)
    >>> rbm = boltzkit.RBM(n_hidden=4, n_epochs=20, learning_rate=0.1, random_state=1).fit(X)
    >>> rbm.transform(X).shape
    (200, 4)
    >>> float(rbm.score(X)) < 0
    True
    """

    def __init__(
        self,
        n_hidden=_RBM["n_hidden"],
        weight_sd=_RBM["weight_sd"],
        n_epochs=_RBM["n_epochs"],
        batch_size=_RBM["batch_size"],
        algo=_RBM["algo"],
        learning_rate=_RBM["learning_rate"],
        learning_rate_end=_RBM["learning_rate_end"],
        momentum=_RBM["momentum"],
        weight_decay=_RBM["weight_decay"],
        shuffle=_RBM["shuffle"],
        max_abs_param=_RBM["max_abs_param"],
        nu_mu=_RBM["nu_mu"],
        nu_lambda=_RBM["nu_lambda"],
        divergence_tol=_RBM["divergence_tol"],
        visible=UNITS["visible"],
        hidden=UNITS["hidden"],
        l1_squared=UNITS["l1_squared"],
        clip_norm=UNITS["clip_norm"],
        optimizer=UNITS["optimizer"],
        adam_beta1=UNITS["adam_beta1"],
        adam_beta2=UNITS["adam_beta2"],
        adam_epsilon=UNITS["adam_epsilon"],
        decay_after=UNITS["decay_after"],
        saturate=UNITS["saturate"],
        zero_sum_gauge=UNITS["zero_sum_gauge"],
        standardize=UNITS["standardize"],
        sd_floor=UNITS["sd_floor"],
        n_states=None,
        binarize="auto",
        warm_start=False,
        monitor=None,
        eval_every=1,
        verbose=0,
        callback=None,
        random_state=None,
        n_jobs=None,
    ):
        self.n_hidden = n_hidden
        self.weight_sd = weight_sd
        self.n_epochs = n_epochs
        self.batch_size = batch_size
        self.algo = algo
        self.learning_rate = learning_rate
        self.learning_rate_end = learning_rate_end
        self.momentum = momentum
        self.weight_decay = weight_decay
        self.shuffle = shuffle
        self.max_abs_param = max_abs_param
        self.nu_mu = nu_mu
        self.nu_lambda = nu_lambda
        self.divergence_tol = divergence_tol
        self.visible = visible
        self.hidden = hidden
        self.l1_squared = l1_squared
        self.clip_norm = clip_norm
        self.optimizer = optimizer
        self.adam_beta1 = adam_beta1
        self.adam_beta2 = adam_beta2
        self.adam_epsilon = adam_epsilon
        self.decay_after = decay_after
        self.saturate = saturate
        self.zero_sum_gauge = zero_sum_gauge
        self.standardize = standardize
        self.sd_floor = sd_floor
        self.n_states = n_states
        self.binarize = binarize
        self.warm_start = warm_start
        self.monitor = monitor
        self.eval_every = eval_every
        self.verbose = verbose
        self.callback = callback
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _check_params(self):
        check_number("n_hidden", self.n_hidden, low=1, integer=True)
        check_number("n_epochs", self.n_epochs, low=1, integer=True)
        check_number("batch_size", self.batch_size, low=0, integer=True)
        check_number("eval_every", self.eval_every, low=1, integer=True)
        check_number("learning_rate", self.learning_rate)
        check_number("learning_rate_end", self.learning_rate_end, allow_none=True)
        check_number("momentum", self.momentum)
        check_number("weight_decay", self.weight_decay)
        check_number("weight_sd", self.weight_sd)
        check_number("max_abs_param", self.max_abs_param, allow_inf=True)
        check_number("nu_mu", self.nu_mu)
        check_number("nu_lambda", self.nu_lambda)
        check_number("divergence_tol", self.divergence_tol)
        check_binarize(self.binarize)
        check_choice("monitor", self.monitor, (None, "exact", "ais"))
        if not isinstance(self.algo, str):
            raise ValueError(f"algo must be a string such as 'pcd-1' ({ALGORITHMS})")
        for name in ("l1_squared", "clip_norm", "adam_beta1", "adam_beta2", "adam_epsilon"):
            check_number(name, getattr(self, name))
        check_number("sd_floor", self.sd_floor)
        check_number("decay_after", self.decay_after, allow_none=True)
        check_number("saturate", self.saturate, allow_none=True)
        check_choice("optimizer", self.optimizer, ("sgd", "adam"))

    def _units(self):
        """Whether this RBM has a layer other than 0/1 (the unit trainer's)."""
        return is_units(self)

    def _check_values(self, X, *, reset=False, deferred=False):
        if not self._units():
            return super()._check_values(X, reset=reset, deferred=deferred)
        n = None if reset else getattr(self, "n_features_in_", None)
        return unit_states(self, X, reset=reset, n_features=n)

    def fit(self, X, y=None, init=None, sample_weight=None):
        """Trains the RBM on ``X`` (an array, a DataFrame or a scipy sparse matrix); returns
        ``self``.

        A fresh model unless ``init`` or ``warm_start``: ``init`` (a fitted :class:`RBM` or
        :class:`FrankWolfeRBM`, a ``NativeModel`` or a model file's path) is the model
        training starts from, as the CLI's ``boltzkit rbm fit --model FILE`` (the same
        library call: with the same ``random_state`` and settings, the same bits);
        ``warm_start=True`` starts from this estimator's model of the previous fit. The
        starting model's hidden units must number ``n_hidden``.

        ``sample_weight`` (one weight per row, e.g. sequence weights) weights the rows of RBMs
        with unit types other than 0/1 (as the CLI's ``--weights``); those start afresh
        (``init`` and ``warm_start`` are for binary RBMs).

        Ctrl-C stops training after the current update: the estimator keeps the last good
        model, then ``KeyboardInterrupt`` is raised.
        """
        self._check_params()
        if self._units():
            return self._fit_units(X, init, sample_weight)
        refuse_on_binary(self, RBM_SETTINGS, sample_weight)
        start = self._start_model(init)
        if start is not None and start[0].kind in ("rbm", "frank-wolfe"):
            hidden = start[0].rbm_params()[0].shape[1]
            if hidden != self.n_hidden:
                raise ValueError(
                    f"n_hidden={self.n_hidden} does not match the {hidden} hidden units of the "
                    f"starting model (set n_hidden={hidden})"
                )
        X, threshold = self._validate(X, reset=True, deferred=True)
        seed = seed_from(self.random_state)
        self._train(X, threshold, seed, init=start, n_epochs=self.n_epochs, reset=True)
        self.seed_ = seed
        self.n_partial_fits_ = 0
        return self

    def _fit_units(self, X, init, sample_weight):
        """``fit`` of an RBM with unit types other than 0/1 (``_rbm_units``)."""
        if self.monitor is not None:
            raise ValueError(
                f"monitor is for bernoulli/bernoulli RBMs; score a {self.visible}/"
                f"{self.hidden} RBM after fitting (score, log_likelihood)"
            )
        start = unit_start(self, init)
        X, _ = self._validate(X, reset=start is None)
        seed = seed_from(self.random_state)
        self._train_units(X, sample_weight, seed, start)
        self.seed_ = seed
        self.n_partial_fits_ = 0
        return self

    def _train_units(self, X, sample_weight, seed, start, **override):
        """Trains a unit-type RBM from ``start`` (None: a fresh model) and keeps the model."""
        hook = progress_hook("RBM", self.verbose, self.callback)
        model, record, exc = fit_units(
            self, X, sample_weight, seed, hook, self._threads(), start, **override
        )
        self._keep(model, record, X, exc)

    def _keep(self, model, record, X, exc):
        """Keeps a fit's model and record (JSON), then raises its exception or warns."""
        record = parse_record(record)
        self.model_ = model
        self.n_features_in_ = X.shape[1]
        self.record_ = record
        self.stop_reason_ = record["stop_reason"]
        self.history_ = record["history"]
        if exc is not None:
            raise exc
        warn_fit(record, self.stop_reason_)

    def sample(self, n_samples=1, n_steps=None, random_state=None, return_hidden=False):
        """``n_samples`` states drawn from the model by block Gibbs (as ``boltzkit rbm
        sample``).

        Parameters
        ----------
        n_samples : int, default=1
        n_steps : int or None, default=None
            Gibbs steps per chain (None: 1,000). Binary RBMs start from uniform random
            states, other unit types from the visible layer's independent model.
        random_state : int, Generator or None, default=None
            None: the estimator's ``random_state``.
        return_hidden : bool, default=False
            Also return the hidden layer's last states (RBMs with unit types other than 0/1).

        Returns
        -------
        ndarray of shape (n_samples, n_features)
            ``uint8`` states or codes (a categorical site's state), ``float64`` values of
            Gaussian units; with ``return_hidden``, a pair ``(visible, hidden)``, the hidden
            values ``float32``.
        """
        check_fitted(self)
        if self.model_.kind != "rbm-units":
            if return_hidden:
                raise ValueError("return_hidden is for RBMs with unit types other than 0/1")
            return super().sample(n_samples, n_steps, random_state)
        n = check_states_count(n_samples)
        steps = 1000 if n_steps is None else check_number("n_steps", n_steps, low=0, integer=True)
        v, h = self.model_.sample(n, self._call_seed(random_state), int(steps), self._threads())
        return (v, h) if return_hidden else v

    def partial_fit(self, X, y=None, sample_weight=None):
        """One epoch on ``X`` (one mini-batch per ``batch_size`` rows), starting from the
        current model (a fresh one on the first call); returns ``self``. ``sample_weight``:
        as :meth:`fit` (unit types other than 0/1; later calls train on ``X`` as given, in
        the data's units, without standardizing it).

        Each call seeds its epoch from ``random_state`` and the number of calls so far, so a
        sequence of calls is reproducible. Persistent chains restart at each call.
        """
        self._check_params()
        fitted = getattr(self, "model_", None) is not None
        units = self._units()
        if not units:
            refuse_on_binary(self, RBM_SETTINGS, sample_weight)
        X, threshold = self._validate(X, reset=not fitted, deferred=True)
        base = self.seed_ if fitted else seed_from(self.random_state)
        done = self.n_partial_fits_ if fitted else 0
        seed = (base + 0x9E3779B97F4A7C15 * (done + 1)) % 2**64
        try:
            if units:
                start = self.model_ if fitted else None
                self._train_units(X, sample_weight, seed, start, n_epochs=1)
            else:
                self._train(
                    X,
                    threshold,
                    seed,
                    init=(self.model_, None) if fitted else None,
                    n_epochs=1,
                    reset=not fitted,
                )
        finally:
            # a first call that got a model (finished, or Ctrl-C) starts the count; a refused
            # one (bad X, checked by the library) leaves the estimator as it was
            if not fitted and getattr(self, "model_", None) is not None:
                self.seed_, self.n_partial_fits_ = base, 0
        self.n_partial_fits_ += 1
        return self

    def _train(self, X, threshold, seed, init, n_epochs, reset):
        """Trains from ``init``, a starting model and the file it was read from
        (:meth:`_start_model`), or a fresh model (None)."""
        hook = progress_hook("RBM", self.verbose, self.callback)
        model, record, exc = explain_refusal(
            lambda: _native.fit_rbm(
                X,
                settings_json(self, RBM_SETTINGS, n_epochs=int(n_epochs), seed=seed),
                init,
                (self.monitor or "none", int(self.eval_every)),
                hook,
                self._threads(),
                threshold,
            ),
            lambda: self._check_values(X, reset=reset),
        )
        self._keep(model, record, X, exc)

    @classmethod
    def _from_native(cls, model):
        if model.kind == "rbm-units":
            return cls._from_unit_model(model)
        W, _, _ = model.rbm_params()
        meta = model.metadata
        est = cls(n_hidden=W.shape[1])
        if "seed" in meta:
            est.random_state = int(meta["seed"])
            est.seed_ = int(meta["seed"])
        settings = json.loads(meta.get("settings", "{}") or "{}")
        for key, value in settings.items():
            name = _OLD_NAMES.get(key, key)
            if name in RBM_SETTINGS and key != "algo" and name != "n_hidden":
                if isinstance(value, float) and key in _OLD_NAMES:
                    # an older file's f32 settings read back at their shortest decimal
                    value = float(str(np.float32(value)))
                setattr(est, name, saved(value, _RBM.get(name)))
        if "-" in str(settings.get("algo", "")):
            est.algo = settings["algo"]  # an older file recorded the family only
        est.model_ = model
        est.n_features_in_ = W.shape[0]
        est.stop_reason_ = meta.get("stop_reason")
        return est

    @classmethod
    def _from_unit_model(cls, model):
        """An RBM of unit types holding ``model`` (a ``NativeUnitModel``), its settings
        those its file records."""
        est = cls(n_hidden=model.n_hidden)
        settings = json.loads(model.metadata.get("settings", "{}") or "{}")
        for name in UNIT_SETTINGS:
            if name in settings and name != "n_hidden":
                setattr(est, name, saved(settings[name], UNITS.get(name)))
        est.visible, est.hidden = model.visible_units, model.hidden_units
        if "seed" in settings:
            est.random_state = est.seed_ = int(settings["seed"])
        est.n_states = model.states
        est.model_ = model
        est.n_features_in_ = model.n_variables
        est.stop_reason_ = model.metadata.get("stop_reason")
        return est


class FrankWolfeRBM(_RbmMixin, BaseEstimator):
    """An RBM grown by Frank-Wolfe, one hidden unit per iteration (Ping, Liu & Ihler 2016).

    Each iteration adds the unit that best improves the likelihood's linearization (the
    Eq. 9 subproblem, by L-BFGS) and re-fits the visible biases (Eq. 10). With a validation
    set the train/validation gap is evaluated every ``eval_every`` units and the size where
    it is smallest is selected.

    Parameters
    ----------
    max_units : int, default=100
        Units to grow (``T``).
    lambda_ : float, default=0.1
        ``λ`` of Eqs. 6 and 9 (the weights' norm bound).
    bias_learning_rate : float, default=0.5
        ``η`` of Eq. 10.
    n_chains : int, default=2000
        Persistent chains of the sampler.
    gibbs_steps : int, default=3
        Gibbs transitions per draw (the library's default, measured: on Caltech101 one step
        lets the grown model fall far below what three reach).
    lbfgs_iterations : int, default=50
    lbfgs_tol : float, default=1e-5
    subproblem_starts : int, default=1
        Random starts of the subproblem (the best kept).
    bias_steps : int, default=20
    bias_tol : float, default=0.015
    init_sd : float, default=0.01
        Standard deviation of the subproblem's random start and of the first unit.
    away_steps : bool, default=False
        Allow away steps (removing a unit).
    free_alpha : float or None, default=None
        A step for a free ``α`` (fractional RBM); None keeps ``α`` = units (a standard RBM).
    eval_every : int, default=10
        Units between size evaluations.
    early_stop : bool, default=False
        Stop once the train − validation gap grows by ``gap_tol`` (needs ``X_valid``).
    gap_tol : float, default=5.0
    fall_tol : float, default=5.0
        Objective guard: while the exact training log-likelihood is cheap (at most 20 units),
        stop and keep the best model when it stays more than this many nats below its best
        for ``fall_patience`` iterations in a row (``float("inf")``: off).
    fall_patience : int, default=4
    binarize : "auto", float or None, default="auto"
        As :class:`RBM`.
    warm_start : bool, default=False
        ``fit`` grows on from the model of the previous ``fit``, as ``fit(X, init=self)``,
        up to ``max_units`` units in all (raise it to grow more, as ``n_estimators`` of
        scikit-learn's warm-started ensembles).
    verbose : int, default=0
    callback : callable or None, default=None
        ``callback(info)`` after every iteration (``iteration``, ``units``, ``alpha``,
        ``wall_s``, ``evaluation``, ``metrics``); ``False`` stops growing.
    random_state : int, RandomState, Generator or None, default=None
    n_jobs : int or None, default=None
        Worker threads: n, or -1 for every core; None follows the limit set around the call
        (``OMP_NUM_THREADS`` as joblib's and dask's workers set it, threadpoolctl's
        ``threadpool_limits``), else every core. Results do not depend on it.

    Attributes
    ----------
    n_units_ : int
        Units grown.
    selected_units_ : int or None
        The size selected by the validation gap (with ``X_valid``).
    selected_model_ : FrankWolfeRBM or None
        The fitted model of that size (score, sample, save it like this one).
    gap_curve_ : list of (units, gap)
        The train − validation gap at each evaluation.
    components_, intercept_visible_, intercept_hidden_ : as :class:`RBM`
    """

    def __init__(
        self,
        max_units=_FW["max_units"],
        lambda_=_FW["lambda"],
        bias_learning_rate=_FW["bias_learning_rate"],
        n_chains=_FW["n_chains"],
        gibbs_steps=_FW["gibbs_steps"],
        lbfgs_iterations=_FW["lbfgs_iterations"],
        lbfgs_tol=_FW["lbfgs_tol"],
        subproblem_starts=_FW["subproblem_starts"],
        bias_steps=_FW["bias_steps"],
        bias_tol=_FW["bias_tol"],
        init_sd=_FW["init_sd"],
        away_steps=_FW["away_steps"],
        free_alpha=_FW["free_alpha"],
        eval_every=_FW["eval_every"],
        early_stop=_FW["early_stop"],
        gap_tol=_FW["gap_tol"],
        fall_tol=_FW["fall_tol"],
        fall_patience=_FW["fall_patience"],
        binarize="auto",
        warm_start=False,
        verbose=0,
        callback=None,
        random_state=None,
        n_jobs=None,
    ):
        self.max_units = max_units
        self.lambda_ = lambda_
        self.bias_learning_rate = bias_learning_rate
        self.n_chains = n_chains
        self.gibbs_steps = gibbs_steps
        self.lbfgs_iterations = lbfgs_iterations
        self.lbfgs_tol = lbfgs_tol
        self.subproblem_starts = subproblem_starts
        self.bias_steps = bias_steps
        self.bias_tol = bias_tol
        self.init_sd = init_sd
        self.away_steps = away_steps
        self.free_alpha = free_alpha
        self.eval_every = eval_every
        self.early_stop = early_stop
        self.gap_tol = gap_tol
        self.fall_tol = fall_tol
        self.fall_patience = fall_patience
        self.binarize = binarize
        self.warm_start = warm_start
        self.verbose = verbose
        self.callback = callback
        self.random_state = random_state
        self.n_jobs = n_jobs

    def fit(self, X, y=None, X_valid=None, init=None):
        """Grows the model on ``X`` (``X_valid``: the validation rows of size selection);
        returns ``self``. ``init`` (a fitted :class:`RBM` or :class:`FrankWolfeRBM`, a
        ``NativeModel`` or a model file's path) is the standard RBM growing starts from, as
        the CLI's ``--model FILE`` (Sec. 3.2); ``warm_start=True`` starts from this
        estimator's model of the previous fit. Ctrl-C keeps the units grown so far, then
        raises ``KeyboardInterrupt``."""
        for name in ("max_units", "n_chains", "gibbs_steps", "lbfgs_iterations"):
            check_number(name, getattr(self, name), low=1, integer=True)
        check_number("eval_every", self.eval_every, low=0, integer=True)
        check_binarize(self.binarize)
        start = self._start_model(init)
        X, threshold = self._validate(X, reset=True, deferred=True)
        valid = None

        def check_valid(deferred=False):
            return check_states(
                X_valid,
                name="X_valid",
                binarize=self.binarize,
                n_features=X.shape[1],
                owner=type(self).__name__,
                deferred=deferred,
            )

        if X_valid is not None:
            valid = check_valid(deferred=True)
        elif self.early_stop:
            raise ValueError("early_stop=True needs X_valid")
        seed = seed_from(self.random_state)
        hook = progress_hook("FrankWolfeRBM", self.verbose, self.callback)
        model, selected, record, exc = explain_refusal(
            lambda: _native.fit_frank_wolfe(
                X,
                settings_json(self, FW_SETTINGS, seed=seed),
                valid,
                start,
                hook,
                self._threads(),
                threshold,
            ),
            lambda: self._check_values(X, reset=True),
            lambda: valid is not None and check_valid(),
        )
        record = parse_record(record)
        self.model_ = model
        self.selected_model_ = None if selected is None else FrankWolfeRBM._from_native(selected)
        self.n_features_in_ = X.shape[1]
        self.seed_ = seed
        self.record_ = record
        self.stop_reason_ = record["stop_reason"]
        self.n_units_ = (
            model.fw_info()[0] if model.kind == "frank-wolfe" else self.components_.shape[0]
        )
        self.selected_units_ = record.get("selected_units")
        self.gap_curve_ = [
            (e["units"], e["gap"])
            for e in record.get("evaluations", [])
            if e.get("gap") is not None
        ]
        if exc is not None:
            raise exc
        return self

    @classmethod
    def _from_native(cls, model):
        if model.kind == "frank-wolfe":
            n_units = model.fw_info()[0]
        else:  # a standard model read back as the RBM file it is
            n_units = model.rbm_params()[0].shape[1]
        est = cls(max_units=max(n_units, 1))
        meta = model.metadata
        if "seed" in meta:
            est.random_state = int(meta["seed"])
            est.seed_ = int(meta["seed"])
        est.model_ = model
        est.selected_model_ = None
        est.n_features_in_ = model.n_variables
        est.n_units_ = n_units
        est.stop_reason_ = meta.get("stop_reason")
        return est
