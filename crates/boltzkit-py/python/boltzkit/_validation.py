"""Input checking shared by every estimator: data matrices, seeds, thread counts.

Every check raises one ``ValueError`` whose message names the row and column at fault, and
none of them modifies the caller's array. A C-contiguous ``uint8`` matrix of 0/1 values is
passed to the library as it is (no copy here, none in the library); any other accepted dtype
(bool, int*, uint*, float32, float64) is converted once, and so is a scipy sparse matrix
(any format: its stored entries are checked and written into a ``uint8`` matrix, never through
a float64 copy of the whole matrix). The fits leave the values of a C-contiguous ``uint8``
matrix to the library's check (``check_states(..., deferred=True)``), the one check on their
way in, and name the cell at fault only when it refuses (:func:`explain_refusal`).

``binarize`` is ``None`` (values must be states), a threshold ``T`` (a value above ``T``
becomes 1, any other 0) or ``"auto"``: 0/1 data as they are, any other data thresholded at
:data:`AUTO_THRESHOLD` (grayscale or probabilities in [0, 1], as ``BernoulliRBM`` users pass).
"""

from __future__ import annotations

import numbers

import numpy as np

from ._threads import inherited_threads

_INTEGER_KINDS = "biu"

#: The threshold of ``binarize="auto"`` for data that are not all 0 and 1.
AUTO_THRESHOLD = 0.5


def _is_sparse(X):
    """Whether ``X`` is a scipy sparse matrix or array (without importing scipy)."""
    return hasattr(X, "tocsr") and hasattr(X, "nnz")


def _check_dtype(dtype, name):
    if dtype.kind == "c":
        raise ValueError(f"Complex data not supported: {name} holds complex numbers")
    if dtype.kind not in _INTEGER_KINDS + "f":
        raise ValueError(f"{name} has dtype {dtype}; expected bool, integers or floats")


def _check_shape(shape, name):
    if len(shape) != 2:
        raise ValueError(
            f"{name} must be a 2-D array (samples × variables), got {len(shape)} dimension(s)"
            + (
                ". Reshape your data: X.reshape(-1, 1) for one variable, X.reshape(1, -1) "
                "for one sample"
                if len(shape) == 1
                else ""
            )
        )
    if shape[0] == 0:
        raise ValueError(
            f"{name} has 0 sample(s) (shape={shape}) while a minimum of 1 is required."
        )
    if shape[1] == 0:
        raise ValueError(
            f"{name} has 0 feature(s) (shape={shape}) while a minimum of 1 is required."
        )


def _as_array(X, name):
    """``X`` as a 2-D numpy array, refusing objects and complex numbers."""
    try:
        arr = np.asarray(X)
    except Exception as e:  # pragma: no cover - numpy's own message is clearer
        raise ValueError(f"{name} cannot be read as an array: {e}") from None
    if arr.dtype.kind == "O":
        try:
            arr = arr.astype(np.float64)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{name} holds non-numeric objects: {e}") from None
    _check_dtype(arr.dtype, name)
    _check_shape(arr.shape, name)
    return arr


def _first_bad(mask):
    """The (row, column) of the first True entry of ``mask``."""
    r, c = np.unravel_index(int(np.argmax(mask)), mask.shape)
    return int(r), int(c)


def check_states(
    X, *, name="X", max_value=1, binarize=None, n_features=None, owner=None, deferred=False
):
    """``X`` (an array-like or a scipy sparse matrix) as a C-contiguous ``uint8`` matrix of
    values in ``0..=max_value``.

    ``binarize``: see the module's docstring. ``n_features`` (with ``owner``, the
    estimator's class name) checks the width against a fitted model, in scikit-learn's words.
    ``deferred=True`` returns a C-contiguous ``uint8`` ``X`` without looking at its values:
    for a native fit, whose library check is the one check (wrap the call in
    :func:`explain_refusal`).
    """
    return states_and_threshold(
        X,
        name=name,
        max_value=max_value,
        binarize=binarize,
        n_features=n_features,
        owner=owner,
        deferred=deferred,
    )[0]


def states_and_threshold(
    X, *, name="X", max_value=1, binarize=None, n_features=None, owner=None, deferred=False
):
    """:func:`check_states` and the threshold applied (``None``: the values were taken as
    they are), which a fit records in its model file as the CLI's ``--binarize``."""
    if _is_sparse(X):
        return _sparse_states(X, name, max_value, binarize, n_features, owner)
    arr = _as_array(X, name)
    _check_width(arr.shape[1], n_features, owner)
    if arr.dtype.kind == "f":
        finite = np.isfinite(arr)
        if not finite.all():
            r, c = _first_bad(~finite)
            raise ValueError(
                f"{name}[{r}, {c}] is {arr[r, c].item()}: expected finite values (no NaN or inf)"
            )
    threshold = _threshold(binarize, arr)
    if threshold is not None:
        return np.ascontiguousarray(arr > threshold, dtype=np.uint8), threshold
    if arr.dtype == np.uint8 and deferred and arr.flags.c_contiguous:
        return arr, None
    if arr.dtype == np.bool_:
        return np.ascontiguousarray(arr, dtype=np.uint8), None
    bad = _out_of_range(arr, max_value)
    if bad is not None and bad.any():
        r, c = _first_bad(bad)
        raise ValueError(_bad_value_message(name, r, c, arr[r, c], max_value))
    if arr.dtype == np.uint8 and arr.flags.c_contiguous:
        return arr, None
    return np.ascontiguousarray(arr, dtype=np.uint8), None


