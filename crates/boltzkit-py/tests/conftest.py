"""Shared fixtures: small seeded datasets, the repository paths and the CLI binary."""

from __future__ import annotations

import os
import pathlib
import shutil

import numpy as np
import pytest

REPO = pathlib.Path(__file__).resolve().parents[3]


@pytest.fixture
def binary_data():
    """300 rows of 12 correlated bits (two prototypes with noise)."""
    rng = np.random.default_rng(7)
    protos = np.array([[1] * 6 + [0] * 6, [0] * 6 + [1] * 6], dtype=np.uint8)
    rows = protos[rng.integers(0, 2, 300)]
    flip = rng.random(rows.shape) < 0.1
    return np.ascontiguousarray(rows ^ flip.astype(np.uint8))


@pytest.fixture
def cli():
    """The built ``boltzkit`` binary (the newer of release and debug), or skip the test."""
    built = [REPO / "target" / p / "boltzkit" for p in ("release", "debug")]
    built = [e for e in built if e.exists()]
    if built:
        return str(max(built, key=lambda e: e.stat().st_mtime))
    found = shutil.which("boltzkit")
    if found:
        return found
    pytest.skip("no boltzkit CLI binary: run `cargo build --release` (or cargo test) first")


@pytest.fixture
def data_dir():
    """The data registry's mirror (``BOLTZKIT_DATA_MIRROR``, its old name ``BOLTZKIT_DATA_DIR``,
    or ``../shared/data``), or skip."""
    env = os.environ.get("BOLTZKIT_DATA_MIRROR") or os.environ.get("BOLTZKIT_DATA_DIR")
    d = pathlib.Path(env or REPO.parent / "shared" / "data")
    if not d.is_dir():
        pytest.skip(f"no shared data directory at {d}")
    return d


def read_safetensors(path):
    """``(header, data)`` of a safetensors file: the parsed JSON header (tensor dtypes,
    shapes, offsets and metadata) and the raw tensor bytes."""
    import json
    import struct

    raw = pathlib.Path(path).read_bytes()
    (n,) = struct.unpack("<Q", raw[:8])
    return json.loads(raw[8 : 8 + n]), raw[8 + n :]


def assert_same_file(a, b):
    """Two model files are the same bytes (the library writes a model's header with sorted
    keys, so one model always gives one file); on a difference the message names what
    differs (metadata entries, tensor headers, or the tensor bytes)."""
    ra, rb = pathlib.Path(a).read_bytes(), pathlib.Path(b).read_bytes()
    if ra == rb:
        return
    ha, da = read_safetensors(a)
    hb, db = read_safetensors(b)
    ma, mb = ha.pop("__metadata__", {}), hb.pop("__metadata__", {})
    diff = {k: (ma.get(k), mb.get(k)) for k in sorted(set(ma) | set(mb)) if ma.get(k) != mb.get(k)}
    raise AssertionError(
        f"{a} and {b} differ: metadata {diff}, tensor headers equal: {ha == hb}, "
        f"tensor bytes equal: {da == db}"
    )
