"""The estimator base: scikit-learn's when it is installed, a minimal twin otherwise.

scikit-learn is optional at run time. When it imports, every boltzkit estimator derives
from ``sklearn.base.BaseEstimator`` (and ``TransformerMixin`` for the RBMs), so ``clone``,
``Pipeline``, ``GridSearchCV`` and ``check_estimator`` see an ordinary estimator. Without it,
a minimal ``BaseEstimator`` provides the same ``get_params`` / ``set_params`` / ``__repr__``
from the ``__init__`` signature and a ``__sklearn_tags__`` with the fields boltzkit sets,
a minimal ``TransformerMixin`` the ``fit_transform`` shortcut and a minimal
``ClassNamePrefixFeaturesOutMixin`` the output names (``rbm0``, ``rbm1``, …).

Input feature names are scikit-learn's own: :func:`check_feature_names` is its
``_check_feature_names`` (``feature_names_in_`` set by ``fit`` from a DataFrame's columns,
checked by every later call, as ``validate_data`` does); without scikit-learn it does nothing.
``set_output(transform="pandas")`` comes with scikit-learn's ``TransformerMixin``.
"""

from __future__ import annotations

import copyreg
import inspect

import numpy as np

from . import _native

try:  # scikit-learn present: the real bases
    from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
    from sklearn.exceptions import NotFittedError
    from sklearn.utils.validation import _check_feature_names as check_feature_names

    HAVE_SKLEARN = True
except ImportError:  # pragma: no cover - exercised by test_base without sklearn
    HAVE_SKLEARN = False

    class NotFittedError(ValueError, AttributeError):
        """Raised when a method needs a fitted estimator (scikit-learn's name and bases)."""

    from types import SimpleNamespace

    class BaseEstimator:
        """``get_params`` / ``set_params`` from the ``__init__`` signature, as scikit-learn."""

        @classmethod
        def _get_param_names(cls):
            sig = inspect.signature(cls.__init__)
            return sorted(
                p.name
                for p in sig.parameters.values()
                if p.name != "self" and p.kind != p.VAR_KEYWORD
            )

        def get_params(self, deep=True):
            """The constructor parameters by name."""
            return {k: getattr(self, k) for k in self._get_param_names()}

        def set_params(self, **params):
            """Sets constructor parameters; an unknown name is a ValueError."""
            valid = self._get_param_names()
            for k, v in params.items():
                if k not in valid:
                    raise ValueError(
                        f"invalid parameter {k!r} for {type(self).__name__}; "
                        f"valid parameters: {', '.join(valid)}"
                    )
                setattr(self, k, v)
            return self

        def __sklearn_tags__(self):
            """The tags boltzkit reads or sets (a subset of scikit-learn's ``Tags``)."""
            return SimpleNamespace(
                estimator_type=None,
                requires_fit=True,
                transformer_tags=SimpleNamespace(preserves_dtype=["float64"]),
                input_tags=SimpleNamespace(two_d_array=True, sparse=False),
            )

        def __repr__(self):
            params = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
            return f"{type(self).__name__}({params})"

    class TransformerMixin:
        """``fit_transform`` as ``fit(X).transform(X)``."""

        def fit_transform(self, X, y=None, **fit_params):
            return self.fit(X, y, **fit_params).transform(X)

    class ClassNamePrefixFeaturesOutMixin:
        """``get_feature_names_out``: the class name, lowercased, and the output's index."""

        def get_feature_names_out(self, input_features=None):
            prefix = type(self).__name__.lower()
            return np.asarray([f"{prefix}{i}" for i in range(self._n_features_out)], dtype=object)

    def check_feature_names(estimator, X, *, reset):
        """Input feature names need scikit-learn: without it, nothing is recorded."""


def _reduce_model(m):
    """Pickles a native model through the bytes of its model file."""
    return (_native.NativeModel.from_bytes, (bytes(m.to_bytes()),))


def _reduce_unit_model(m):
    """Pickles an RBM of unit types other than 0/1 through the bytes of its model file."""
    return (_native.NativeUnitModel.from_bytes, (bytes(m.to_bytes()),))


copyreg.pickle(_native.NativeModel, _reduce_model)
copyreg.pickle(_native.NativeUnitModel, _reduce_unit_model)


def check_fitted(est, attribute="model_"):
    """Raises :class:`NotFittedError` unless ``est`` has been fitted."""
    if getattr(est, attribute, None) is None:
        raise NotFittedError(
            f"This {type(est).__name__} instance is not fitted yet. Call 'fit' with "
            "appropriate arguments before using this estimator."
        )


__all__ = [
    "BaseEstimator",
    "TransformerMixin",
    "ClassNamePrefixFeaturesOutMixin",
    "NotFittedError",
    "HAVE_SKLEARN",
    "check_feature_names",
    "check_fitted",
]
