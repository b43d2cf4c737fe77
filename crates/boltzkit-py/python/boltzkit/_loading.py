"""Loading any model file as the estimator of its family: above the families (it imports
them; none imports it), so a new family adds its module and one entry here."""

from __future__ import annotations

import os

from . import _native
from .fsll import FSLL
from .fvbm import FVBM
from .potts import Potts
from .rbm import RBM, FrankWolfeRBM


def from_native(model):
    """The estimator of the right class holding ``model`` (a ``NativeModel``)."""
    kind = model.kind
    # a standard Frank-Wolfe model is stored as an ordinary RBM file; its metadata says so
    if kind == "rbm" and model.metadata.get("algorithm") == "frank-wolfe":
        kind = "frank-wolfe"
    classes = {
        "rbm": RBM,
        "rbm-units": RBM,
        "frank-wolfe": FrankWolfeRBM,
        "fvbm": FVBM,
        "fsll": FSLL,
        "potts": Potts,
    }
    cls = classes[kind]
    return cls._from_native(model)


def load(path):
    """Reads any boltzkit model file (written by ``save`` or by the CLI) as a fitted
    estimator: :class:`RBM`, :class:`FrankWolfeRBM`, :class:`FVBM`, :class:`FSLL` or
    :class:`Potts`; an RBM of other unit types (``boltzkit/rbm/v2``) as :class:`RBM`."""
    path = os.fspath(path)
    if _native.is_unit_model_file(path):
        return from_native(_native.NativeUnitModel.load(path))
    return from_native(_native.NativeModel.load(path))
