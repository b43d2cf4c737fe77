#!/usr/bin/env python3
"""The self-run bad-input and fault sweep of issue 33: many bad inputs and faults through the
CLI and the Python package, each outcome classified.

Each case builds its inputs in a fresh folder, runs one command (the CLI binary, or a fresh
Python interpreter importing boltzkit) under a wall-clock limit and an address-space limit,
optionally sends SIGINT or closes/fills stdout, then classifies what happened:

  refused    the input was refused: CLI exit 1 or 2 with ONE `error:` line on stderr naming
             what the case says it must name; Python: the expected exception, one line, same
  handled    a valid input read, or a fault handled as promised (Ctrl-C: exit 130 /
             KeyboardInterrupt within a second, the last good model written)
  lost       something the user had is gone or changed: an input or device file replaced,
             a temporary left behind, the model missing after a log/checkpoint failure
  abort      killed by a signal (SIGABRT from a failed allocation, SIGKILL, SIGSEGV)
  hang       the limit passed (or an interrupt took more than a second to honour)
  panic      a Rust panic (exit 101, `panicked at`, pyo3's PanicException)
  unclear    refused, but the line lacks what it must name, spans lines, or speaks Rust
             (`os error`, `invalid digit`, `unwrap`)
  accepted   a bad input that should have been refused ran to the end (exit 0)
  wrong      a valid input refused

Usage (from the repository root; the CLI binary and the Python package must be built):

  nice -n 5 .venv/bin/python scripts/bad-input-sweep.py --cli target/debug/boltzkit
  ... --only python      run only cases whose name contains `python`
  ... --json tally.json  the outcome of every case as JSON

Full-disk and read-only cases mount a small tmpfs (root only; skipped otherwise). Exit
status 0 when every case is `refused` or `handled`, 1 otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import json
import os
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass, field

GOOD = ("refused", "handled")
BAD = ("lost", "abort", "hang", "panic", "unclear", "accepted", "wrong")
RUST_SPEAK = ("os error", "invalid digit", "unwrap", "RUST_BACKTRACE", "thread '")
# every child: at most this much address space (a guard that is missing shows as an abort or
# a MemoryError, never as a machine pushed into swap), the library told it has 4 GiB
ADDRESS_SPACE = 8 << 30
MEMORY_AVAILABLE = str(4 << 30)


@dataclass
class Case:
    """One bad input or fault. ``argv`` (CLI, with ``{d}`` for the case's folder) or ``code``
    (Python, run with ``d`` the folder, numpy as ``np`` and boltzkit imported)."""

    name: str
    argv: list = None
    code: str = None
    expect: str = "refuse"  # refuse | ok | interrupt
    says: tuple = ()  # words the one line must contain (case-insensitive)
    error: str = None  # Python: the exception class expected (or a base of it)
    keep: tuple = ()  # files (in d) that must be byte-identical or keep their type after
    made: tuple = ()  # files (in d) that must exist after (the model kept)
    setup: object = None  # callable(d) run before
    limit: float = 60.0
    sigint_after: float = None  # seconds (after the child printed `started`, Python)
    stdout: str = None  # closed | full
    needs_root: bool = False
    outcome: str = field(default=None, repr=False)
    detail: str = field(default="", repr=False)


# --------------------------------------------------------------------------------------------
# inputs


def bas_rows():
    """The 3×3 bars-and-stripes patterns (16 rows, 9 columns)."""
    rows = []
    for mask in range(8):
        bits = [(mask >> i) & 1 for i in range(3)]
        rows.append([bits[p % 3] for p in range(9)])
        rows.append([bits[p // 3] for p in range(9)])
    return rows


def write(d, name, data):
    path = os.path.join(d, name)
    with open(path, "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


def csv(rows, sep=","):
    return "".join(sep.join(map(str, r)) + "\n" for r in rows)


def npy_bytes(shape, descr="|u1", payload=None):
    """A .npy file by hand: any header, any payload."""
    header = (
        f"{{'descr': '{descr}', 'fortran_order': False, 'shape': {tuple(shape)}, }}"
    )
    header += " " * (-(len(header) + 11) % 64) + "\n"
    return (
        b"\x93NUMPY\x01\x00"
        + len(header).to_bytes(2, "little")
        + header.encode()
        + payload
    )


def safetensors(tensors, fmt="boltzkit/rbm/v1"):
    """A safetensors file of f32 tensors {name: (shape, values)}."""
    import struct

    header, blob = {"__metadata__": {"format": fmt}}, b""
    for name, (shape, values) in tensors.items():
        raw = struct.pack(f"<{len(values)}f", *values)
        header[name] = {
            "dtype": "F32",
            "shape": list(shape),
            "data_offsets": [len(blob), len(blob) + len(raw)],
        }
        blob += raw
    text = json.dumps(header).encode()
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + blob


def common_inputs(d, cli):
    """bas.csv, an RBM and an FVBM fitted to it, 31- and 40-column data, the 60-unit FVBM
    data whose Newton step and existence LP take seconds, the two-modes bracket data."""
    write(d, "bas.csv", csv(bas_rows()))
    run = lambda *a: subprocess.run([cli, *a], check=True, capture_output=True)
    run(
        "rbm",
        "fit",
        "--data",
        f"{d}/bas.csv",
        "--hidden",
        "4",
        "--epochs",
        "3",
        "--seed",
        "1",
        "-q",
        "-o",
        f"{d}/rbm.safetensors",
    )
    run(
        "fvbm",
        "fit",
        "--data",
        f"{d}/bas.csv",
        "--l2",
        "0.1",
        "-q",
        "-o",
        f"{d}/fvbm.safetensors",
    )
    import random

    rng = random.Random(0)
    for width in (31, 40):
        rows = [[rng.randint(0, 1) for _ in range(width)] for _ in range(200)]
        write(d, f"w{width}.csv", csv(rows))
    run(
        "gen",
        "fvbm",
        "--vars",
        "60",
        "--samples",
        "3000",
        "--seed",
        "1",
        "-q",
        "-o",
        f"{d}/f60.npy",
    )
    run("gen", "artificial-modes", "--seed", "1", "-q", "-o", f"{d}/modes.npy")


# --------------------------------------------------------------------------------------------
# the cases


def full_tmpfs(d, name="full", size="64k"):
    """A tmpfs of `size` at d/name, filled to the last byte but one page."""
    mnt = os.path.join(d, name)
    os.makedirs(mnt)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", mnt], check=True
    )
    fd = os.open(os.path.join(mnt, "filler"), os.O_WRONLY | os.O_CREAT)
    with contextlib.suppress(OSError):
        while True:
            os.write(fd, b"\0" * 4096)
    os.ftruncate(fd, os.fstat(fd).st_size - 4096)
    os.close(fd)
    return mnt


def ro_tmpfs(d):
    mnt = os.path.join(d, "ro")
    os.makedirs(mnt)
    subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k,ro", "tmpfs", mnt], check=True
    )


def cli(name, cmd, **kw):
    """A CLI case: `cmd` split like a shell line, with {d} (the case's folder), {bas} (the
    bars-and-stripes data), {rbm} and {fvbm} (models fitted to it) and {fit} (`rbm fit` of a
    quick model: --hidden 4 --epochs 3 -o {d}/m.safetensors unless the case sets them)."""
    argv = shlex.split(cmd.replace("{fit}", "rbm fit --seed 1 -q"))
    if argv[:2] == ["rbm", "fit"]:
        for flag, value in [
            ("--hidden", "4"),
            ("--epochs", "3"),
            ("-o", "{d}/m.safetensors"),
        ]:
            if flag not in argv and (flag != "--hidden" or "frank-wolfe" not in argv):
                argv += [flag, value]
    subs = {
        "{bas}": "{d}/bas.csv",
        "{rbm}": "{d}/rbm.safetensors",
        "{fvbm}": "{d}/fvbm.safetensors",
    }
    for k, v in subs.items():
        argv = [a.replace(k, v) for a in argv]
    return Case(f"cli {name}", argv=argv, **kw)


def model_file(name, w_shape, b_len=9, c_len=2, value=0.0):
    """A setup writing an RBM model file `name` with these shapes (every entry `value`)."""

    def setup(d):
        n = 1
        for s in w_shape:
            n *= s
        tensors = {
            "W": (w_shape, [value] * n),
            "b": ((b_len,), [0.0] * b_len),
            "c": ((c_len,), [0.0] * c_len),
        }
        write(d, name, safetensors(tensors))

    return setup


# fmt: off
def cli_cases():
    c = []
    fit1 = "rbm fit --hidden 2 --epochs 1 -q -o {d}/m.safetensors --data {d}/"
    for name, data, says in [
        ("empty.csv", b"", ("empty.csv",)),
        ("two.csv", csv([[0, 1, 2], [1, 0, 1]]), ("two.csv", "2")),
        ("ragged.csv", "0,1,0\n1,0\n", ("ragged.csv", "2")),
        ("letters.csv", "0,1,0\n1,x,1\n", ("letters.csv", "x")),
        ("u16.csv", b"\xff\xfe" + "0,1,0\n1,0,1\n".encode("utf-16-le"), ("UTF-16",)),
        ("twice.csv.gz", gzip.compress(gzip.compress(b"0,1\n1,0\n")), ("compressed twice",)),
        ("garbage.npy", b"\x00\x01garbage" * 10, ("garbage.npy",)),
        ("trunc.npy", npy_bytes((100, 9), payload=b"\x00" * 50), ("trunc.npy",)),
        ("nan.npy", npy_bytes((2, 2), "<f8", b"\x00" * 30 + b"\xf8\x7f"), ("nan.npy",)),
        ("cube.npy", npy_bytes((2, 2, 2), payload=b"\x00" * 8), ("cube.npy",)),
        ("mixed.csv", "0,1\n1;0\n", ("mixed.csv", ";")),
    ]:
        c.append(cli(f"data {name}", fit1 + name, says=says, keep=(name,),
                     setup=lambda d, n=name, x=data: write(d, n, x)))
    for name, data in [("bom.csv", b"\xef\xbb\xbf0,1,0\n1,0,1\n"), ("space.csv", "0 1 0\n1 0 1\n"),
                       ("mac.csv", "0,1,0\r1,0,1\r")]:
        c.append(cli(f"data {name} is read", fit1 + name, expect="ok",
                     setup=lambda d, n=name, x=data: write(d, n, x)))
    c += [
        cli("data missing", "{fit} --data {d}/nope.csv", says=("nope.csv",)),
        cli("data is a folder", "{fit} --data {d}", says=("directory",)),
        # model files
        cli("model is data", "rbm eval --model {bas} --data {bas}", says=("bas.csv",)),
        cli("model truncated", "rbm eval --model {d}/t.safetensors --data {bas}",
            says=("t.safetensors",),
            setup=lambda d: write(d, "t.safetensors", read(f"{d}/rbm.safetensors")[:100])),
        cli("model W transposed", "rbm eval --model {d}/wt.safetensors --data {bas}",
            says=("wt.safetensors", "transposed"), setup=model_file("wt.safetensors", (2, 9))),
        cli("model W not 2-D", "rbm eval --model {d}/w3.safetensors --data {bas}",
            says=("w3.safetensors", "2-D"), setup=model_file("w3.safetensors", (9, 2, 1))),
        cli("model b too short", "rbm eval --model {d}/b.safetensors --data {bas}",
            says=("b.safetensors", "`b`"), setup=model_file("b.safetensors", (9, 2), b_len=8)),
        cli("model NaN weight", "rbm eval --model {d}/nan.safetensors --data {bas}",
            says=("nan.safetensors", "NaN"),
            setup=model_file("nan.safetensors", (9, 2), value=float("nan"))),
        cli("model of another width", "rbm eval --model {rbm} --data {d}/w31.csv",
            says=("w31.csv", "rbm.safetensors")),
        cli("fvbm model to rbm eval", "rbm eval --model {fvbm} --data {bas}",
            says=("fvbm.safetensors",)),
        cli("fvbm tests of another width", "fvbm tests --model {fvbm} --data {d}/w31.csv",
            says=("w31.csv", "fvbm.safetensors")),
        # impossible settings and sizes
        cli("hidden 0", "{fit} --data {bas} --hidden 0", says=("hidden",)),
        cli("lr negative", "{fit} --data {bas} --lr -1", says=("learning_rate",)),
        cli("lr nan", "{fit} --data {bas} --lr nan", says=("learning_rate", "finite")),
        cli("batch -1", "{fit} --data {bas} --batch-size -1", says=("batch",)),
        cli("hidden 2.5", "{fit} --data {bas} --hidden 2.5", says=("whole number",)),
        cli("hidden 1e9", "{fit} --data {bas} --hidden 1000000000", says=("memory",), limit=20),
        cli("threads 100000", "{fit} --data {bas} --threads 100000", says=("threads",)),
        cli("ais-steps 1e12", "rbm eval --model {rbm} --data {bas} --method ais "
            "--ais-steps 1000000000000", says=("steps",), limit=20),
        cli("sample 1e12", "rbm sample --model {rbm} -n 1000000000000 -o {d}/s.npy",
            says=("memory",), limit=20),
        cli("sample 1e8 one step", "rbm sample --model {rbm} -n 100000000 --gibbs-steps 1 "
            "-o {d}/s.npy", says=("memory",), limit=20),
        cli("fsll 31 variables", "fsll fit --data {d}/w31.csv -o {d}/f.safetensors",
            says=("31", "memory"), limit=20),
        cli("fvbm mle 40 variables", "fvbm fit --algo mle --data {d}/w40.csv",
            says=("40", "memory"), limit=20),
        cli("resume a missing checkpoint", "{fit} --data {bas} --resume {d}/no.safetensors",
            says=("no.safetensors",)),
        # absurd counts: refused, or estimated up front and stopped by Ctrl-C within a second
        cli("k 1e9", "{fit} --data {bas} --hidden 256 --k 1000000000", says=("one update", "hour", "k"),
            limit=20),
        cli("k 1e9 on 2 hidden units", "{fit} --data {bas} --hidden 2 --k 1000000000",
            expect="interrupt", sigint_after=2.0, limit=20),
        cli("lab gradient 1e12", "lab gradient --model {rbm} --data {bas} "
            "--estimates 1000000000000", expect="interrupt", sigint_after=2.0, limit=20),
        # Potts alignments
        cli("potts empty alignment", "potts fit --data {d}/e.fasta -o {d}/p.safetensors",
            says=("e.fasta",), keep=("e.fasta",), setup=lambda d: write(d, "e.fasta", b"")),
        cli("potts ragged alignment", "potts fit --data {d}/r.fasta -o {d}/p.safetensors",
            says=("r.fasta", "letters"), keep=("r.fasta",),
            setup=lambda d: write(d, "r.fasta", ">a\nACDEF\n>b\nACD\n")),
        cli("potts letters outside the alphabet", "potts fit --data {d}/x.fasta "
            "-o {d}/p.safetensors", says=("x.fasta", "J"), keep=("x.fasta",),
            setup=lambda d: write(d, "x.fasta", ">a\nACDJF\n>b\nACDEF\n")),
        cli("potts binary garbage", "potts fit --data {d}/g.fasta -o {d}/p.safetensors",
            says=("g.fasta",), keep=("g.fasta",),
            setup=lambda d: write(d, "g.fasta", bytes(range(256)) * 4)),
        cli("potts 20,000 columns", "potts fit --data {d}/w.fasta -o {d}/p.safetensors",
            says=("w.fasta", "memory"), limit=20,
            setup=lambda d: write(d, "w.fasta", ">a\n" + "A" * 20000 + "\n>b\n" + "C" * 20000
                                  + "\n")),
        cli("potts -o missing folder", "potts fit --data {d}/ok.fasta -o {d}/nodir/p.safetensors",
            says=("nodir",), setup=lambda d: write(d, "ok.fasta", ">a\nACDEF\n>b\nACDEG\n")),
        # unit-type RBMs with wrong data
        cli("categorical visible with 2.5", "rbm fit --visible categorical --hidden 2 --epochs 1 "
            "--data {d}/c.csv -o {d}/m.safetensors", says=("c.csv", "2.5"), keep=("c.csv",),
            setup=lambda d: write(d, "c.csv", "0,1,2\n1,2.5,0\n")),
        cli("categorical:3 visible with a 5", "rbm fit --visible categorical:3 --hidden 2 "
            "--epochs 1 --data {d}/c.csv -o {d}/m.safetensors", says=("c.csv", "5"),
            keep=("c.csv",), setup=lambda d: write(d, "c.csv", "0,1,2\n1,5,0\n")),
        cli("gaussian visible with NaN", "rbm fit --visible gaussian --hidden 2 --epochs 1 "
            "--data {d}/nan.npy -o {d}/m.safetensors", says=("nan.npy",), keep=("nan.npy",),
            setup=lambda d: write(d, "nan.npy", npy_bytes((2, 2), "<f8",
                                                          b"\x00" * 30 + b"\xf8\x7f"))),
        cli("relu hidden 1e9", "rbm fit --visible gaussian --hidden-units relu "
            "--hidden 1000000000 --data {d}/f60.npy -o {d}/m.safetensors", says=("memory",),
            limit=20),
        # outputs
        cli("-o missing folder", "{fit} --data {bas} --epochs 100000 "
            "-o {d}/nodir/m.safetensors", says=("nodir",), limit=10),
        cli("-o name too long", "{fit} --data {bas} -o {d}/" + "m" * 300 + ".safetensors",
            says=("255",), limit=10),
        cli("-o 252-byte name", "{fit} --data {bas} -o {d}/" + "m" * 240 + ".safetensors",
            expect="ok", made=("m" * 240 + ".safetensors",)),
        cli("--log equals --data", "{fit} --data {bas} --log {bas}", says=("bas.csv",),
            keep=("bas.csv",)),
        cli("--log to a /dev/null link", "{fit} --data {bas} --log {d}/null.jsonl",
            says=("null.jsonl", "not a regular file"), keep=("null.jsonl",),
            setup=lambda d: os.symlink("/dev/null", f"{d}/null.jsonl")),
        cli("sample -o FIFO", "rbm sample --model {rbm} -n 5 -o {d}/p.npy",
            says=("p.npy", "FIFO"), keep=("p.npy",), setup=lambda d: os.mkfifo(f"{d}/p.npy")),
        cli("gen -o FIFO", "gen bars-stripes -o {d}/p.csv", says=("p.csv", "FIFO"),
            keep=("p.csv",), setup=lambda d: os.mkfifo(f"{d}/p.csv")),
        cli("-o read-only fs", "{fit} --data {bas} -o {d}/ro/m.safetensors",
            says=("read-only",), setup=ro_tmpfs, needs_root=True, limit=10),
        cli("--log on a full disk", "{fit} --data {bas} --epochs 20 --eval-every 1 "
            "--log {d}/full/log.jsonl", says=("log.jsonl", "m.safetensors"),
            made=("m.safetensors",), setup=full_tmpfs, needs_root=True),
        cli("--checkpoint on a full disk", "{fit} --data {bas} --epochs 20 --eval-every 1 "
            "--checkpoint {d}/full/ck.safetensors", says=("ck.safetensors", "m.safetensors"),
            made=("m.safetensors",), setup=full_tmpfs, needs_root=True),
        cli("-o on a full disk", "{fit} --data {bas} --hidden 200 -o {d}/full/m.safetensors",
            says=("m.safetensors", "NOT saved"), setup=full_tmpfs, needs_root=True),
        # closed and full stdout
        cli("--json to a closed stdout", "rbm eval --model {rbm} --data {bas} --json",
            says=("stdout",), stdout="closed"),
        cli("--json to /dev/full", "rbm eval --model {rbm} --data {bas} --json",
            says=("stdout",), stdout="full"),
        cli("table to /dev/full", "fvbm tests --model {fvbm} --data {bas}", says=("stdout",),
            stdout="full"),
        cli("fit summary to a closed stdout", "rbm fit --data {bas} -o {d}/m.safetensors",
            says=("stdout",), stdout="closed", made=("m.safetensors",)),
        # Ctrl-C
        cli("ctrl-c rbm fit", "rbm fit --data {d}/f60.npy --hidden 16 --epochs 1000000",
            expect="interrupt", sigint_after=2.0, made=("m.safetensors",)),
        cli("ctrl-c frank-wolfe", "rbm fit --algo frank-wolfe --data {d}/modes.npy "
            "--max-units 100000", expect="interrupt", sigint_after=2.0, made=("m.safetensors",)),
        cli("ctrl-c fvbm newton step", "fvbm fit --algo newton --data {d}/f60.npy "
            "-o {d}/m.safetensors", expect="interrupt", sigint_after=1.0,
            made=("m.safetensors",)),
        cli("ctrl-c fvbm existence LP", "fvbm fit --algo ga --max-iterations 1 "
            "--data {d}/f60.npy -o {d}/m.safetensors", expect="interrupt", sigint_after=1.5,
            made=("m.safetensors",)),
        cli("ctrl-c fvbm pcd", "fvbm fit --algo pcd --updates 1000000000 --data {bas} "
            "-o {d}/m.safetensors", expect="interrupt", sigint_after=1.5,
            made=("m.safetensors",)),
        # divergence
        cli("lr 100 diverges", "rbm fit --data {d}/modes.npy --algo pcd --hidden 16 "
            "--epochs 30 --lr 100 --max-abs-param inf --seed 1",
            says=("diverg", "m.safetensors"), made=("m.safetensors",)),
    ]
    return c


PY_FIT = "X = (np.random.default_rng(0).random((200, 12)) < 0.4).astype(np.uint8)\n"
R = "boltzkit.RBM(n_hidden=4, n_epochs=1, random_state=0)"
# a W stored transposed (12 visible, 2 hidden) written by the child as wt.safetensors
_HEX = safetensors(
    {"W": ((2, 12), [0.0] * 24), "b": ((12,), [0.0] * 12), "c": ((2,), [0.0] * 2)}
).hex()
WT = f"open(f'{{d}}/wt.safetensors', 'wb').write(bytes.fromhex('{_HEX}'))\n"
# the child's Ctrl-C case: `started`, then the fit; KeyboardInterrupt with the model kept
CTRL_C = ("est = {est}\nXd = np.load(f'{{d}}/{data}')\nprint('started', flush=True)\ntry:\n"
          "    est.fit(Xd)\nexcept KeyboardInterrupt:\n"
          "    print('kept', est.stop_reason_, flush=True)\n    raise\n")


def py_cases():
    c = []

    def py(name, code, error=None, says=(), **kw):
        kw.setdefault("expect", "refuse" if error else "ok")
        c.append(Case(f"python {name}", code=PY_FIT + code, error=error, says=says, **kw))

    py("fit NaN", "X = X.astype(float); X[0, 0] = np.nan\nboltzkit.RBM().fit(X)", "ValueError",
       ("nan",))
    py("fit 3-D", "boltzkit.RBM().fit(X.reshape(20, 10, 12))", "ValueError", ("2",))
    py("fit strings", "boltzkit.RBM().fit(X.astype(str))", "ValueError")
    py("fit no rows", "boltzkit.RBM().fit(X[:0])", "ValueError", ("0 sample",))
    py("fit ragged list", "boltzkit.RBM().fit([[0, 1], [1]])", "ValueError")
    py("n_hidden 0", "boltzkit.RBM(n_hidden=0).fit(X)", "ValueError", ("n_hidden",))
    py("n_hidden 1e9", "boltzkit.RBM(n_hidden=10**9).fit(X)", "MemoryError", ("needs about",))
    py("learning_rate nan", "boltzkit.RBM(learning_rate=float('nan')).fit(X)", "ValueError",
       ("learning_rate",))
    py("n_jobs 100000", "boltzkit.RBM(n_jobs=100000, n_epochs=1).fit(X)", "ValueError",
       ("n_jobs",))
    py("sample 1e12", f"{R}.fit(X).sample(10**12)", "MemoryError", ("needs about",))
    py("sample 1e8 one step", f"{R}.fit(X).sample(10**8, n_steps=1)", "MemoryError",
       ("needs about",))
    py("sample -1", f"{R}.fit(X).sample(-1)", "ValueError")
    py("ais_steps 1e12", f"{R}.fit(X).log_likelihood(X, method='ais', ais_steps=10**12)",
       "MemoryError", ("steps",))
    py("transform of another width", f"{R}.fit(X).transform(X[:, :5])", "ValueError", ("12",))
    py("FSLL 31 variables", "boltzkit.FSLL().fit(np.zeros((10, 31), np.uint8))", "MemoryError",
       ("31",))
    py("FVBM mle 40 variables", "boltzkit.FVBM(algo='mle').fit(np.zeros((10, 40), np.uint8))",
       "ValueError", ("40",))
    py("k 1e9", "boltzkit.RBM(n_hidden=256, algo='cd-1000000000').fit(X)", "ValueError",
       ("one update", "hour"))
    py("Potts 20,000 columns", "boltzkit.Potts().fit(np.zeros((4, 20000), np.uint8))",
       "MemoryError", ("needs about",), limit=20)
    py("Potts codes outside the alphabet", "boltzkit.Potts().fit(np.full((4, 5), 40, np.uint8))",
       "ValueError", ("40",))
    py("Potts n_jobs 100000", "boltzkit.Potts(n_jobs=100000).fit(np.zeros((4, 5), np.uint8))",
       "ValueError", ("n_jobs",))
    py("read_alignment ragged", "open(f'{d}/r.fasta', 'w').write('>a\\nACDEF\\n>b\\nACD\\n')\n"
       "boltzkit.read_alignment(f'{d}/r.fasta')", "ValueError", ("r.fasta",))
    py("read_alignment missing", "boltzkit.read_alignment(f'{d}/nope.fasta')", "OSError",
       ("nope.fasta",))
    py("FVBM MPLE that does not exist warns",
       "m = boltzkit.FVBM(algo='newton').fit(np.array([[0,0],[1,1],[1,1]], np.uint8))\n"
       "assert not m.mple_exists_\n"
       "assert any(issubclass(w.category, boltzkit.MpleExistenceWarning) for w in W)")
    py("load missing", "boltzkit.load(f'{d}/nope.safetensors')", "OSError", ("nope.safetensors",))
    py("load data file", "np.save(f'{d}/x.npy', X); boltzkit.load(f'{d}/x.npy')", "ValueError",
       ("x.npy",))
    py("load truncated", f"{R}.fit(X).save(f'{{d}}/m.safetensors')\n"
       "b = open(f'{d}/m.safetensors', 'rb').read()\n"
       "open(f'{d}/t.safetensors', 'wb').write(b[:100])\nboltzkit.load(f'{d}/t.safetensors')",
       "ValueError", ("t.safetensors",))
    py("load W transposed", WT + "boltzkit.load(f'{d}/wt.safetensors')", "ValueError",
       ("wt.safetensors", "transposed"))
    py("fit init W transposed", WT + "boltzkit.RBM(n_hidden=2, n_epochs=1).fit(X, "
       "init=f'{d}/wt.safetensors')", "ValueError", ("wt.safetensors", "transposed"))
    py("from_bytes garbage", "boltzkit.NativeModel.from_bytes(b'garbage' * 10)", "ValueError")
    py("save missing folder", f"{R}.fit(X).save(f'{{d}}/nodir/m.safetensors')", "OSError",
       ("nodir",))
    py("save name too long", f"{R}.fit(X).save(f'{{d}}/' + 'm' * 300 + '.safetensors')",
       "OSError", ("255",))
    py("save over a FIFO", f"os.mkfifo(f'{{d}}/p.safetensors'); {R}.fit(X).save("
       "f'{d}/p.safetensors')", "OSError", ("FIFO",))
    py("save over a /dev/null link", f"os.symlink('/dev/null', f'{{d}}/n.safetensors'); "
       f"{R}.fit(X).save(f'{{d}}/n.safetensors')", "OSError", ("not a regular file",))
    for name, data in [("bom.csv", b"\xef\xbb\xbf0,1,0\n1,0,1\n"),
                       ("space.csv", b"0 1 0\n1 0 1\n"), ("mac.csv", b"0,1,0\r1,0,1\r")]:
        py(f"read_dataset {name}", f"open(f'{{d}}/{name}', 'wb').write({data!r})\n"
           f"assert boltzkit.read_dataset(f'{{d}}/{name}').tolist() == [[0,1,0],[1,0,1]]")
    py("read_dataset UTF-16", "open(f'{d}/u.csv', 'wb').write(b'\\xff\\xfe' + "
       "'0,1\\n'.encode('utf-16-le'))\nboltzkit.read_dataset(f'{d}/u.csv')", "ValueError",
       ("UTF-16",))
    py("read_dataset gzip twice", "import gzip\nopen(f'{d}/t.csv.gz', 'wb').write(gzip.compress("
       "gzip.compress(b'0,1\\n')))\nboltzkit.read_dataset(f'{d}/t.csv.gz')", "ValueError",
       ("compressed twice",))
    py("read_dataset a folder", "boltzkit.read_dataset(d)", "ValueError", ("directory",))
    py("divergence lr 100", "m = boltzkit.RBM(n_hidden=16, n_epochs=30, learning_rate=100, "
       "algo='pcd-1', max_abs_param=float('inf'), random_state=1).fit(np.load(f'{d}/modes.npy'))"
       "\nassert m.stop_reason_.startswith('diverged'), m.stop_reason_\n"
       "assert any(issubclass(w.category, boltzkit.DivergenceWarning) for w in W)")
    for name, est, data, after in [
        ("rbm fit", "boltzkit.RBM(n_hidden=16, n_epochs=10**6, random_state=0)", "f60.npy", 1.5),
        ("fvbm newton step", "boltzkit.FVBM(algo='newton')", "f60.npy", 1.0),
        ("fvbm existence LP", "boltzkit.FVBM(algo='ga', max_iter=1)", "f60.npy", 1.5),
    ]:
        py(f"ctrl-c {name}", CTRL_C.format(est=est, data=data), expect="interrupt",
           sigint_after=after)
    return c
# fmt: on


PY_RUNNER = textwrap.dedent(
    """
    import json, os, sys, warnings
    import numpy as np
    import boltzkit
    d = sys.argv[1]
    with warnings.catch_warnings(record=True) as W:
        warnings.simplefilter("always")
        try:
            exec(compile(sys.argv[2], "<case>", "exec"))
            res = {"ok": True}
        except BaseException as e:
            res = {"ok": False, "type": type(e).__name__,
                   "mro": [k.__name__ for k in type(e).__mro__], "msg": str(e)}
    print("@@" + json.dumps(res), flush=True)
    """
)


def snapshot(d, names):
    """What each kept file is: its type and, for a regular file, its bytes."""
    out = {}
    for n in names:
        p = os.path.join(d, n)
        st = os.lstat(p)
        target = os.stat(p)
        data = read(p) if stat.S_ISREG(target.st_mode) else None
        out[n] = (stat.S_IFMT(st.st_mode), stat.S_IFMT(target.st_mode), data)
    return out


def run_case(case, cli, shared, env):
    d = tempfile.mkdtemp(prefix="sweep-")
    try:
        for n in os.listdir(shared):
            os.symlink(os.path.join(shared, n), os.path.join(d, n))
        if case.setup:
            case.setup(d)
        before = snapshot(d, case.keep)
        if case.argv is not None:
            argv = [cli] + [a.replace("{d}", d) for a in case.argv]
        else:
            argv = [sys.executable, "-c", PY_RUNNER, d, case.code]
        out = {"stdout": subprocess.PIPE, "stderr": subprocess.PIPE}
        if case.stdout == "full":
            out["stdout"] = full = open("/dev/full", "wb")  # noqa: SIM115 (closed below)
        start = time.monotonic()
        limited = ["prlimit", f"--as={ADDRESS_SPACE}", *argv]
        child = subprocess.Popen(limited, env=env, text=True, **out)
        if case.stdout == "full":
            full.close()
        if case.stdout == "closed":
            child.stdout.close()
        sent = None
        try:
            if case.sigint_after is not None:
                if case.argv is None:
                    child.stdout.readline()  # "started"
                time.sleep(case.sigint_after)
                sent = time.monotonic()
                child.send_signal(signal.SIGINT)
            stdout, stderr = child.communicate(timeout=case.limit)
        except subprocess.TimeoutExpired:
            child.kill()
            child.communicate()
            return "hang", f"no end within {case.limit} s"
        took = time.monotonic() - (sent or start)
        stdout = stdout or ""
        return classify(case, child.returncode, stdout, stderr, took, d, before)
    finally:  # a setup that failed half-way may have mounted already
        for m in ("full", "ro"):
            if os.path.ismount(os.path.join(d, m)):
                subprocess.run(["umount", "-l", os.path.join(d, m)], check=False)
        shutil.rmtree(d, ignore_errors=True)


def classify(case, rc, stdout, stderr, took, d, before):
    res = None
    for line in stdout.splitlines():
        if line.startswith("@@"):
            res = json.loads(line[2:])
    if (
        "panicked" in stderr
        or "PanicException" in stderr
        or (res or {}).get("type") == ("PanicException")
        or rc == 101
    ):
        return "panic", stderr.strip()[-300:]
    interrupted = case.expect == "interrupt" and rc == -signal.SIGINT
    if (rc < 0 and not interrupted) or rc in (134, 137, 139):
        return "abort", f"exit {rc}: {stderr.strip()[-200:]}"
    after_ok, why = True, ""
    for n, snap in before.items():
        p = os.path.join(d, n)
        if not os.path.lexists(p) or snapshot(d, [n])[n] != snap:
            after_ok, why = False, f"{n} changed or gone"
    for n in case.made:
        if not os.path.exists(os.path.join(d, n)):
            after_ok, why = False, f"{n} not written"
    left = [n for root, _, files in os.walk(d) for n in files if n.endswith(".tmp")]
    if left:
        after_ok, why = False, f"temporaries left: {left}"
    if not after_ok:
        return "lost", why
    if case.argv is not None:
        errors = [ln for ln in stderr.splitlines() if ln.startswith("error")]
        line = errors[0] if errors else ""
        refused, one = rc in (1, 2), len(errors) == 1
    else:
        if res is None:
            return "abort", f"no result (exit {rc}): {stderr.strip()[-200:]}"
        line = f"{res.get('type')}: {res.get('msg', '')}" if not res["ok"] else ""
        refused = not res["ok"] and res.get("type") != "KeyboardInterrupt"
        one = "\n" not in res.get("msg", "")
    if case.expect == "interrupt":
        # the CLI: 130 after writing the last good model, or (a command with nothing to
        # keep) ended by the default SIGINT action
        stopped = (
            rc in (130, -signal.SIGINT)
            if case.argv is not None
            else (res or {}).get("type") == "KeyboardInterrupt" and "kept" in stdout
        )
        if not stopped:
            return "hang", f"SIGINT not honoured: exit {rc} {took:.1f} s later"
        if took >= 1.0:
            return "hang", f"stopped {took:.1f} s after SIGINT"
        return "handled", f"stopped {took:.2f} s after SIGINT"
    if case.expect == "ok":
        ok = rc == 0 and (res is None or res["ok"])
        return ("handled", "") if ok else ("wrong", line or stderr.strip()[-200:])
    if not refused:
        return "accepted", f"exit {rc}"
    if case.argv is None and case.error and case.error not in res.get("mro", []):
        return "unclear", f"expected {case.error}: {line}"
    missing = [s for s in case.says if s.lower() not in line.lower()]
    speaks_rust = [s for s in RUST_SPEAK if s in line]
    if not one or missing or speaks_rust:
        return (
            "unclear",
            f"{line} (missing {missing}, rust {speaks_rust}, one line {one})",
        )
    return "refused", line


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", default="target/debug/boltzkit")
    ap.add_argument("--only", default="")
    ap.add_argument("--json")
    args = ap.parse_args()
    cli = os.path.abspath(args.cli)
    root = os.geteuid() == 0
    env = dict(
        os.environ, BOLTZKIT_MEMORY_AVAILABLE=MEMORY_AVAILABLE, RUST_BACKTRACE="0"
    )
    cases = [c for c in cli_cases() + py_cases() if args.only in c.name]
    shared = tempfile.mkdtemp(prefix="sweep-inputs-")
    tally = {}
    try:
        common_inputs(shared, cli)
        for case in cases:
            if case.needs_root and not root:
                case.outcome, case.detail = "skipped", "needs root to mount a tmpfs"
            else:
                t = time.monotonic()
                case.outcome, case.detail = run_case(case, cli, shared, env)
                case.detail += f" [{time.monotonic() - t:.1f} s]"
            tally[case.outcome] = tally.get(case.outcome, 0) + 1
            print(f"{case.outcome:9} {case.name}: {case.detail}", flush=True)
    finally:
        shutil.rmtree(shared, ignore_errors=True)
    print(
        "tally:",
        ", ".join(f"{k} {v}" for k, v in sorted(tally.items())),
        f"({len(cases)} cases)",
    )
    if args.json:
        with open(args.json, "w") as f:
            json.dump(
                [
                    {"name": c.name, "outcome": c.outcome, "detail": c.detail}
                    for c in cases
                ],
                f,
                indent=1,
            )
    return 0 if all(c.outcome in GOOD + ("skipped",) for c in cases) else 1


if __name__ == "__main__":
    sys.exit(main())
