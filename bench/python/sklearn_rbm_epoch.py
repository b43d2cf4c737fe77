"""One PCD-1 epoch of scikit-learn's BernoulliRBM on MNIST (60,000 x 784, 500 hidden, batch 100),
the peer of `boltzkit bench rbm-epoch` (issue 3's speed target).

Usage: python sklearn_rbm_epoch.py MNIST_TRAIN_IDX_GZ [--repeats N] [--dtype float32|float64]

Images are binarized as boltzkit's `--binarize threshold:127` does (pixel > 127 is 1). Prints
the minimum and median wall time of `fit` with n_iter=1 over the repeats (each repeat a fresh
model, so initialization is included, as it is on the boltzkit side).
"""
import argparse
import gzip
import statistics
import time

import numpy as np
from sklearn.neural_network import BernoulliRBM


def read_idx_images(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, n, rows, cols = np.frombuffer(data[:16], dtype=">i4")
    assert magic == 2051, f"not an IDX image file: magic {magic}"
    return np.frombuffer(data[16:], dtype=np.uint8).reshape(n, rows * cols)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("images")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--dtype", default="float64", choices=["float32", "float64"])
    args = ap.parse_args()
    x = (read_idx_images(args.images) > 127).astype(args.dtype)
    times = []
    for r in range(args.repeats):
        rbm = BernoulliRBM(n_components=500, learning_rate=0.01, batch_size=100, n_iter=1,
                           random_state=r)
        t = time.perf_counter()
        rbm.fit(x)
        times.append(time.perf_counter() - t)
    print(f"sklearn BernoulliRBM {args.dtype}: {x.shape[0]}x{x.shape[1]}, 500 hidden, batch 100, "
          f"1 epoch: min {min(times):.3f} s, median {statistics.median(times):.3f} s "
          f"over {len(times)} runs")


if __name__ == "__main__":
    main()
