"""boltzkit.datasets: data sets by name, fetched from a mirror into a cache and verified."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from boltzkit import datasets


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """An empty cache folder, the network off (the tests use a mirror, never the network)."""
    monkeypatch.setenv("BOLTZKIT_DATA", str(tmp_path / "cache"))
    monkeypatch.setenv("BOLTZKIT_OFFLINE", "1")
    return tmp_path / "cache"


def test_the_registry_lists_every_set_with_urls_sizes_and_checksums():
    names = datasets.names()
    for name in ["binarized_mnist", "mnist", "caltech101", "alphadigits", "nltcs", "pf00014"]:
        assert name in names
    entry = datasets.info("binarized_mnist")
    assert entry["licence"] and entry["citation"]
    f = entry["files"][0]
    assert f["size"] > 0 and len(f["sha256"]) == 64 and f["url"].startswith("http")
    with pytest.raises(ValueError, match="binarized_mnist"):
        datasets.info("mnits")


def test_load_reads_splits_and_labels_from_the_mirror(cache, data_dir):
    ds = datasets.load("caltech101", mirror=str(data_dir))
    assert {k: v.shape for k, v in ds.splits.items()} == {
        "train": (4100, 784),
        "valid": (2264, 784),
        "test": (2307, 784),
    }
    assert ds.labels["test"].shape == (2307,) and ds.labels["test"].min() == 1
    assert ds["train"].dtype == np.uint8 and set(np.unique(ds["train"])) == {0, 1}
    assert "Marlin" in ds.citation
    # the cached copies are the mirror's bytes, and a second load reads them from the cache
    for rel, local in ds.files.items():
        assert (data_dir / rel).read_bytes() == open(local, "rb").read()
    again = datasets.load("caltech101")
    assert np.array_equal(again["test"], ds["test"])


def test_a_corrupted_cached_file_is_fetched_again(cache, data_dir):
    p = datasets.path("nltcs:valid", mirror=str(data_dir))
    good = open(p, "rb").read()
    with open(p, "r+b") as f:
        f.seek(100)
        f.write(b"\xff")
    assert datasets.path("nltcs:valid", mirror=str(data_dir)) == p
    assert hashlib.sha256(open(p, "rb").read()).hexdigest() == hashlib.sha256(good).hexdigest()


def test_no_source_gives_one_line_saying_what_to_do(cache, tmp_path):
    with pytest.raises(OSError) as e:
        datasets.load("nltcs", mirror=str(tmp_path / "empty"))
    msg = str(e.value)
    assert "\n" not in msg and "BOLTZKIT_DATA_MIRROR=DIR" in msg and "nltcs" in msg
    with pytest.raises(ValueError, match="train, valid, test"):
        datasets.path("nltcs:tst", mirror=str(tmp_path / "empty"))


def test_mnist_loads_grayscale_or_binarized(cache, data_dir):
    ds = datasets.load("mnist", mirror=str(data_dir), binarize=127)
    assert ds["train"].shape == (60000, 784) and ds["train"].max() == 1
    assert ds.labels["train"].shape == (60000,) and ds.labels["train"].max() == 9
