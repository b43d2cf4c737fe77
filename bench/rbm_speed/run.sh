#!/bin/bash
# Same-run comparison of `boltzkit bench rbm-epoch` / `bench ais` with the PyTorch CPU peer
# (bench/python/torch_rbm_peer.py), interleaved; each line records the load average, the wall
# time reported by the tool and the process CPU time (user + system, /usr/bin/time).
#
# usage: bench/rbm_speed/run.sh epoch THREADS ROUNDS BIN...   (BIN: boltzkit binaries; "torch")
#        bench/rbm_speed/run.sh ais THREADS MODEL.safetensors MODEL.pt BIN...
#          (BIN:rate = boltzkit from the base-rate model of MNIST, as the peer; BIN alone = the
#          uniform base model, the only one older binaries have)
#        bench/rbm_speed/run.sh table DATA BIN                 (batch 20/100/500 × hidden 100/500/2000)
#        bench/rbm_speed/run.sh scaling ROUNDS BIN...          (each BIN on 2 then 1 threads, every round:
#          the 2-thread / 1-thread ratio from runs minutes apart at most, on a host whose speed drifts)
#        bench/rbm_speed/run.sh pairs THREADS ROUNDS DATA BIN... (short epochs of DATA, e.g. the 10,000
#          test images, each BIN in turn every round: seconds apart, for paired ratios of small gains)
#        summarize any of the epoch modes: ... | python3 bench/rbm_speed/summary.py
# env: PY (the peer's python, default /work/venv-torch/bin/python), MNIST (the training images)
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
PY=${PY:-/work/venv-torch/bin/python}
PEER="$HERE/../python/torch_rbm_peer.py"
MNIST=${MNIST:-$HERE/../../../shared/data/mnist/train-images-idx3-ubyte.gz}
TMP=$(mktemp -d)

# one timed command: prints "load=L cpu=U+S wall=W" then the tool's own figure
timed() {
  local load u s w
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -f "%U %S %e" -o "$TMP/t" "$@" > "$TMP/o" 2> "$TMP/e" || { cat "$TMP/e" >&2; return 1; }
  read -r u s w < "$TMP/t"
  echo "load=$load cpu=$(echo "$u + $s" | bc -l)s wall=${w}s $(grep -oE '"(min_s|min|log_z)": ?-?[0-9.e+-]*' "$TMP/o" | tr '\n' ' ')"
}

# the peer without OpenBLAS core-type / L2 overrides (a peer gets its best); its OpenMP threads
# wait passively (OMP_WAIT_POLICY, default PASSIVE here: on a machine shared with other jobs the
# default spinning cost it 64.7 s of CPU for one epoch, see BENCHMARKS.md)
PEER_CMD=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-PASSIVE}" "$PY" "$PEER")

# epoch_line ROUND BIN THREADS: one timed MNIST PCD-1 epoch of BIN (or the peer, "torch")
epoch_line() {
  if [ "$2" = torch ]; then
    echo "round $1 torch threads=$3 $(timed "${PEER_CMD[@]}" epoch --threads "$3" --sampler uniform --data "$MNIST")"
  else
    echo "round $1 $2 threads=$3 $(timed "$2" bench rbm-epoch --data "$MNIST" --binarize threshold:127 --repeats 1 --threads "$3" --quiet --json)"
  fi
}

case $1 in
epoch)
  T=$2; R=$3; shift 3
  for r in $(seq "$R"); do
    for b in "$@"; do epoch_line "$r" "$b" "$T"; done
  done ;;
ais)
  T=$2; M=$3; MP=$4; shift 4
  for b in "$@"; do
    if [ "$b" = torch ]; then
      echo "torch ais threads=$T $(timed "${PEER_CMD[@]}" ais --threads "$T" --sampler uniform --model "$MP" --data "$MNIST")"
    elif [ "${b%:rate}" != "$b" ]; then
      echo "${b%:rate} ais base-rate threads=$T $(timed "${b%:rate}" bench ais --model "$M" --base-data "$MNIST" --binarize threshold:127 --ais-chains 100 --repeats 1 --threads "$T" --quiet --json)"
    else
      echo "$b ais uniform threads=$T $(timed "$b" bench ais --model "$M" --ais-chains 100 --repeats 1 --threads "$T" --quiet --json)"
    fi
  done ;;
scaling)
  R=$2; shift 2
  for r in $(seq "$R"); do
    for T in 2 1; do
      for b in "$@"; do epoch_line "$r" "$b" "$T"; done
    done
  done ;;
pairs)
  T=$2; R=$3; MNIST=$4; shift 4
  for r in $(seq "$R"); do
    for b in "$@"; do epoch_line "$r" "$b" "$T"; done
  done ;;
table)
  D=$2; B=$3
  for h in 100 500 2000; do
    for bs in 20 100 500; do
      echo "hidden=$h batch=$bs boltzkit $(timed "$B" bench rbm-epoch --data "$D" --binarize threshold:127 --hidden $h --batch-size $bs --lr 0.05 --repeats 1 --quiet --json)"
      echo "hidden=$h batch=$bs torch    $(timed "${PEER_CMD[@]}" epoch --threads 2 --sampler uniform --data "$D" --hidden $h --batch $bs)"
    done
  done ;;
esac
rm -rf "$TMP"
