#!/usr/bin/env bash
# Issue 36 (c), time to plmc's 100-iteration objective (BENCHMARKS.md, "Potts pseudo-likelihood
# engine against plmc"): interleaved rounds of plmc `-m 100` and our engine (the plm_vs_plmc
# example, which stops once its objective is at or below TARGET) on the same alignment and
# settings (`-le 16 -lh 0.01 -g`, weights at identity 0.8), 2 threads each, OPENBLAS_CORETYPE /
# OPENBLAS_L2_SIZE unset for plmc. Prints per round each program's wall and CPU seconds, peak
# RSS, plmc's fx after its last iteration and our iterations to the target.
#   bash scripts/plmc-race.sh PLMC OURS ROUNDS [ALIGNMENT FOCUS TARGET ITERATIONS]
# defaults: ../shared/data/dca/DHFR.a2m DYR_ECOLI 165887.7 100 (plmc's fx after 100 there).
# OURS: target/release/examples/plm_vs_plmc (cargo build --release -p boltzkit --example plm_vs_plmc).
set -euo pipefail
plmc=$1; ours=$2; rounds=${3:-2}
ali=${4:-../shared/data/dca/DHFR.a2m}; focus=${5:-DYR_ECOLI}; target=${6:-165887.7}; m=${7:-100}
out=$(mktemp -d)
focus_flag=(); [ "$focus" != "-" ] && focus_flag=(-f "$focus")
for r in $(seq "$rounds"); do
  echo "round $r: $(uptime)"
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS=2 /usr/bin/time \
    -f "plmc: wall %e s, CPU %U + %S s, peak RSS %M KB" -o "$out/t" \
    "$plmc" -c "$out/plmc.cpl" -le 16 -lh 0.01 -m "$m" -g "${focus_flag[@]}" "$ali" \
    >/dev/null 2>"$out/plmc.err"
  echo "$(cat "$out/t"); fx after $m: $(tr '\r' '\n' < "$out/plmc.err" | awk -v m="$m" '$1 == m {print $4}')"
  RAYON_NUM_THREADS=2 /usr/bin/time -f "ours: wall %e s, CPU %U + %S s, peak RSS %M KB" -o "$out/t" \
    "$ours" "$ali" "$focus" "$out/ours.cpl" $((m * 3)) "$target" >"$out/ours.json" 2>/dev/null
  echo "$(cat "$out/t"); $(cat "$out/ours.json")"
done
rm -rf "$out"
