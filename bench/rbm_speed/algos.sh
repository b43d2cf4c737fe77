#!/bin/bash
# One-epoch `rbm fit` of each trainer (CD, PCD, CG, S-DCP, CS-DCP, pop-CD, PT) on MNIST
# 784 x 500 (threshold 127, batch 100, default lr, no evaluation), two threads, the binaries
# given interleaved, two rounds; prints each fit's own wall_s (BENCHMARKS.md, issue 19).
# usage: bench/rbm_speed/algos.sh BIN...      env: MNIST (the training images)
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
D=${MNIST:-$HERE/../../../shared/data/mnist/train-images-idx3-ubyte.gz}
for r in 1 2; do
for a in cd-1 pcd-1 cg-1 sdcp-4-1 csdcp-4-1 popcd-1 pt-5-1; do
  for b in "$@"; do
    w=$("$b" rbm fit --data "$D" --binarize threshold:127 --algo $a --hidden 500 --epochs 1 --eval none --seed 1 --threads 2 --json -q -o "${TMPDIR:-/tmp}/algos-$$.safetensors" | grep -o '"wall_s":[0-9.]*' | tail -1)
    echo "round $r $a $b $w load=$(cut -d' ' -f1 /proc/loadavg)"
  done
done
done
rm -f "${TMPDIR:-/tmp}/algos-$$.safetensors"
