"""PGM's side of the Kunitz comparison (issue 34): the settings of PGM's notebook
"Kunitz Domain.ipynb" (Potts visible, 100 dReLU hidden, PCD-1, batch 100, L1b 0.25, weights 1 /
neighbours at 80% identity, its learning rate and decay), for a given number of epochs.

Run with a Python that has numpy, numba, scipy, pandas, matplotlib (PGM's needs):

    python scripts/pgm_kunitz.py --pgm ../shared/peers/PGM --epochs 20 --out /tmp/kunitz

It writes the data exactly as PGM reads it (duplicates dropped, shuffled with seed 0) as
integer codes (`codes.csv`, PGM's alphabet order) and the weights (`weights.txt`), so boltzkit
trains on the same rows (`scripts/pgm_kunitz.sh`), and prints one JSON line: the epochs, the
training wall and CPU seconds per epoch, PGM's AIS ln Z and the weighted log-likelihood per
site, as the notebook computes them.
"""

import argparse
import json
import os
import resource
import sys
import time


def cpu_seconds():
    """User + system CPU seconds of this process (its threads included)."""
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def write_unit_rbm(path, model, np):
    """PGM's trained Potts-dReLU model as a boltzkit model file (`boltzkit/rbm/v2`
    safetensors: `W` of one-hot rows site by site, `v.fields`, `v.q`, `h.gamma_plus`, ...), so
    `boltzkit rbm eval` scores PGM's model and ours with one evaluator."""
    n_h, n_v, q = model.weights.shape
    tensors = {
        "W": np.ascontiguousarray(
            model.weights.transpose(1, 2, 0).reshape(n_v * q, n_h), dtype="<f4"
        ),
        "v.fields": np.asarray(model.vlayer.fields, dtype="<f4").reshape(-1),
        "v.q": np.full(n_v, q, dtype="<u8"),
    }
    for name in ("gamma_plus", "gamma_minus", "theta_plus", "theta_minus"):
        tensors["h." + name] = np.asarray(getattr(model.hlayer, name), dtype="<f4")
    header, blobs, at = {}, [], 0
    for name, x in tensors.items():
        b = x.tobytes()
        dtype = "U64" if x.dtype.kind == "u" else "F32"
        header[name] = {
            "dtype": dtype,
            "shape": list(x.shape),
            "data_offsets": [at, at + len(b)],
        }
        blobs.append(b)
        at += len(b)
    header["__metadata__"] = {
        "format": "boltzkit/rbm/v2",
        "visible_units": "categorical",
        "hidden_units": "drelu",
    }
    h = json.dumps(header).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--pgm", required=True, help="PGM's repository (source/, utilities/, data/)"
    )
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument(
        "--ais-betas", type=int, default=20000, help="PGM's n_betas (notebook: 20000)"
    )
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--out", required=True, help="folder for codes.csv and weights.txt")
    a = p.parse_args()

    sys.path.append(os.path.join(a.pgm, "source"))
    sys.path.append(os.path.join(a.pgm, "utilities"))
    from common_imports import set_num_threads

    set_num_threads(a.threads)  # before numpy and numba, as the notebook
    import numpy as np
    import Proteins_utils
    import rbm
    import utilities

    os.makedirs(a.out, exist_ok=True)
    path = os.path.join(a.pgm, "data", "Kunitz", "Kunitz_domain_MSA.fasta")
    all_data = Proteins_utils.load_FASTA(path, drop_duplicates=True)
    seed = utilities.check_random_state(0)
    permutation = np.argsort(seed.rand(all_data.shape[0]))
    all_data = all_data[permutation]
    num_neighbours = Proteins_utils.count_neighbours(all_data)
    all_weights = (1.0 / num_neighbours).astype(np.float32)
    np.savetxt(os.path.join(a.out, "codes.csv"), all_data, fmt="%d", delimiter=",")
    np.savetxt(
        os.path.join(a.out, "weights.txt"), all_weights.astype(np.float64), fmt="%.9g"
    )

    n_v = all_data.shape[1]
    settings = {
        "batch_size": 100,
        "l1b": 0.25,
        "N_MC": 1,
        "decay_after": 0.5,
        "verbose": 0,
        "vverbose": 0,
    }
    # numba compiles on first use: one epoch of a throwaway model first, out of the timing
    warm = rbm.RBM(visible="Potts", hidden="dReLU", n_v=n_v, n_h=100, n_cv=21)
    warm.fit(all_data[:500], weights=all_weights[:500], n_iter=1, **settings)
    model = rbm.RBM(visible="Potts", hidden="dReLU", n_v=n_v, n_h=100, n_cv=21)
    wall, cpu = time.perf_counter(), cpu_seconds()
    model.fit(all_data, weights=all_weights, n_iter=a.epochs, **settings)
    wall, cpu = time.perf_counter() - wall, cpu_seconds() - cpu
    write_unit_rbm(os.path.join(a.out, "pgm.safetensors"), model, np)
    model.AIS(n_betas=a.ais_betas, verbose=0)
    ll = utilities.average(model.likelihood(all_data), weights=all_weights) / n_v
    print(
        json.dumps(
            {
                "peer": "PGM",
                "sequences": int(all_data.shape[0]),
                "sites": int(n_v),
                "epochs": a.epochs,
                "s_per_epoch": wall / a.epochs,
                "cpu_s_per_epoch": cpu / a.epochs,
                "log_z": float(model.log_Z_AIS),
                "ll_per_site": float(ll),
            }
        )
    )


if __name__ == "__main__":
    main()
