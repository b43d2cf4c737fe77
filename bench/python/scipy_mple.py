"""The maximum pseudo-likelihood estimate of a spin FVBM by scipy's L-BFGS-B on the log-PL and its
gradient written in numpy (what a Python user would write), the peer of
`boltzkit fvbm fit --algo newton` (issue 6's speed target).

Usage: python scipy_mple.py DATA.npy [--model FIT.safetensors] [--repeats N] [--gtol G]
                             [--ftol F] [--distinct]

`--gtol 1e-5 --ftol 2.220446049250313e-09` are scipy's own defaults (what a user gets from
`minimize(..., method="L-BFGS-B")` without options); the script's defaults are tighter.

DATA.npy holds 0/1 values (samples x variables), as `boltzkit gen fvbm` writes them; the spin
convention maps 0 to -1. The objective is -P_n(theta)/n with P_n of Eq. 2.1 of Nguyen & Wood
(P_n = sum_i sum_j [x_ij h_ij - ln 2cosh h_ij], h = X M + b), theta = (b, upper M) in boltzkit's
layout, started at 0. Prints the minimum and median wall time of `minimize` over the repeats
(building the spin matrix included), the least CPU time (all threads), iterations, function
evaluations, the final per-sample gradient, and, with --model, the largest difference from
boltzkit's fitted parameters.
--distinct sums over the distinct rows weighted by their counts (np.unique), as boltzkit does:
the same objective, for a user who thinks of it.
"""
import argparse
import json
import statistics
import struct
import time

import numpy as np
from scipy.optimize import minimize


def read_fvbm(path):
    """b and M of a boltzkit FVBM model file (safetensors: an 8-byte header length, a JSON
    header, then the raw little-endian tensors)."""
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8 : 8 + n])
    body = raw[8 + n :]
    meta = header.get("__metadata__", {})
    assert meta.get("convention") == "spin", f"{path}: need a spin model, got {meta}"

    def tensor(name):
        info = header[name]
        assert info["dtype"] == "F64"
        lo, hi = info["data_offsets"]
        return np.frombuffer(body[lo:hi], dtype="<f8").reshape(info["shape"])

    return tensor("b"), tensor("M")


def fit(data, gtol, ftol, maxiter, distinct):
    n, d = data.shape
    if distinct:
        rows, counts = np.unique(data, axis=0, return_counts=True)
        x, w = 2.0 * rows - 1.0, counts.astype(np.float64)[:, None]
    else:
        x, w = 2.0 * data - 1.0, 1.0
    iu = np.triu_indices(d, 1)

    def unpack(theta):
        m = np.zeros((d, d))
        m[iu] = theta[d:]
        return theta[:d], m + m.T

    def objective(theta):
        b, m = unpack(theta)
        h = x @ m + b
        f = np.sum(w * (x * h - np.logaddexp(h, -h)))
        r = w * (x - np.tanh(h))
        g = x.T @ r
        grad = np.concatenate([r.sum(axis=0), (g + g.T)[iu]])
        return -f / n, -grad / n

    theta0 = np.zeros(d + d * (d - 1) // 2)
    res = minimize(objective, theta0, jac=True, method="L-BFGS-B",
                   options={"gtol": gtol, "ftol": ftol, "maxiter": maxiter, "maxcor": 10})
    return res


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("--model", help="boltzkit's fitted model (.safetensors) to compare with")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--gtol", type=float, default=1e-9,
                    help="stop when every per-sample gradient component is at most this")
    ap.add_argument("--ftol", type=float, default=1e-15,
                    help="stop when an iteration lowers -P_n/n by at most ftol relative")
    ap.add_argument("--maxiter", type=int, default=100_000)
    ap.add_argument("--distinct", action="store_true",
                    help="sum over distinct rows weighted by their counts")
    args = ap.parse_args()
    data = np.load(args.data).astype(np.float64)
    n, d = data.shape
    times, cpu = [], []
    for _ in range(args.repeats):
        t, c = time.perf_counter(), time.process_time()
        res = fit(data, args.gtol, args.ftol, args.maxiter, args.distinct)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    out = {
        "n": n, "d": d, "distinct": args.distinct, "min_s": min(times), "median_s": statistics.median(times),
        "min_cpu_s": min(cpu), "repeats": len(times), "iterations": int(res.nit), "evaluations": int(res.nfev),
        "converged": bool(res.success), "message": str(res.message),
        "log_pl": float(-res.fun * n), "grad_max_per_sample": float(np.abs(res.jac).max()),
    }
    if args.model:
        b, m = read_fvbm(args.model)
        theta = np.concatenate([b, m[np.triu_indices(d, 1)]])
        out["max_abs_diff_vs_model"] = float(np.abs(theta - res.x).max())
    print(json.dumps(out))


if __name__ == "__main__":
    main()
