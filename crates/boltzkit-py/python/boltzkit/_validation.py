"""Input checking shared by every estimator: data matrices, seeds, thread counts.

Every check raises one ``ValueError`` whose message names the row and column at fault, and
none of them modifies the caller's array. A C-contiguous ``uint8`` matrix of 0/1 values is
passed to the library as it is (no copy here, none in the library); any other accepted dtype
(bool, int*, uint*, float32, float64) is converted once. The fits leave the values of a
C-contiguous ``uint8`` matrix to the library's check (``check_states(..., deferred=True)``),
the one check on their way in, and name the cell at fault only when it refuses
(:func:`explain_refusal`).
"""

from __future__ import annotations

import numbers

import numpy as np

from ._threads import inherited_threads

_INTEGER_KINDS = "biu"


def _as_array(X, name):
    """``X`` as a 2-D numpy array, refusing sparse matrices, objects, complex numbers."""
    if hasattr(X, "toarray") or hasattr(X, "tocsr"):
        raise TypeError(
            f"{name} is a sparse matrix; boltzkit needs a dense array (call X.toarray())"
        )
    try:
        arr = np.asarray(X)
    except Exception as e:  # pragma: no cover - numpy's own message is clearer
        raise ValueError(f"{name} cannot be read as an array: {e}") from None
    if arr.dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} holds complex numbers")
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{name} holds non-numeric objects: {e}") from None
    if arr.dtype.kind not in _INTEGER_KINDS + "f":
        raise ValueError(f"{name} has dtype {arr.dtype}; expected bool, integers or floats")
    if arr.ndim != 2:
        raise ValueError(
            f"{name} must be a 2-D array (samples × variables), got {arr.ndim} dimension(s)"
            + (
                ". Reshape your data: X.reshape(-1, 1) for one variable, X.reshape(1, -1) "
                "for one sample"
                if arr.ndim == 1
                else ""
            )
        )
    if arr.shape[0] == 0:
        raise ValueError(
            f"{name} has 0 sample(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    if arr.shape[1] == 0:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={arr.shape}) while a minimum of 1 is required."
        )
    return arr


def _first_bad(mask):
    """The (row, column) of the first True entry of ``mask``."""
    r, c = np.unravel_index(int(np.argmax(mask)), mask.shape)
    return int(r), int(c)


def check_states(
    X, *, name="X", max_value=1, binarize=None, n_features=None, owner=None, deferred=False
):
    """``X`` as a C-contiguous ``uint8`` matrix of values in ``0..=max_value``.

    ``binarize=T`` maps a value above ``T`` to 1 and any other to 0 first (grayscale data).
    ``n_features`` (with ``owner``, the estimator's class name) checks the width against a
    fitted model, in scikit-learn's words. ``deferred=True`` returns a C-contiguous ``uint8``
    ``X`` without looking at its values: for a native fit, whose library check is the one
    check (wrap the call in :func:`explain_refusal`).
    """
    arr = _as_array(X, name)
    if n_features is not None and arr.shape[1] != n_features:
        raise ValueError(
            f"X has {arr.shape[1]} features, but {owner} is expecting {n_features} features "
            "as input."
        )
    if arr.dtype.kind == "f":
        finite = np.isfinite(arr)
        if not finite.all():
            r, c = _first_bad(~finite)
            raise ValueError(
                f"{name}[{r}, {c}] is {arr[r, c].item()}: expected finite values (no NaN or inf)"
            )
    if binarize is not None:
        return np.ascontiguousarray(arr > binarize, dtype=np.uint8)
    if arr.dtype == np.uint8 and deferred and arr.flags.c_contiguous:
        return arr
    if arr.dtype == np.uint8:
        # one pass without a temporary in the common (valid) case; the cell only on failure
        bad = arr > max_value if int(arr.max()) > max_value else None
    elif arr.dtype == np.bool_:
        return np.ascontiguousarray(arr, dtype=np.uint8)
    elif arr.dtype.kind == "f":
        bad = (arr < 0) | (arr > max_value) | (arr != np.floor(arr))
    else:
        bad = (arr < 0) | (arr > max_value)
    if bad is not None and bad.any():
        r, c = _first_bad(bad)
        expected = "0 or 1" if max_value == 1 else f"an integer in 0..{max_value}"
        hint = " (pass binarize=T to threshold grayscale data)" if max_value == 1 else ""
        raise ValueError(f"{name}[{r}, {c}] = {arr[r, c].item()!r}: expected {expected}{hint}")
    if arr.dtype == np.uint8 and arr.flags.c_contiguous:
        return arr
    return np.ascontiguousarray(arr, dtype=np.uint8)


def explain_refusal(call, *checks):
    """``call()``, a native fit that checks its ``uint8`` matrices' values itself; when it
    raises ``ValueError``, each of ``checks`` (a full :func:`check_states` of a matrix passed
    with ``deferred=True``) runs first, so that a value out of range is reported naming its
    cell, as everywhere else; any other refusal is re-raised as it is."""
    try:
        return call()
    except ValueError:
        for check in checks:
            check()
        raise


def seed_from(random_state):
    """A 64-bit seed from scikit-learn's ``random_state`` (None, an int, a RandomState or a
    Generator): an int is used as it is, so the same int gives the CLI's ``--seed`` run."""
    if random_state is None:
        return int(np.random.default_rng().integers(0, 2**32))
    if isinstance(random_state, (bool, np.bool_)):
        raise ValueError(f"random_state must be None, an int or a generator, got {random_state!r}")
    if isinstance(random_state, numbers.Integral):
        if random_state < 0 or random_state >= 2**64:
            raise ValueError(f"random_state must be in [0, 2**64), got {random_state}")
        return int(random_state)
    if isinstance(random_state, np.random.RandomState):
        return int(random_state.randint(0, 2**31 - 1))
    if isinstance(random_state, np.random.Generator):
        return int(random_state.integers(0, 2**63))
    raise ValueError(f"random_state must be None, an int or a generator, got {random_state!r}")


def threads_from(n_jobs):
    """The worker-thread count for ``n_jobs``: n ≥ 1 → n; -1 → all cores (``None`` to the
    native side); None → the limit set around the call (:func:`inherited_threads`: joblib's,
    dask's or a scheduler's ``OMP_NUM_THREADS``, threadpoolctl's limit), else all cores."""
    if n_jobs is None:
        return inherited_threads()
    if n_jobs == -1:
        return None
    if isinstance(n_jobs, numbers.Integral) and n_jobs >= 1:
        return int(n_jobs)
    raise ValueError(f"n_jobs must be None, -1 or an int >= 1, got {n_jobs!r}")


def check_choice(name, value, choices):
    """Fails unless ``value`` is one of ``choices``."""
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}; got {value!r}")
    return value


def check_number(name, value, *, low=None, integer=False, allow_none=False):
    """Fails unless ``value`` is a (finite) number above ``low`` (inclusive)."""
    if value is None and allow_none:
        return None
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        what = "an int" if integer else "a number"
        raise ValueError(f"{name} must be {what}, got {value!r}")
    if not integer and not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and value < low:
        raise ValueError(f"{name} must be >= {low}, got {value!r}")
    return value
