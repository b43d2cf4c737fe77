"""Potts models of sequence alignments and direct coupling analysis (DCA): :class:`Potts`,
:func:`read_alignment`, :func:`sequence_weights`, :func:`contact_precision`."""

from __future__ import annotations

import json
import os
import struct
import tempfile
import zlib
from dataclasses import dataclass

import numpy as np

from . import _native
from ._base import BaseEstimator, check_fitted
from ._model import ModelMixin
from ._results import parse_record, progress_hook
from ._settings import defaults, settings_json
from ._validation import check_choice, check_number, check_states, explain_refusal, threads_from

PROTEIN = "-ACDEFGHIKLMNPQRSTVWY"

# The pipeline's fit (the library's potts::dca::pipeline_params), Potts's defaults.
_POTTS = defaults("potts")
# Potts's settings by their names in the library's schema (``PlmParams``), in its order: the
# scikit-learn spellings ``max_iter`` and ``tol`` are ``max_iterations`` and ``grad_tol``;
# ``ignore_gaps`` is ``gap_state`` (True: code 0, the gap of every named alphabet).
POTTS_SETTINGS = {
    "mode": "mode",
    "lambda_h": "lambda_h",
    "lambda_j": "lambda_j",
    "lambda_scale": "lambda_scale",
    "lambda_group": "lambda_group",
    "ignore_gaps": "gap_state",
    "max_iter": "max_iterations",
    "tol": "grad_tol",
    "objective_tol": "objective_tol",
    "objective_window": "objective_window",
    "lbfgs_memory": "lbfgs_memory",
    "memory_limit": "memory_limit",
}
_CONTACTS = defaults("contacts")


@dataclass
class Alignment:
    """An alignment read by :func:`read_alignment`.

    Attributes
    ----------
    codes : ndarray of shape (n_sequences, n_sites), uint8
        Letters as codes (positions in ``alphabet``).
    names : list of str
    columns : list of int
        The file's column (0-based) of each kept site.
    positions : list of int
        Each site's position as plmc reports it (1-based; shifted by the focus region).
    alphabet : str
    focus : int or None
        The row of the focus sequence.
    rows : list of int
        The file's index of each kept sequence.
    n_read : int
        Sequences in the file.
    """

    codes: np.ndarray
    names: list
    columns: list
    positions: list
    alphabet: str
    focus: object
    rows: list
    n_read: int


def read_alignment(
    path,
    alphabet="protein",
    focus=None,
    format=None,
    max_sequence_gaps=1.0,
    max_column_gaps=1.0,
    skip_unknown=False,
    for_fit=True,
):
    """Reads a FASTA, A2M or Stockholm alignment (optionally gzipped) as integer codes.

    Parameters
    ----------
    path : str or path-like
    alphabet : str, default="protein"
        ``"protein"`` (``-ACDEFGHIKLMNPQRSTVWY``, gap first as plmc), ``"rna"``, ``"dna"``,
        or the letters in code order.
    focus : str or None
        Keep the columns where this sequence (its name, or the part before ``/``) has an
        uppercase, non-gap letter (plmc's ``-f``).
    format : {"fasta", "a2m", "stockholm"} or None
        None: Stockholm by content, A2M for ``*.a2m``, else FASTA.
    max_sequence_gaps, max_column_gaps : float, default=1.0
        Drop sequences, then columns, with a larger fraction of gaps.
    skip_unknown : bool, default=False
        Drop sequences with letters outside the alphabet instead of raising.
    for_fit : bool, default=True
        Also refuse what no model can be fitted to: fewer than two sequences, a column of
        gaps only (``max_column_gaps`` below 1 drops such columns). False to read sequences
        only to score them.

    Raises
    ------
    ValueError
        One line naming the file, the line and what was expected and found, for every
        malformed alignment (ragged, unknown letters, empty, duplicate names, absent focus,
        another format, binary data, a corrupt gzip stream).

    Returns
    -------
    Alignment
    """
    settings = {
        "alphabet": alphabet,
        "format": format,
        "focus": focus,
        "max_sequence_gaps": float(max_sequence_gaps),
        "max_column_gaps": float(max_column_gaps),
        "skip_unknown": bool(skip_unknown),
    }
    d = _native.read_alignment(os.fspath(path), json.dumps(settings), bool(for_fit))
    return Alignment(**d)


