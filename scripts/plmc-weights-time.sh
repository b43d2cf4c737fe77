#!/usr/bin/env bash
# plmc's sequence reweighting alone (BENCHMARKS.md, "Sequence weights at 10^5 sequences"):
# runs plmc with --save-weights and stops it as soon as the weights file holds N lines; prints
# the wall seconds, plmc's CPU seconds (from /proc) and N_eff.
#   bash scripts/plmc-weights-time.sh PLMC ALIGNMENT N
set -euo pipefail
plmc=$1; f=$2; n=$3
w=$(mktemp); rm -f "$w"
start=$(date +%s.%N)
env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$plmc" --save-weights "$w" -le 16 -lh 0.01 -m 1 "$f" >/dev/null 2>&1 &
pid=$!
while [ "$( (wc -l < "$w") 2>/dev/null || echo 0)" -lt "$n" ]; do sleep 0.02; done
end=$(date +%s.%N)
read -r -a st < "/proc/$pid/stat"
kill "$pid"; wait "$pid" 2>/dev/null || true
awk -v s="$start" -v e="$end" -v u="${st[13]}" -v k="${st[14]}" '{t += $1} END {
  printf "plmc weights: %.2f s wall, %.2f s CPU, N_eff %.2f\n", e - s, (u + k) / 100, t }' "$w"
rm -f "$w"
