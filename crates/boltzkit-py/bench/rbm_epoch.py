"""One PCD-1 MNIST epoch (60,000 × 784, threshold 127, 500 hidden, batch 100) three ways in
one run: boltzkit from Python, the boltzkit CLI (`bench rbm-epoch`) and scikit-learn's
`BernoulliRBM`, alternating, each repeat a fresh model (initialization included).

    python crates/boltzkit-py/bench/rbm_epoch.py ../shared/data/mnist/train-images-idx3-ubyte.gz \
        --cli target/release/boltzkit --repeats 3

The Python figure is the wall time of `RBM(...).fit(X)` with `X` already in memory (as the
CLI's figure excludes reading the file), and `outside` the part of it outside the trainer's
own clock (`record_["wall_s"]`): checks, the hand-over of `X`, initialization, threads; the
CLI figure is the minimum `bench rbm-epoch`
reports for one epoch; scikit-learn's is `BernoulliRBM(n_iter=1).fit(X)` on float64 0/1 data.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import time

import boltzkit


def time_python(X, seed):
    rbm = boltzkit.RBM(
        n_hidden=500,
        algo="pcd-1",
        n_epochs=1,
        batch_size=100,
        learning_rate=0.01,
        random_state=seed,
    )
    t = time.perf_counter()
    rbm.fit(X)
    total = time.perf_counter() - t
    return total, total - rbm.record_["wall_s"]


def time_cli(cli, path, seed):
    out = subprocess.run(
        [
            cli,
            "bench",
            "rbm-epoch",
            "--data",
            path,
            "--binarize",
            "threshold:127",
            "--repeats",
            "1",
            "--seed",
            str(seed),
            "--json",
            "-q",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    summary = json.loads(out.stdout)
    key = next(k for k in summary if k.startswith("min") and k.endswith("_s"))
    return float(summary[key])


def time_sklearn(X, seed):
    from sklearn.neural_network import BernoulliRBM

    Xf = X.astype("float64")
    rbm = BernoulliRBM(
        n_components=500, learning_rate=0.01, batch_size=100, n_iter=1, random_state=seed
    )
    t = time.perf_counter()
    rbm.fit(Xf)
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("images", help="MNIST train-images-idx3-ubyte.gz")
    ap.add_argument("--cli", help="the boltzkit binary (omit to skip the CLI rows)")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--no-sklearn", action="store_true")
    a = ap.parse_args()
    X = boltzkit.read_dataset(a.images, binarize=127)
    print(f"data {X.shape}, {X.mean():.3f} ones")
    times = {"python": [], "outside": [], "cli": [], "sklearn": []}
    for r in range(a.repeats):
        total, outside = time_python(X, r)
        times["python"].append(total)
        times["outside"].append(outside)
        if a.cli:
            times["cli"].append(time_cli(a.cli, a.images, r))
        if not a.no_sklearn:
            times["sklearn"].append(time_sklearn(X, r))
        print({k: round(v[-1], 3) for k, v in times.items() if v}, flush=True)
    for k, v in times.items():
        if v:
            print(
                f"{k:8s} min {min(v):.3f} s  median {statistics.median(v):.3f} s  ({len(v)} runs)"
            )
    if times["cli"]:
        print(f"python / cli (min): {min(times['python']) / min(times['cli']):.3f}")
    if times["sklearn"]:
        print(f"sklearn / python (min): {min(times['sklearn']) / min(times['python']):.2f}")


if __name__ == "__main__":
    main()
