"""PyTorch (CPU, float32) peer of `boltzkit bench rbm-epoch` and `boltzkit bench ais`.

One epoch of PCD-1 on a binary RBM (784 visible x 500 hidden) on binarized MNIST
(pixel > 127 is 1), batch 100, lr 0.05, W ~ N(0, 0.01^2), c = 0, b = logit of the data means
(boltzkit's Sec. 4.1 initialization), shuffled data, 100 persistent chains started at the first
mini-batch (as boltzkit's PCD does).  Gradient: <v p(h|v)>_data - <v p(h|v)>_model.

Per mini-batch, six dense products of 100x784x500 (as boltzkit):
  p(h|v_data) = s(V W + c)
  chains: h ~ s(Vc W + c),  Vc ~ s(H W^T + b),  p(h|Vc) = s(Vc W + c)
  W += lr/B (V^T Ph - Vc^T Phc)

AIS: forward AIS of ln Z from the base-rate visible model (Salakhutdinov & Murray 2008),
the standard 14,500-step schedule (or --ais-steps N linear), 100 chains; two dense products
(100x784x500) per step.

Set-up (once, in a virtual environment; a large download): pip install torch numpy

Usage:
  python torch_rbm_peer.py epoch --repeats 1 [--save model.pt] [--hidden 500 --batch 100 --k 1]
  python torch_rbm_peer.py ais --model model.pt [--ais-steps 0]
(a model file of boltzkit's: bench/python/safetensors_to_torch.py model.safetensors model.pt)

This copy of ../shared/bench/torch_rbm_peer.py adds --data, --hidden, --batch and --k (the
batch × hidden table of BENCHMARKS.md); the defaults run the same work as the original.
Timings (time.perf_counter around the work only; data loading/binarization excluded,
initialization included) are printed as one JSON line on stdout.
"""
import argparse
import gzip
import json
import math
import statistics
import sys
import time

import numpy as np
import torch

import os
MNIST = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "shared", "data", "mnist",
                     "train-images-idx3-ubyte.gz")


