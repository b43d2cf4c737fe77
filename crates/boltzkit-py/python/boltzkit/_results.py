"""Small result types: an estimate with its error, a likelihood bracket, the Wald table, and
the progress hook shared by ``verbose`` and ``callback``."""

from __future__ import annotations

import json
import sys
from typing import Any, Callable, NamedTuple, Optional


class Estimate(NamedTuple):
    """A figure with its standard error and interval, and the method that gave it.

    Exact figures have ``stderr == 0`` and ``lower == upper == value``; AIS figures carry the
    standard error of the estimate and its ±3σ interval mapped through ``ln``.
    """

    value: float
    stderr: float
    lower: float
    upper: float
    method: str

    @property
    def interval(self):
        """``(lower, upper)``."""
        return (self.lower, self.upper)

    @classmethod
    def from_dict(cls, d):
        return cls(d["value"], d["stderr"], d["lower"], d["upper"], d["method"])


class LogLikelihood(NamedTuple):
    """An average log-likelihood (nats per row): ``lower`` and ``upper`` ends (the same
    estimate unless ``method == 'bracket'``: [RAISE, forward AIS]) and the ``ln Z`` used."""

    lower: Estimate
    upper: Estimate
    log_z: Optional[Estimate]
    method: str

    @property
    def value(self):
        """The figure (the midpoint of a bracket)."""
        return 0.5 * (self.lower.value + self.upper.value)


def log_likelihood_from(triple, method):
    lo, hi, lz = triple
    if hi.get("diagnosis"):
        from ._warnings import BracketWarning, warn

        warn(BracketWarning, hi["diagnosis"])
    lower, upper = Estimate.from_dict(lo), Estimate.from_dict(hi)
    return LogLikelihood(lower, upper, None if lz is None else Estimate.from_dict(lz), method)


class WaldTable:
    """Estimates, sandwich standard errors, Wald z statistics, two-sided p-values and
    confidence intervals of every parameter of an FVBM, one row per parameter
    (``b_1 … b_d``, then ``m_1_2, m_1_3, …``). ``print(table)`` shows it; ``to_dict()`` and
    ``to_pandas()`` give the columns."""

    columns = ("name", "estimate", "std_error", "z", "p_value", "ci_lower", "ci_upper")

    def __init__(self, inference, level):
        self.level = level
        self.name = list(inference["names"])
        self.estimate = inference["estimate"]
        self.std_error = inference["std_error"]
        self.z = inference["z"]
        self.p_value = inference["p_value"]
        self.ci_lower = inference["ci_lower"]
        self.ci_upper = inference["ci_upper"]
        self.covariance = inference["covariance"]

    def __len__(self):
        return len(self.name)

    def to_dict(self):
        """The columns by name."""
        return {c: getattr(self, c) for c in self.columns}

    def to_pandas(self):
        """A ``pandas.DataFrame`` indexed by parameter name (needs pandas)."""
        import pandas as pd

        d = self.to_dict()
        return pd.DataFrame(d).set_index("name")

    def __str__(self):
        width = max([9] + [len(n) for n in self.name])
        pct = f"{100 * self.level:g}%"
        lines = [
            f"{'parameter':<{width}} {'estimate':>12} {'std_error':>12} {'z':>10} "
            f"{'p_value':>10}   {pct + ' interval':>26}"
        ]
        for i, n in enumerate(self.name):
            lines.append(
                f"{n:<{width}} {self.estimate[i]:>12.6f} {self.std_error[i]:>12.6f} "
                f"{self.z[i]:>10.3f} {self.p_value[i]:>10.3e}   "
                f"[{self.ci_lower[i]:>11.6f}, {self.ci_upper[i]:>11.6f}]"
            )
        return "\n".join(lines)

    __repr__ = __str__


def progress_hook(name: str, verbose: int, callback: Optional[Callable[[dict], Any]]):
    """The native callback for a fit: prints one line per evaluation when ``verbose`` and
    calls ``callback(info)``; ``None`` when neither is asked for (no overhead)."""
    if not verbose and callback is None:
        return None

    def hook(info):
        if verbose:
            metrics = " ".join(f"{k}={v:.6g}" for k, v in info.get("metrics", {}).items())
            fields = " ".join(
                f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}"
                for k, v in info.items()
                if k != "metrics"
            )
            print(f"[{name}] {fields} {metrics}".rstrip(), file=sys.stderr, flush=True)
        if callback is not None:
            return callback(info)
        return None

    return hook


def parse_record(text):
    """A learner's record (JSON) as a dict."""
    return json.loads(text)
