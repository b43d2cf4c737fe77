"""The settings objects the estimators pass to the library: one JSON object per fit, named as
the fields of the library's ``XParams`` (the one settings schema) and checked by its
``check()``; the defaults are the library's (``_native.default_settings``), written once there.
"""

from __future__ import annotations

import json
import math

from . import _native


def defaults(kind):
    """The library's default settings of learner ``kind`` (``"rbm"``, ``"fvbm-newton"``, …),
    by name."""
    return json.loads(_native.default_settings(kind))


def settings_json(est, names, **override):
    """The estimator's parameters ``names`` (then ``override``) as a settings object (JSON);
    numpy scalars become Python numbers, an infinite tolerance the schema's ``"inf"`` (JSON has
    no infinity). ``names`` may map a parameter to its name in the schema; its ``None`` values
    are then left out (the solver's default)."""
    if isinstance(names, dict):
        values = {key: getattr(est, name) for name, key in names.items()}
        values = {key: value for key, value in values.items() if value is not None}
    else:
        values = {name: getattr(est, name) for name in names}
    values.update(override)
    return json.dumps({k: _plain(v) for k, v in values.items()})


def _plain(value):
    """``value`` as JSON writes it: a numpy scalar as its Python number, ``inf`` as ``"inf"``."""
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and math.isinf(value) and value > 0:
        return "inf"
    return value


def saved(value, default):
    """A setting as a model file's ``settings`` recorded it, back in Python: ``null`` where the
    default is a number is the schema's infinity (``"inf"`` on the way in)."""
    if value is None and isinstance(default, float):
        return math.inf
    return value
