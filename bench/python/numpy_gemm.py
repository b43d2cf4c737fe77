"""numpy's float32 matrix products on the RBM shapes, the peer of the `rbm_gemm` group of
`cargo bench -p boltzkit --bench rbm` (issue 3: GFLOP/s of our GEMM against numpy's).

Usage: python numpy_gemm.py [--repeats N] [--threads T]

Shapes (batch 100, 784 visible, 500 hidden): V·W (100x784 · 784x500), H·Wᵀ (100x500 · 500x784),
Vᵀ·H (784x100 · 100x500). V and H are 0/1 with 13% and 50% ones, W ~ U(-0.5, 0.5): the same
data as the Rust bench. Prints the minimum time over the repeats and the GFLOP/s (2·m·n·k).
Set --threads before numpy loads its BLAS (OPENBLAS_NUM_THREADS and friends).
"""
import argparse
import os
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=200)
    ap.add_argument("--threads", type=int, default=None)
    args = ap.parse_args()
    if args.threads is not None:
        for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
            os.environ[var] = str(args.threads)
    import numpy as np

    rng = np.random.default_rng(1)
    bt, nv, nh = 100, 784, 500
    v = (rng.random((bt, nv)) < 0.13).astype(np.float32)
    h = (rng.random((bt, nh)) < 0.5).astype(np.float32)
    w = (rng.random((nv, nh)) - 0.5).astype(np.float32)
    cases = [
        ("V*W_100x784x500", lambda: v @ w, bt * nh * nv),
        ("H*Wt_100x500x784", lambda: h @ w.T, bt * nv * nh),
        ("Vt*H_784x100x500", lambda: v.T @ h, nv * nh * bt),
    ]
    print(f"numpy {np.__version__}, threads {args.threads or 'default'}")
    for name, f, macs in cases:
        f()
        best = float("inf")
        for _ in range(args.repeats):
            t = time.perf_counter()
            f()
            best = min(best, time.perf_counter() - t)
        print(f"{name}: {best * 1e3:.3f} ms = {2 * macs / best / 1e9:.1f} GFLOP/s")


if __name__ == "__main__":
    sys.exit(main())
