"""Fit an Ising model by maximum pseudo-likelihood and read its standard errors and Wald tests.

    python examples/python/fvbm_standard_errors.py            # 8 spins, 5,000 samples
    python examples/python/fvbm_standard_errors.py --vars 5 --samples 500

The data are drawn from a known FVBM (a chain of couplings), so the table can be read against
the truth: the couplings on the chain are significant, the others are not. The last lines show
what happens when the MPLE does not exist (perfectly separated data) and how ``l2`` fixes it.
"""

from __future__ import annotations

import argparse

import numpy as np

import boltzkit


def chain_truth(d, coupling=0.6, field=0.1):
    """A chain of couplings ``m_i_{i+1}`` with small fields, as a fitted FVBM to sample from."""
    M = np.zeros((d, d))
    for i in range(d - 1):
        M[i, i + 1] = M[i + 1, i] = coupling
    b = np.full(d, field)
    return b, M


def sample_truth(b, M, n, seed):
    """Exact draws from the spin model ``P(x) ∝ exp(½ xᵀMx + bᵀx)`` by enumeration."""
    d = len(b)
    states = (np.arange(2**d)[:, None] >> np.arange(d)) & 1
    spins = 2.0 * states - 1
    logp = 0.5 * np.einsum("si,ij,sj->s", spins, M, spins) + spins @ b
    p = np.exp(logp - logp.max())
    p /= p.sum()
    idx = np.random.default_rng(seed).choice(2**d, size=n, p=p)
    return states[idx].astype(np.uint8)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--vars", type=int, default=8)
    p.add_argument("--samples", type=int, default=5000)
    p.add_argument("--seed", type=int, default=1)
    a = p.parse_args(argv)

    b, M = chain_truth(a.vars)
    X = sample_truth(b, M, a.samples, a.seed)
    model = boltzkit.FVBM(algo="newton", convention="spin").fit(X)
    print(f"MPLE exists: {model.mple_exists_}; stop: {model.stop_reason_}")
    table = model.wald_test(level=0.95)
    print(table)
    truth = np.concatenate([b, M[np.triu_indices(a.vars, 1)]])
    covered = np.mean((table.ci_lower <= truth) & (truth <= table.ci_upper))
    print(f"95% intervals covering the true parameter: {covered:.0%}")

    separated = np.array([[0, 0], [1, 1]] * 50, dtype=np.uint8)
    runaway = boltzkit.FVBM(algo="newton", max_iter=50).fit(separated)
    ridge = boltzkit.FVBM(algo="newton", l2=0.01).fit(separated)
    print(
        f"separated data: MPLE exists {runaway.mple_exists_}; with l2=0.01 the coupling is "
        f"{ridge.coef_[0, 1]:.3f}"
    )
    return model, table, covered


if __name__ == "__main__":
    main()
