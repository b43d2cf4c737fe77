"""Gaussian-Bernoulli RBMs on grayscale MNIST, ours against learnergy's (issue 34).

Subcommands (scripts/gauss_mnist_peer.sh runs them in order):
  prep   MNIST IDX files -> train.npy / test.npy: pixels dequantized ((p + u) / 256,
         u ~ U(0, 1), seeded, so no pixel is constant and densities are finite) and
         standardized per pixel with the training rows' mean and standard deviation, the
         latter floored at --sd-floor (MNIST's border pixels are 0 in all but a few images:
         unfloored, those few would lie hundreds of deviations out), test rows alike.
  peer   trains learnergy's VarianceGaussianRBM (learned variances) on train.npy and writes
         its parameters converted to our energy (see below) as an .npz, with the time per
         epoch.
  ours   reads our boltzkit/rbm/v2 model file into the same .npz form.
  png    a grid of rows (samples .npy, in the standardized scale) as grayscale digits, or
         with --filters a model .npz's weight filters (each hidden unit's column of W);
         with --means MODEL.npz each row's visible conditional mean E[v | h] at one draw
         h ~ p(h | v) (the chain's next half-step without the Gaussian pixel noise).
  exact  the exact average log-likelihood of test rows under an .npz, by enumerating the
         2^H hidden states (H <= 22) and integrating the Gaussian layer in closed form.

One energy for both models (ARCHITECTURE.md, "RBM unit types"):
  E(x, h) = sum_i x_i^2 / (2 s_i) - b.x - c.h - x^T W h,   s_i the variances,
so  ln p(x) = -F(x) - ln Z  with  F(x) = sum x^2/(2s) - b.x - sum_j softplus(c_j + (x^T W)_j)
and ln Z = logsumexp_h [c.h + sum_i (s_i (b_i + (W h)_i)^2 / 2 + ln(2 pi s_i) / 2)].
Both models are evaluated by this file's `exact`, so any difference is the models'.
"""

import argparse
import gzip
import json
import struct
import sys
import time

import numpy as np


def read_idx_images(path):
    """uint8 images of an IDX3 file (gzip'd), one row per image."""
    with gzip.open(path, "rb") as f:
        magic, n, rows, cols = struct.unpack(">IIII", f.read(16))
        if magic != 0x803:
            sys.exit(f"{path}: expected IDX3 magic 0x803, found {magic:#x}")
        data = np.frombuffer(f.read(), dtype=np.uint8)
    return data.reshape(n, rows * cols)


def prep(a):
    rng = np.random.default_rng(a.seed)
    train = read_idx_images(f"{a.mnist}/train-images-idx3-ubyte.gz")[: a.n_train]
    test = read_idx_images(f"{a.mnist}/t10k-images-idx3-ubyte.gz")[: a.n_test]
    train = (train + rng.random(train.shape)) / 256.0
    test = (test + rng.random(test.shape)) / 256.0
    mean, sd = train.mean(axis=0), np.maximum(train.std(axis=0), a.sd_floor)
    np.save(f"{a.out}/train.npy", ((train - mean) / sd).astype(np.float32))
    np.save(f"{a.out}/test.npy", ((test - mean) / sd).astype(np.float32))
    np.savez(f"{a.out}/scaling.npz", mean=mean, sd=sd)
    print(
        json.dumps(
            {"train": train.shape[0], "test": test.shape[0], "pixels": train.shape[1]}
        )
    )


def read_safetensors(path):
    """The tensors and metadata of a safetensors file (F32/F64/U64 only)."""
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        body = f.read()
    types = {"F32": np.float32, "F64": np.float64, "U64": np.uint64}
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        lo, hi = t["data_offsets"]
        out[name] = np.frombuffer(body[lo:hi], dtype=types[t["dtype"]]).reshape(
            t["shape"]
        )
    return out, header.get("__metadata__", {})


def ours(a):
    t, meta = read_safetensors(a.model)
    if (meta.get("visible_units"), meta.get("hidden_units")) != (
        "gaussian",
        "bernoulli",
    ):
        sys.exit(f"{a.model}: expected a gaussian/bernoulli model, found {meta}")
    np.savez(
        a.out,
        W=t["W"].astype(np.float64),
        b=t["v.bias"].astype(np.float64),
        s=t["v.variance"].astype(np.float64),
        c=t["h.bias"].astype(np.float64),
    )


def softplus(x):
    return np.logaddexp(0.0, x)


def exact(a):
    p = np.load(a.params)
    W, b, s, c = p["W"], p["b"], p["s"], p["c"]
    x = np.load(a.data).astype(np.float64)
    n_h = W.shape[1]
    if n_h > 22:
        sys.exit(f"{a.params}: {n_h} hidden units; exact enumeration takes at most 22")
    neg_f = -(0.5 * x * x / s).sum(1) + x @ b + softplus(c + x @ W).sum(1)
    chunk = 1 << min(n_h, 14)
    bits = np.arange(n_h)
    parts = []
    const = 0.5 * np.log(2 * np.pi * s).sum()
    for start in range(0, 1 << n_h, chunk):
        idx = np.arange(start, start + chunk)
        h = ((idx[:, None] >> bits) & 1).astype(np.float64)
        m = b + h @ W.T
        parts.append(h @ c + 0.5 * (m * m * s).sum(1) + const)
    lw = np.concatenate(parts)
    top = lw.max()
    log_z = top + np.log(np.exp(lw - top).sum())
    ll = neg_f.mean() - log_z
    print(
        json.dumps(
            {
                "params": a.params,
                "data": a.data,
                "rows": x.shape[0],
                "log_z": log_z,
                "avg_log_likelihood": ll,
                "avg_log_likelihood_per_unit": ll / x.shape[1],
            }
        )
    )


