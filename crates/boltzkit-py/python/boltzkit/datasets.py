"""Data sets by name: the registry of the public data sets the papers use.

Each file has its original URL, size, SHA-256 and licence (``info(name)``). ``load`` fetches a
data set into the cache (``BOLTZKIT_DATA``, else the platform's cache directory), copied from a
mirror folder (``BOLTZKIT_DATA_MIRROR`` or ``mirror=``) or downloaded, checks every file and
reads it with the library's readers; a file already cached is never fetched again, and a
corrupted cached copy is fetched anew. The command line does the same: ``boltzkit data
list|fetch|path``, and ``--data NAME[:split]`` wherever a command takes ``--data FILE``.

>>> from boltzkit import datasets
>>> ds = datasets.load("nltcs")                        # doctest: +SKIP
>>> ds.splits["train"].shape, ds.splits["test"].shape  # doctest: +SKIP
((16181, 16), (3236, 16))
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Optional

import numpy as np

from . import _native
from ._functions import read_dataset

__all__ = ["names", "info", "fetch", "path", "load", "LoadedDataSet"]


@lru_cache(maxsize=1)
def _registry() -> dict[str, dict[str, Any]]:
    return {d["name"]: d for d in json.loads(_native.data_registry())}


def names() -> list[str]:
    """The names of the registry's data sets, in its order."""
    return list(_registry())


def info(name: str) -> dict[str, Any]:
    """The registry entry of ``name``: ``title``, ``licence``, ``citation`` and ``files``
    (each with ``path``, ``kind``, ``split``, ``size``, ``sha256``, ``url``, ``url_serves``)."""
    try:
        return _registry()[name]
    except KeyError:
        raise ValueError(
            f"no data set is called {name!r}; the registry has {', '.join(names())}"
        ) from None


def fetch(name: str, *, mirror: Optional[str] = None, offline: bool = False) -> dict[str, str]:
    """Puts verified copies of every file of ``name`` in the cache: registry path → local path.

    ``mirror`` is a folder in the registry's layout searched before the network (default:
    ``BOLTZKIT_DATA_MIRROR``); ``offline=True`` never uses the network. A file no source gives
    raises ``OSError`` saying what was tried and what to do.
    """
    return {p: local for p, local, _ in _native.data_fetch(name, None, mirror, offline)}


def path(spec: str, *, mirror: Optional[str] = None, offline: bool = False) -> str:
    """The local path of ``NAME[:split]``'s rows (default split ``train``, or the only one;
    for a protein family, its alignment), fetched first when not cached."""
    return _native.data_path(spec, mirror, offline)


@dataclass
class LoadedDataSet:
    """A data set read into arrays.

    Attributes
    ----------
    name, title, licence, citation : str
        As in the registry.
    splits : dict of str to ndarray
        ``uint8`` rows × variables per split (``train``, ``valid``, ``test``, or ``all``).
    labels : dict of str to ndarray
        One label per row, for the splits that have labels (MNIST, Caltech101, alphadigits).
    files : dict of str to str
        Registry path → local path of every file fetched (alignments, structures, originals).
    """

    name: str
    title: str
    licence: str
    citation: str
    splits: dict[str, np.ndarray] = field(default_factory=dict)
    labels: dict[str, np.ndarray] = field(default_factory=dict)
    files: dict[str, str] = field(default_factory=dict)

    def __getitem__(self, split: str) -> np.ndarray:
        return self.splits[split]


def load(
    name: str,
    *,
    mirror: Optional[str] = None,
    offline: bool = False,
    binarize=None,
    random_state: int = 0,
) -> LoadedDataSet:
    """Fetches the data set ``name`` (see ``fetch``) and reads its splits and labels.

    ``binarize`` applies to the rows as in ``read_dataset`` (e.g. ``127`` for MNIST's
    0..255 grayscale). A protein family has no rows here: ``files`` holds its alignment.
    """
    entry = info(name)
    wanted = [f["path"] for f in entry["files"] if f["kind"] != "original"]
    local = {p: loc for p, loc, _ in _native.data_fetch(name, wanted, mirror, offline)}
    out = LoadedDataSet(
        name=name,
        title=entry["title"],
        licence=entry["licence"],
        citation=entry["citation"],
        files=local,
    )
    for f in entry["files"]:
        if f["kind"] == "rows":
            out.splits[f["split"]] = read_dataset(
                local[f["path"]], binarize=binarize, random_state=random_state
            )
        elif f["kind"] == "labels":
            out.labels[f["split"]] = read_dataset(local[f["path"]]).ravel()
    return out