def sequence_weights(X, identity=0.8, n_jobs=None):
    """plmc's sequence weights: ``1 / (rows at identity ≥ identity with this one, itself
    included)``.

    Parameters
    ----------
    X : array-like of shape (n_sequences, n_sites), integer codes
    identity : float, default=0.8

    Returns
    -------
    ndarray of shape (n_sequences,)
    """
    X = check_states(X, max_value=255)
    check_number("identity", identity)
    return _native.sequence_weights(X, float(identity), threads_from(n_jobs))


def contact_precision(
    scores,
    distances,
    positions=None,
    cutoff=_CONTACTS["cutoff"],
    min_separation=_CONTACTS["min_separation"],
):
    """Precision of the top L/5, L/2, L and 2L pairs of a score matrix against a structure.

    Parameters
    ----------
    scores : ndarray of shape (L, L)
        Symmetric pair scores (e.g. :meth:`Potts.contact_scores`).
    distances : str, path-like or ndarray of shape (n, 3)
        A distance file (``i j … distance`` lines) or rows ``i, j, distance``.
    positions : sequence of int or None
        The position of each site in the distances' numbering (None: 1..L).
    cutoff : float, default=8.0
        A pair closer than this (Å) is a contact.
    min_separation : int, default=5
        Only pairs with ``|i − j| ≥ min_separation`` count.

    Returns
    -------
    dict
        ``precision`` (a list of ``{depth, k, ranked, true_contacts, precision}``), the
        pair counts and the settings, as the CLI's ``potts contacts --json``; for
        :func:`contact_map`, ``contact_pairs`` (the structure's contacts ``(i, j)``) and
        ``ranked_pairs`` (``(i, j, is_contact)``, best first).
    """
    s = np.asarray(scores, dtype=float)
    if s.ndim != 2 or s.shape[0] != s.shape[1]:
        raise ValueError(f"scores must be a square matrix, got shape {s.shape}")
    length = s.shape[0]
    pos = np.arange(1, length + 1) if positions is None else np.asarray(positions, dtype=np.int64)
    if pos.shape != (length,):
        raise ValueError(f"positions must have {length} entries, got {pos.shape}")
    iu, ju = np.triu_indices(length, 1)
    if not isinstance(distances, (str, os.PathLike)):
        distances = np.ascontiguousarray(distances, dtype=float)
    else:
        distances = os.fspath(distances)
    return _native.contact_precision(
        pos[iu].tolist(),
        pos[ju].tolist(),
        s[iu, ju].tolist(),
        length,
        distances,
        json.dumps({"cutoff": float(cutoff), "min_separation": int(min_separation)}),
    )


def contact_map(report, path, top=None, scale=6):
    """Writes a contact map PNG from a :func:`contact_precision` report: the structure's
    contacts in grey (both triangles), the ``top`` best-ranked pairs (default: the report's
    L) in the upper triangle, green when a contact and red when not; ``scale`` pixels per
    position. The file is written whole or not at all."""
    ranked = report["ranked_pairs"]
    top = report["length"] if top is None else int(top)
    pairs = [(i, j) for i, j in report["contact_pairs"]] + [(i, j) for i, j, _ in ranked]
    if not pairs:
        raise ValueError("the report has no pairs to draw")
    lo = min(min(p) for p in pairs)
    n = (max(max(p) for p in pairs) - lo + 1) * scale
    img = np.full((n, n, 3), 255, dtype=np.uint8)

    def paint(i, j, color):
        r, c = (i - lo) * scale, (j - lo) * scale
        img[r : r + scale, c : c + scale] = color

    for i, j in report["contact_pairs"]:
        paint(i, j, (190, 190, 190))
        paint(j, i, (190, 190, 190))
    for i, j, hit in ranked[:top]:
        paint(i, j, (0, 150, 0) if hit else (220, 0, 0))

    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    rows = b"".join(b"\x00" + img[r].tobytes() for r in range(n))
    png = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", struct.pack(">IIBBBBB", n, n, 8, 2, 0, 0, 0))
        + chunk(b"IDAT", zlib.compress(rows, 6))
        + chunk(b"IEND", b"")
    )
    path = os.fspath(path)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(png)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