def peer_energy(W, a, sigma):
    """learnergy 2.0.2's VarianceGaussianRBM (Cho et al. 2011; its `energy`: variance
    s = sigma^2 + eps(float32), visible mean a + W h, hidden input (v / s) W + c) in our
    energy: b = a / s, W_ours = W / s row by row (the constant sum a^2 / (2 s) cancels)."""
    s = sigma * sigma + np.finfo(np.float32).eps
    return W / s[:, None], a / s, s


def peer(a):
    import torch
    from learnergy.models.gaussian import VarianceGaussianRBM

    torch.manual_seed(a.seed)
    torch.set_num_threads(a.threads)
    x = torch.from_numpy(np.load(a.data))
    model = VarianceGaussianRBM(
        n_visible=x.shape[1],
        n_hidden=a.hidden,
        steps=1,
        learning_rate=a.lr,
        momentum=a.momentum,
        decay=0,
        temperature=1,
        use_gpu=False,
    )
    ds = torch.utils.data.TensorDataset(x, torch.zeros(x.shape[0]))
    t0 = time.perf_counter()
    model.fit(ds, batch_size=a.batch, epochs=a.epochs)
    secs = time.perf_counter() - t0
    W, a_bias, c, sigma = (
        model.W.detach().double().numpy(),
        model.a.detach().double().numpy(),
        model.b.detach().double().numpy(),
        model.sigma.detach().double().numpy(),
    )
    W_ours, b_ours, s_ours = peer_energy(W, a_bias, sigma)
    np.savez(a.out, W=W_ours, b=b_ours, s=s_ours, c=c)
    print(
        json.dumps(
            {"peer_train_s": secs, "epochs": a.epochs, "per_epoch_s": secs / a.epochs}
        )
    )


def tile(images, cols):
    """Images (n x 784, values in [0, 1]) as one grid of 28 x 28 tiles, 1-pixel gaps."""
    n = images.shape[0]
    rows = -(-n // cols)
    grid = np.ones((rows * 29 + 1, cols * 29 + 1))
    for k, im in enumerate(images):
        r, c = divmod(k, cols)
        grid[1 + 29 * r : 29 * (r + 1), 1 + 29 * c : 29 * (c + 1)] = im.reshape(28, 28)
    return grid


def png(a):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if a.filters:
        w = np.load(a.input)["W"].T[: a.n]
        lo, hi = w.min(axis=1, keepdims=True), w.max(axis=1, keepdims=True)
        images = (w - lo) / np.maximum(hi - lo, 1e-12)
    else:
        scaling = np.load(a.scaling)
        x = np.load(a.input)[: a.n].astype(np.float64)
        if a.means:
            m = np.load(a.means)
            rng = np.random.default_rng(a.seed)
            p_h = 1.0 / (1.0 + np.exp(-(m["c"] + x @ m["W"])))
            h = (rng.random(p_h.shape) < p_h).astype(np.float64)
            x = m["s"] * (m["b"] + h @ m["W"].T)
        images = np.clip(x * scaling["sd"] + scaling["mean"], 0.0, 1.0)
    grid = tile(images, a.cols)
    plt.imsave(a.out, grid, cmap="gray", vmin=0.0, vmax=1.0)
    print(json.dumps({"png": a.out, "images": images.shape[0]}))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("prep")
    p.add_argument("--mnist", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--n-train", type=int, default=60000)
    p.add_argument("--n-test", type=int, default=10000)
    p.add_argument("--sd-floor", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(f=prep)
    p = sub.add_parser("peer")
    p.add_argument("--data", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--hidden", type=int, required=True)
    p.add_argument("--epochs", type=int, required=True)
    p.add_argument("--lr", type=float, required=True)
    p.add_argument("--momentum", type=float, default=0.0)
    p.add_argument("--batch", type=int, default=100)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=1)
    p.set_defaults(f=peer)
    p = sub.add_parser("ours")
    p.add_argument("--model", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(f=ours)
    p = sub.add_parser("png")
    p.add_argument("--input", required=True, help="samples .npy, or a model .npz")
    p.add_argument("--scaling", help="prep's scaling.npz (samples)")
    p.add_argument("--filters", action="store_true")
    p.add_argument(
        "--means", help="a model .npz: show E[v | h], h ~ p(h | v) of each row"
    )
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", required=True)
    p.add_argument("-n", type=int, default=100)
    p.add_argument("--cols", type=int, default=10)
    p.set_defaults(f=png)
    p = sub.add_parser("exact")
    p.add_argument("--params", required=True)
    p.add_argument("--data", required=True)
    p.set_defaults(f=exact)
    a = ap.parse_args()
    a.f(a)


if __name__ == "__main__":
    main()
