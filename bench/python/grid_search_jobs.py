"""GridSearchCV over 4 RBM candidates, serially and with n_jobs=2 (issue 35's many-fits
target: the parallel search at most the serial time / 1.6 on 2 cores).

Usage: python grid_search_jobs.py [--rounds N] [--rows N]

The estimators keep their default n_jobs=None: serially each fit uses every core; under
GridSearchCV(n_jobs=2) joblib's workers set OMP_NUM_THREADS to their share of the cores,
which n_jobs=None follows (boltzkit/_threads.py), so the two never oversubscribe. Data:
binarized MNIST by name (boltzkit.datasets, from the mirror or the cache), its first --rows
training rows. Rounds alternate serial and parallel; prints every time, the minimum and
median of each, the ratio serial / parallel of the minima and of the medians, and the load.
"""

import argparse
import os
import statistics
import time

import boltzkit
from sklearn.model_selection import GridSearchCV


def search(n_jobs):
    est = boltzkit.RBM(
        n_hidden=16, n_epochs=10, batch_size=100, algo="pcd-1", random_state=1
    )
    # at most 16 hidden units: each split's score is the exact log-likelihood (no AIS)
    grid = {"learning_rate": [0.02, 0.05], "n_hidden": [12, 16]}
    return GridSearchCV(est, grid, cv=2, n_jobs=n_jobs, refit=False)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--rows", type=int, default=6000)
    args = ap.parse_args()
    x = boltzkit.datasets.load("binarized_mnist")["train"][: args.rows]
    search(2).fit(x[:200])  # start joblib's worker processes once, as a session would
    times = {None: [], 2: []}
    scores = {}
    for r in range(args.rounds):
        for n_jobs in (None, 2):
            t = time.perf_counter()
            g = search(n_jobs).fit(x)
            times[n_jobs].append(time.perf_counter() - t)
            scores[n_jobs] = list(g.cv_results_["mean_test_score"])
            print(f"round {r} n_jobs={n_jobs}: {times[n_jobs][-1]:.2f} s", flush=True)
    assert scores[None] == scores[2], scores  # same fits, same scores
    s, p = times[None], times[2]
    print(f"serial   min {min(s):.2f} s, median {statistics.median(s):.2f} s")
    print(f"n_jobs=2 min {min(p):.2f} s, median {statistics.median(p):.2f} s")
    print(
        f"serial / parallel: minima {min(s) / min(p):.2f}, "
        f"medians {statistics.median(s) / statistics.median(p):.2f}"
    )
    print(f"cpus {os.cpu_count()}, load {os.getloadavg()}")


if __name__ == "__main__":
    main()
