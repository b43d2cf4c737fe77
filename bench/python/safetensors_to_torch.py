"""Converts a boltzkit RBM model file (safetensors: W, b, c as f32) into the {"W", "b", "c"}
torch file that ../shared/bench/torch_rbm_peer.py reads with --model, so the PyTorch AIS
peer anneals the very model `boltzkit bench ais --model` does.

Usage: python safetensors_to_torch.py model.safetensors model.pt   (needs torch and numpy)
"""
import json
import struct
import sys

import numpy as np
import torch


def read_safetensors(path):
    with open(path, "rb") as f:
        raw = f.read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    body = raw[8 + n:]
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        assert meta["dtype"] == "F32", f"{name}: {meta['dtype']}"
        lo, hi = meta["data_offsets"]
        out[name] = np.frombuffer(body[lo:hi], dtype="<f4").reshape(meta["shape"]).copy()
    return out


def main():
    src, dst = sys.argv[1], sys.argv[2]
    t = read_safetensors(src)
    print({k: v.shape for k, v in t.items()}, file=sys.stderr)
    nv, nh = t["b"].size, t["c"].size
    w = torch.from_numpy(t["W"].reshape(nv, nh))
    torch.save({"W": w, "b": torch.from_numpy(t["b"].reshape(nv)),
                "c": torch.from_numpy(t["c"].reshape(nh))}, dst)


if __name__ == "__main__":
    main()
