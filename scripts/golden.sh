#!/usr/bin/env bash
# Golden runs: a fixed list of short seeded commands whose model files and --json numbers are
# hashed, so a refactor can prove it changed no behaviour (issue "One shape for every model").
#
#   scripts/golden.sh [BOLTZKIT_BINARY] > golden.txt     # one "name sha256" line per artefact
#   diff golden-before.txt golden-after.txt               # equal, or each difference explained
#
# JSON keys that measure time (wall_s, learn_s, *_seconds, ...) and paths are dropped before
# hashing; every other number is hashed as printed. Run with a release build.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BIN="${1:-$ROOT/target/release/boltzkit}"
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"

CANON="$ROOT/scripts/golden_canon.py"
canon() { python3 "$CANON" json; }

# run NAME ARGS...: run the binary with --json, hash its canonical stdout.
run() {
  local name="$1"; shift
  "$BIN" "$@" --json 2>"$name.err" >"$name.json" || { echo "golden: $name failed:" >&2; cat "$name.err" >&2; exit 1; }
  echo "$name.json $(canon <"$name.json")"
}
# hash FILE...: the bytes of model / data / table files.
hash() {
  for f in "$@"; do echo "$f $(python3 "$CANON" file "$f")"; done
}

# Data.
run gen-ising gen ising --rows 4 --cols 4 --coupling 0.5 --samples 2000 -o ising.npy --truth ising-p.npy --seed 1
run gen-bn gen bn --vars 12 --parents 2 --samples 3000 -o bn.csv --truth bn-p.npy --seed 7
run gen-fvbm gen fvbm --vars 8 --samples 4000 -o fvbm.npy --truth fvbm-truth.safetensors --seed 4
run gen-bas gen bars-stripes --size 3 -o bas.csv
run gen-modes gen artificial-modes -o modes.npy --seed 1
hash ising.npy ising-p.npy bn.csv bn-p.npy fvbm.npy fvbm-truth.safetensors bas.csv modes.npy

# The demo.
run demo demo --quick

# FSLL.
run fsll-fit fsll fit --data ising.npy --truth ising-p.npy -o ising.fsll.safetensors
run fsll-fit-bn fsll fit --data bn.csv --path full -o bn.fsll.safetensors
run fsll-eval fsll eval --model ising.fsll.safetensors --data ising.npy --truth ising-p.npy
run fsll-sample fsll sample --model ising.fsll.safetensors -n 200 -o fsll-samples.npy --seed 3
hash ising.fsll.safetensors bn.fsll.safetensors fsll-samples.npy

# FVBM, every algorithm.
for algo in bslm ga newton mle pcd; do
  run "fvbm-$algo" fvbm fit --data fvbm.npy --algo "$algo" -o "fvbm-$algo.safetensors" --seed 2
  hash "fvbm-$algo.safetensors"
done
run fvbm-binary fvbm fit --data fvbm.npy --algo newton --convention binary --l2 1e-3 -o fvbm-bin.safetensors
run fvbm-tests fvbm tests --model fvbm-newton.safetensors --data fvbm.npy
run fvbm-eval fvbm eval --model fvbm-newton.safetensors --data fvbm.npy
run fvbm-sample fvbm sample --model fvbm-newton.safetensors -n 300 -o fvbm-samples.npy --seed 5
hash fvbm-bin.safetensors fvbm-samples.npy

# RBM, every trainer for a few epochs.
for algo in cd pcd cg sdcp csdcp popcd pt; do
  run "rbm-$algo" rbm fit --data bas.csv --algo "$algo" --hidden 4 --epochs 30 --batch-size 0 --lr 0.2 \
    --eval-every 10 --log "rbm-$algo.jsonl" -o "rbm-$algo.safetensors" --seed 1
  hash "rbm-$algo.safetensors"
  echo "rbm-$algo.jsonl $(canon <"rbm-$algo.jsonl")"
done
run rbm-popcd-loo rbm fit --data modes.npy --algo popcd --loo --k 1 --hidden 8 --epochs 2 --batch-size 500 --lr 0.1 -o rbm-popcd-loo.safetensors --seed 2
run rbm-mnistish rbm fit --data modes.npy --algo pcd --hidden 20 --epochs 2 --lr 0.05 --eval ais --eval-every 1 -o rbm-ais.safetensors --seed 3
hash rbm-popcd-loo.safetensors rbm-ais.safetensors
run rbm-eval-exact rbm eval --model rbm-ais.safetensors --data modes.npy --method exact
run rbm-eval-ais rbm eval --model rbm-ais.safetensors --data modes.npy --method ais --chains 20 --steps 500 --seed 4
run rbm-eval-raise rbm eval --model rbm-ais.safetensors --data modes.npy --method raise --chains 20 --steps 500 --seed 4
run rbm-sample rbm sample --model rbm-ais.safetensors -n 50 -o rbm-samples.npy --seed 2
hash rbm-samples.npy

# Frank-Wolfe, 5 units.
run fw rbm fit --algo frank-wolfe --data modes.npy --max-units 5 --eval-every 1 --samples 200 -o fw.safetensors --seed 1
hash fw.safetensors

# Paper protocols, shortened.
run repro-sdcp repro sdcp --small --epochs 60 --trials 2 --eval-every 20 -o sdcp-out --seed 1
for f in $(cd sdcp-out && ls | grep -E '\.(csv|md)$' | sort); do hash "sdcp-out/$f"; done
run repro-popcd repro popcd --part curves --datasets bas,modes --trials 2 --iterations 60 -o popcd-out --seed 1
for f in $(cd popcd-out && ls | grep -E '\.(csv|md)$' | sort); do hash "popcd-out/$f"; done
