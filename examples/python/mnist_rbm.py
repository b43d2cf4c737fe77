"""Train an RBM on binarized MNIST, score it, and plot its filters, samples and learning curve.

    python examples/python/mnist_rbm.py                       # PCD-1, 500 hidden units, 20 epochs
    python examples/python/mnist_rbm.py --epochs 2 --rows 2000 --hidden 50 --out /tmp/mnist

Data: the registry's ``binarized_mnist`` (``boltzkit.datasets.load``: from the cache, a mirror
folder ``--mirror`` or ``BOLTZKIT_DATA_MIRROR``, else the network). The plots need matplotlib
(optional): without it the script trains and scores and says that it skipped them.
"""

from __future__ import annotations

import argparse
import pathlib
import time

import numpy as np

import boltzkit


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirror", default=None, help="a mirror folder of the data registry")
    p.add_argument("--algo", default="pcd-1", help="any trainer: cd-1, pcd-1, csdcp-3-1, ...")
    p.add_argument("--hidden", type=int, default=500)
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--lr", type=float, default=0.02)
    p.add_argument("--lr-end", type=float, default=0.002)
    p.add_argument("--batch-size", type=int, default=100)
    p.add_argument("--rows", type=int, default=None, help="train on the first N rows only")
    p.add_argument("--eval-every", type=int, default=5)
    p.add_argument("--ais-steps", type=int, default=1000, help="AIS steps of the monitor/score")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", type=pathlib.Path, default=pathlib.Path("mnist-rbm-out"))
    return p.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    ds = boltzkit.datasets.load("binarized_mnist", mirror=a.mirror)
    train, test = ds["train"], ds["test"]
    if a.rows:
        train, test = train[: a.rows], test[: max(a.rows // 5, 100)]
    print(f"train {train.shape}, test {test.shape}")

    curve = []

    def record(info):
        if "train_ll" in info["metrics"]:
            curve.append((info["epoch"], info["metrics"]["train_ll"]))

    rbm = boltzkit.RBM(
        n_hidden=a.hidden,
        algo=a.algo,
        learning_rate=a.lr,
        learning_rate_end=a.lr_end,
        batch_size=a.batch_size,
        n_epochs=a.epochs,
        monitor="ais",
        eval_every=a.eval_every,
        callback=record,
        verbose=1,
        random_state=a.seed,
    )
    t = time.perf_counter()
    rbm.fit(train)
    print(f"trained in {time.perf_counter() - t:.1f} s: {rbm.stop_reason_}")

    ll = rbm.log_likelihood(test, method="ais", ais_steps=a.ais_steps, random_state=a.seed)
    z = ll.log_z
    print(f"test log-likelihood {ll.value:.2f} nats (AIS, ln Z = {z.value:.2f} ± {z.stderr:.2f})")
    a.out.mkdir(parents=True, exist_ok=True)
    rbm.save(a.out / "rbm.safetensors")
    samples = rbm.sample(16, n_steps=1000, random_state=a.seed)
    plot(rbm, samples, curve, a.out)
    return rbm, ll


def plot(rbm, samples, curve, out):
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipped the plots")
        return
    W = rbm.components_[:64]
    fig, axes = plt.subplots(8, 8, figsize=(6, 6))
    for ax, w in zip(axes.flat, W):
        ax.imshow(w.reshape(28, 28), cmap="gray")
        ax.axis("off")
    fig.suptitle("filters (first 64 hidden units)")
    fig.savefig(out / "filters.png", dpi=80)
    fig, axes = plt.subplots(4, 4, figsize=(4, 4))
    for ax, s in zip(axes.flat, samples):
        ax.imshow(s.reshape(28, 28), cmap="gray")
        ax.axis("off")
    fig.suptitle("samples (1,000 Gibbs steps)")
    fig.savefig(out / "samples.png", dpi=80)
    if curve:
        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.plot(*np.array(curve).T, marker="o")
        ax.set_xlabel("epoch")
        ax.set_ylabel("train log-likelihood (AIS, nats)")
        fig.tight_layout()
        fig.savefig(out / "learning_curve.png", dpi=80)
    plt.close("all")
    print(f"plots in {out}/")


if __name__ == "__main__":
    main()