class Potts(ModelMixin, BaseEstimator):
    """Potts model ``p(s) ∝ exp(Σ_i h_i(s_i) + Σ_{i<j} J_ij(s_i, s_j))`` of integer-coded
    sequences, fitted by pseudo-likelihood: plmc's symmetric PLM with its DCA penalty by
    default (``lambda_j=16``, ``lambda_h=0.01``).

    Parameters
    ----------
    mode : {"symmetric", "asymmetric"}, default="symmetric"
        One joint objective (plmc) or each site's conditional on its own (PlmDCA).
    lambda_h : float, default=0.01
        L2 weight of the fields.
    lambda_j : float, default=16.0
        L2 weight of the couplings, before ``lambda_scale``.
    lambda_scale : {"fixed", "states_and_sites", "sites"}, default="fixed"
        ``lambda_j`` as given (plmc), times ``(q − 1)(L − 1)`` (EVcouplings, GREMLIN, with
        0.01) or times ``L − 1`` (CCMpred, with 0.2).
    lambda_group : float, default=0.0
        Group-L1 weight of each pair's couplings.
    ignore_gaps : bool, default=False
        Treat code 0 (the gap of the protein, RNA and DNA alphabets) as missing (plmc's -g).
    max_iter : int, default=30
        The pipeline's budget (contact precision has settled by then on PF00014); 2000
        runs to plmc's convergence test.
    tol : float, default=1e-3
        Stop when ``‖∇f‖ ≤ tol · max(1, ‖x‖)`` (plmc's test).
    objective_tol : float, default=0.0
        Also stop (converged) when the objective fell by at most ``objective_tol · |f|``
        over the last ``objective_window`` iterations (liblbfgs' delta test); 0 is off.
    objective_window : int, default=10
        Iterations over which ``objective_tol``'s decrease is measured.
    lbfgs_memory : int, default=6
        L-BFGS correction pairs kept (plmc's).
    memory_limit : int, default=8589934592
        Refuse a fit whose estimated memory exceeds this many bytes (8 GiB).
    alphabet : str or None, default="protein"
        Names the states (``"protein"``, ``"rna"``, ``"dna"`` or letters); its length is
        ``q``. None: ``q`` is the largest code + 1.
    verbose : int, default=0
    callback : callable or None
        ``callback(info)`` per iteration (``iteration``, ``objective``, ``grad_norm``);
        ``False`` stops the fit. Ctrl-C stops it, keeps the model, raises KeyboardInterrupt.
    random_state : int or None
        Seed of :meth:`sample`.
    n_jobs : int or None

    Attributes
    ----------
    intercept_ : ndarray of shape (L, q)
        Fields ``h_i(a)``.
    coef_ : ndarray of shape (L, L, q, q)
        Couplings ``J_ij(a, b)``, symmetric, zero diagonal blocks.
    n_features_in_ : int
    stop_reason_ : str
    record_ : dict
    """

    _max_value = 255

    def __init__(
        self,
        mode=_POTTS["mode"],
        lambda_h=_POTTS["lambda_h"],
        lambda_j=_POTTS["lambda_j"],
        lambda_scale=_POTTS["lambda_scale"],
        lambda_group=_POTTS["lambda_group"],
        ignore_gaps=_POTTS["gap_state"] is not None,
        max_iter=_POTTS["max_iterations"],
        tol=_POTTS["grad_tol"],
        objective_tol=_POTTS["objective_tol"],
        objective_window=_POTTS["objective_window"],
        lbfgs_memory=_POTTS["lbfgs_memory"],
        memory_limit=_POTTS["memory_limit"],
        alphabet="protein",
        verbose=0,
        callback=None,
        random_state=None,
        n_jobs=None,
    ):
        self.mode = mode
        self.lambda_h = lambda_h
        self.lambda_j = lambda_j
        self.lambda_scale = lambda_scale
        self.lambda_group = lambda_group
        self.ignore_gaps = ignore_gaps
        self.max_iter = max_iter
        self.tol = tol
        self.objective_tol = objective_tol
        self.objective_window = objective_window
        self.lbfgs_memory = lbfgs_memory
        self.memory_limit = memory_limit
        self.alphabet = alphabet
        self.verbose = verbose
        self.callback = callback
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _settings(self):
        """The engine's settings object (``PlmParams``), checked by the library."""
        names = {k: v for k, v in POTTS_SETTINGS.items() if k != "ignore_gaps"}
        return settings_json(self, names, gap_state=0 if self.ignore_gaps else None)

    def _states(self, X):
        if self.alphabet is None:
            return int(X.max()) + 1 if X.size else 1
        letters = {"protein": PROTEIN, "rna": "-ACGU", "dna": "-ACGT"}.get(
            self.alphabet, self.alphabet
        )
        return len(letters)

    def fit(self, X, y=None, sample_weight=None):
        """Fits the model to the integer-coded rows of ``X`` (weighted by ``sample_weight``,
        e.g. :func:`sequence_weights`); returns ``self``."""
        X = self._check_X(X, reset=True)
        q = self._states(X)
        if X.size and int(X.max()) >= q:
            r, c = np.unravel_index(int(np.argmax(X >= q)), X.shape)
            raise ValueError(f"X[{r}, {c}] = {X[r, c]}: expected a code below {q} (alphabet)")
        w = None
        if sample_weight is not None:
            w = np.ascontiguousarray(sample_weight, dtype=float)
            if w.shape != (X.shape[0],):
                raise ValueError(f"sample_weight must have shape ({X.shape[0]},), got {w.shape}")
        hook = progress_hook("Potts", self.verbose, self.callback)
        model, record, exc = explain_refusal(
            lambda: _native.fit_potts(X, self._settings(), w, self.alphabet, hook, self._threads()),
        )
        self._set_model(model)
        self.n_features_in_ = X.shape[1]
        self.record_ = parse_record(record)
        self.stop_reason_ = self.record_.get("stop_reason")
        if exc is not None:
            raise exc
        return self

    def _set_model(self, model):
        self.model_ = model
        h, j, states, _ = _native.potts_params(model)
        length, q = h.shape
        self.intercept_ = h
        self.coef_ = j.reshape(length, length, q, q)
        self.states_ = states

    def contact_scores(self, apc=True, exclude_gap=False):
        """The L × L coupling scores: Frobenius norms of the zero-sum-gauge couplings,
        APC-corrected when ``apc`` (plmc's / EVcouplings' scores)."""
        check_fitted(self)
        return _native.potts_scores(self.model_, bool(apc), bool(exclude_gap), self._threads())

    def score_samples(self, X, method="auto", **kwargs):
        """Per row: the exact ``ln p(x)`` when the model's states can be enumerated
        (``method="auto"`` or ``"exact"``), else (or with ``method="pseudo"``) the
        pseudo-log-likelihood ``Σ_i ln p(x_i | x_−i)``."""
        check_fitted(self)
        check_choice("method", method, ("auto", "exact", "pseudo"))
        if method == "pseudo" or (method == "auto" and not _enumerable(self.states_)):
            X = self._check_X(X)
            return _native.potts_pseudo_log_likelihood(self.model_, X, self._threads())
        return super().score_samples(X, method="exact")  # which checks X

    def sample(self, n_samples=1, n_steps=None, random_state=None):
        """``n_samples`` sequences (codes): exact draws for tiny models, else Gibbs chains
        (``n_steps`` burn-in sweeps, default 1,000)."""
        return super().sample(n_samples, n_steps=n_steps, random_state=random_state)

    def generative_check(
        self, X, sample_weight=None, n_samples=1000, n_steps=None, random_state=None
    ):
        """Samples ``n_samples`` sequences (:meth:`sample`) and compares their statistics
        with the rows of ``X`` weighted by ``sample_weight`` (the CLI's ``potts sample
        --check``): a dict of Pearson correlations (``frequencies``, ``pair_frequencies``,
        ``connected_correlations``) and the number of ``pairs``."""
        check_fitted(self)
        X = self._check_X(X)
        w = None
        if sample_weight is not None:
            w = np.ascontiguousarray(sample_weight, dtype=float)
            if w.shape != (X.shape[0],):
                raise ValueError(f"sample_weight must have shape ({X.shape[0]},), got {w.shape}")
        states = [int(k) for k in self.states_]
        if X.size and (X >= np.array(states)).any():
            r, c = np.argwhere(X >= np.array(states))[0]
            raise ValueError(f"X[{r}, {c}] = {X[r, c]}: expected a code below {states[c]}")
        samples = self.sample(n_samples, n_steps=n_steps, random_state=random_state)
        return _native.potts_compare_moments(X, w, np.ascontiguousarray(samples), states)

    @classmethod
    def _from_native(cls, model):
        settings = json.loads(model.metadata.get("settings", "{}") or "{}")
        est = cls(alphabet=_native.potts_params(model)[3])
        for name, field in POTTS_SETTINGS.items():
            if field in settings:
                value = settings[field]
                setattr(est, name, value is not None if name == "ignore_gaps" else value)
        est._set_model(model)
        est.n_features_in_ = model.n_variables
        return est


def _enumerable(states):
    total = 1
    for k in states:
        total *= int(k)
        if total > 1 << 22:
            return False
    return True


__all__ = [
    "Potts",
    "Alignment",
    "read_alignment",
    "sequence_weights",
    "contact_precision",
    "contact_map",
]