def _check_width(width, n_features, owner):
    if n_features is not None and width != n_features:
        raise ValueError(
            f"X has {width} features, but {owner} is expecting {n_features} features as input."
        )


def _threshold(binarize, values):
    """The threshold ``binarize`` applies to ``values`` (``"auto"``: none when they are all 0
    and 1, else :data:`AUTO_THRESHOLD`)."""
    if binarize is None:
        return None
    if isinstance(binarize, str):
        if binarize != "auto":
            raise ValueError(f"binarize must be None, 'auto' or a number, got {binarize!r}")
        if values.dtype == np.bool_:
            return None
        if values.dtype == np.uint8:
            binary = values.size == 0 or int(values.max()) <= 1
        else:
            binary = bool(((values == 0) | (values == 1)).all())
        return None if binary else AUTO_THRESHOLD
    return float(binarize)


def _out_of_range(values, max_value):
    """The mask of ``values`` that are not integers in ``0..=max_value`` (None: all are)."""
    if values.dtype == np.bool_:
        return None
    if values.dtype == np.uint8:
        # one pass without a temporary in the common (valid) case; the cell only on failure
        return values > max_value if values.size and int(values.max()) > max_value else None
    if values.dtype.kind == "f":
        return (values < 0) | (values > max_value) | (values != np.floor(values))
    return (values < 0) | (values > max_value)


def _bad_value_message(name, r, c, value, max_value):
    expected = "0 or 1" if max_value == 1 else f"an integer in 0..{max_value}"
    hint = " (pass binarize=T to threshold grayscale data)" if max_value == 1 else ""
    return f"{name}[{r}, {c}] = {value.item()!r}: expected {expected}{hint}"


def _sparse_states(X, name, max_value, binarize, n_features, owner):
    """A scipy sparse ``X`` (any format) as a dense ``uint8`` matrix: the stored entries are
    checked (a bad one named by its row and column) and written into a matrix of zeros."""
    _check_shape(X.shape, name)
    _check_width(X.shape[1], n_features, owner)
    X = X.tocsr()
    if not X.has_canonical_format:  # duplicates summed, columns sorted: row-major entries
        X = X.copy()
        X.sum_duplicates()
    data = np.asarray(X.data)
    _check_dtype(data.dtype, name)
    rows = np.repeat(np.arange(X.shape[0], dtype=np.intp), np.diff(X.indptr))
    cols = X.indices
    if data.dtype.kind == "f" and not np.isfinite(data).all():
        k = int(np.argmax(~np.isfinite(data)))
        raise ValueError(
            f"{name}[{rows[k]}, {cols[k]}] is {data[k].item()}: expected finite values "
            "(no NaN or inf)"
        )
    threshold = _threshold(binarize, data)
    out = np.zeros(X.shape, dtype=np.uint8)
    if threshold is not None:
        if threshold < 0:  # the implicit zeros are above it too
            out.fill(1)
        out[rows, cols] = data > threshold
        return out, threshold
    bad = _out_of_range(data, max_value)
    if bad is not None and bad.any():
        k = int(np.argmax(bad))
        raise ValueError(_bad_value_message(name, int(rows[k]), int(cols[k]), data[k], max_value))
    out[rows, cols] = data
    return out, None


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


def check_binarize(value):
    """Fails unless ``value`` is a valid ``binarize``: None, ``"auto"`` or a finite number."""
    if value is None or (isinstance(value, str) and value == "auto"):
        return value
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not np.isfinite(value):
        raise ValueError(f"binarize must be None, 'auto' or a finite number, got {value!r}")
    return value


def check_number(name, value, *, low=None, integer=False, allow_none=False, allow_inf=False):
    """Fails unless ``value`` is a number (finite unless ``allow_inf``: +inf where the setting
    means "no bound") above ``low`` (inclusive)."""
    if value is None and allow_none:
        return None
    kind = numbers.Integral if integer else numbers.Real
    if isinstance(value, bool) or not isinstance(value, kind):
        what = "an int" if integer else "a number"
        raise ValueError(f"{name} must be {what}, got {value!r}")
    if not integer and not np.isfinite(value) and not (allow_inf and value == np.inf):
        raise ValueError(f"{name} must be finite, got {value!r}")
    if low is not None and value < low:
        raise ValueError(f"{name} must be >= {low}, got {value!r}")
    return value