def read_idx_images(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    magic, n, rows, cols = np.frombuffer(data[:16], dtype=">i4")
    assert magic == 2051, f"not an IDX image file: magic {magic}"
    return np.frombuffer(data[16:], dtype=np.uint8).reshape(n, rows * cols)


def load_mnist_binary(path=MNIST):
    x = read_idx_images(path) > 127
    return torch.from_numpy(x.astype(np.float32))


def base_rate_bias(x, eps=1e-3):
    """logit of the (clamped) per-pixel means: boltzkit's b init and the AIS base model."""
    p = x.mean(0).clamp(eps, 1 - eps)
    return torch.log(p) - torch.log1p(-p)


@torch.no_grad()
def pcd_epoch(x, n_hidden=500, batch=100, lr=0.05, k=1, gen=None, sampler="bernoulli"):
    """A fresh model (initialization included) and one epoch of PCD-k. Returns (W, b, c)."""
    n, nv = x.shape
    W = torch.empty(nv, n_hidden).normal_(0.0, 0.01, generator=gen)
    b = base_rate_bias(x)
    c = torch.zeros(n_hidden)

    perm = torch.randperm(n, generator=gen)
    # preallocated buffers
    v = torch.empty(batch, nv)         # data mini-batch
    ph = torch.empty(batch, n_hidden)  # p(h|v_data)
    vc = x.index_select(0, perm[:batch]).clone()  # persistent chains, started at batch 0
    phc = torch.empty(batch, n_hidden)
    hc = torch.empty(batch, n_hidden)
    pvc = torch.empty(batch, nv)
    u_h = torch.empty(batch, n_hidden)
    u_v = torch.empty(batch, nv)
    scale = lr / batch

    def sample(p, out, u):
        if sampler == "bernoulli":
            torch.bernoulli(p, generator=gen, out=out)
        else:  # uniform compare
            u.uniform_(generator=gen)
            torch.lt(u, p, out=out)  # out is float: 1.0 / 0.0

    for i in range(0, n - batch + 1, batch):
        torch.index_select(x, 0, perm[i:i + batch], out=v)
        # positive phase
        torch.addmm(c, v, W, out=ph).sigmoid_()
        # negative phase: k Gibbs steps of the persistent chains
        for _ in range(k):
            torch.addmm(c, vc, W, out=phc).sigmoid_()
            sample(phc, hc, u_h)
            torch.addmm(b, hc, W.t(), out=pvc).sigmoid_()
            sample(pvc, vc, u_v)
        torch.addmm(c, vc, W, out=phc).sigmoid_()
        # SGD step on the log-likelihood gradient estimate
        W.addmm_(v.t(), ph, alpha=scale).addmm_(vc.t(), phc, alpha=-scale)
        b.add_(v.sum(0) - vc.sum(0), alpha=scale)
        c.add_(ph.sum(0) - phc.sum(0), alpha=scale)
    return W, b, c


def standard_schedule():
    betas = []
    for lo, hi, n in ((0.0, 0.5, 500), (0.5, 0.9, 4000), (0.9, 1.0, 10000)):
        betas.extend(lo + (hi - lo) * i / n for i in range(n))
    betas.append(1.0)
    return betas


@torch.no_grad()
def ais_log_z(W, b, c, base_b, betas, n_chains=100, gen=None, sampler="bernoulli"):
    """Forward AIS from the base-rate model p_A(v) = prod sigmoid(base_b)^v ... (W = 0).
    ln p*_k(v) = (1-B_k) b_A.v + B_k b.v + sum_j softplus(B_k (c_j + v.W_j))."""
    nv, nh = W.shape
    v = torch.bernoulli(torch.sigmoid(base_b).expand(n_chains, nv).contiguous(), generator=gen)
    log_w = torch.zeros(n_chains, dtype=torch.float64)
    db = b - base_b
    x = torch.empty(n_chains, nh)
    ph = torch.empty(n_chains, nh)
    h = torch.empty(n_chains, nh)
    pv = torch.empty(n_chains, nv)
    sp = torch.nn.functional.softplus
    u_h = torch.empty(n_chains, nh)
    u_v = torch.empty(n_chains, nv)

    def sample(p, out, u):
        if sampler == "bernoulli":
            torch.bernoulli(p, generator=gen, out=out)
        else:  # uniform compare
            u.uniform_(generator=gen)
            torch.lt(u, p, out=out)

    for k in range(1, len(betas)):
        b0, b1 = betas[k - 1], betas[k]
        torch.addmm(c, v, W, out=x)  # V W + c
        # log-weight: ln p*_{b1}(v) - ln p*_{b0}(v)
        lw = (b1 - b0) * (v @ db) + (sp(b1 * x) - sp(b0 * x)).sum(1)
        log_w += lw
        # h ~ s(b1 (V W + c))
        torch.mul(x, b1, out=ph).sigmoid_()
        sample(ph, h, u_h)
        # v ~ s((1-b1) b_A + b1 (b + H W^T))
        bias = (1.0 - b1) * base_b + b1 * b
        torch.addmm(bias, h, W.t(), alpha=b1, out=pv).sigmoid_()
        sample(pv, v, u_v)
    log_z0 = nh * math.log(2.0) + sp(base_b.double()).sum().item()
    m = torch.logsumexp(log_w, 0).item() - math.log(n_chains)
    return log_z0 + m, log_w


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("task", choices=["epoch", "ais"])
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--sampler", default="bernoulli", choices=["bernoulli", "uniform"])
    ap.add_argument("--save", help="epoch: save (W, b, c) here (torch.save)")
    ap.add_argument("--model", help="ais: (W, b, c) file from --save")
    ap.add_argument("--ais-steps", type=int, default=0, help="0: the standard 14,500 schedule")
    ap.add_argument("--chains", type=int, default=100)
    ap.add_argument("--data", default=MNIST, help="IDX image file (gzipped or not)")
    ap.add_argument("--hidden", type=int, default=500, help="epoch: hidden units")
    ap.add_argument("--batch", type=int, default=100, help="epoch: mini-batch rows")
    ap.add_argument("--k", type=int, default=1, help="epoch: Gibbs steps per update (PCD-k)")
    args = ap.parse_args()

    torch.set_num_threads(args.threads)
    gen = torch.Generator().manual_seed(args.seed)
    x = load_mnist_binary(args.data)
    times, extra = [], {}
    if args.task == "epoch":
        kw = dict(n_hidden=args.hidden, batch=args.batch, k=args.k, gen=gen, sampler=args.sampler)
        pcd_epoch(x[:1000], **kw)  # warm-up (allocator, BLAS init)
        for _ in range(args.repeats):
            t = time.perf_counter()
            W, b, c = pcd_epoch(x, **kw)
            times.append(time.perf_counter() - t)
        if args.save:
            torch.save({"W": W, "b": b, "c": c}, args.save)
        extra["w_absmean"] = W.abs().mean().item()
    else:
        m = torch.load(args.model)
        W, b, c = m["W"].contiguous(), m["b"], m["c"]
        base_b = base_rate_bias(x)
        betas = standard_schedule() if args.ais_steps == 0 else \
            [i / args.ais_steps for i in range(args.ais_steps + 1)]
        ais_log_z(W, b, c, base_b, betas[:11], args.chains, gen, args.sampler)  # warm-up
        for _ in range(args.repeats):
            t = time.perf_counter()
            log_z, _ = ais_log_z(W, b, c, base_b, betas, args.chains, gen, args.sampler)
            times.append(time.perf_counter() - t)
        extra["log_z"] = log_z
        extra["steps"] = len(betas) - 1
    print(json.dumps({"task": args.task, "threads": torch.get_num_threads(),
                      "interop_threads": torch.get_num_interop_threads(),
                      "times": times, "min": min(times), "median": statistics.median(times),
                      **extra}))


if __name__ == "__main__":
    sys.exit(main())
