#!/usr/bin/env bash
# Issue 36 must-show (b): plmc and our engine, both run to convergence (plmc `-m 0`: liblbfgs'
# test ‖∇f‖ ≤ 10⁻³ max(1, ‖x‖); ours: the same test, PlmParams::grad_tol 10⁻³, at most
# MAX_ITER iterations) on the same alignment and settings (`-le 16 -lh 0.01 -g`, weights at
# identity 0.8, `-f DYR_ECOLI` on DHFR), then scripts/plmc-agreement.py on the two couplings
# files (max abs score difference ≤ 10⁻³ of the largest, the same top-L pairs).
#   bash scripts/plmc-converge.sh PLMC OURS OUTDIR
# OURS: target/release/examples/plm_vs_plmc (cargo build --release -p boltzkit --example plm_vs_plmc).
# Environment: THREADS (default 2, each program), DATASETS (default "PF00014 DHFR"),
# PROGRAMS (default "plmc ours"; run one per call to run the two side by side), MAX_ITER
# (ours, default 5000), DATA (default ../shared/data/dca). Every run is `nice -n 5`; each
# writes OUTDIR/DATASET.PROGRAM.{cpl,log,time}; the agreement line is printed (and written to
# OUTDIR/DATASET.agreement.json) once both couplings files of a data set exist.
set -euo pipefail
plmc=$1; ours=$2; out=$3
threads=${THREADS:-2}; datasets=${DATASETS:-PF00014 DHFR}; programs=${PROGRAMS:-plmc ours}
max_iter=${MAX_ITER:-5000}; data=${DATA:-../shared/data/dca}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
for ds in $datasets; do
  case $ds in
    PF00014) ali=$out/PF00014.fasta; focus=-
      [ -s "$ali" ] || zcat "$data/PF00014_mgap6.fasta.gz" > "$ali" ;;
    DHFR) ali=$data/DHFR.a2m; focus=DYR_ECOLI ;;
    *) echo "plmc-converge: unknown data set $ds (expected PF00014 or DHFR)" >&2; exit 2 ;;
  esac
  focus_flag=(); [ "$focus" != "-" ] && focus_flag=(-f "$focus")
  for prog in $programs; do
    echo "$ds $prog: start $(date -u +%H:%M:%S), $(uptime)"
    case $prog in
      plmc)
        env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OMP_NUM_THREADS="$threads" \
          nice -n 5 /usr/bin/time -f "wall %e s, CPU %U + %S s, peak RSS %M KB" \
          -o "$out/$ds.plmc.time" "$plmc" -c "$out/$ds.plmc.cpl" -le 16 -lh 0.01 -m 0 -g \
          "${focus_flag[@]}" "$ali" > /dev/null 2> "$out/$ds.plmc.log"
        last=$(tr '\r' '\n' < "$out/$ds.plmc.log" | awk '$1 ~ /^[0-9]+$/ && NF >= 4 {it=$1; fx=$4} END {print it, fx}')
        echo "$ds plmc: $(cat "$out/$ds.plmc.time"); last iteration and fx: $last" ;;
      ours)
        RAYON_NUM_THREADS=$threads nice -n 5 /usr/bin/time \
          -f "wall %e s, CPU %U + %S s, peak RSS %M KB" -o "$out/$ds.ours.time" \
          "$ours" "$ali" "$focus" "$out/$ds.ours.cpl" "$max_iter" \
          > "$out/$ds.ours.json" 2> "$out/$ds.ours.log"
        echo "$ds ours: $(cat "$out/$ds.ours.time"); $(cat "$out/$ds.ours.json")" ;;
      *) echo "plmc-converge: unknown program $prog (expected plmc or ours)" >&2; exit 2 ;;
    esac
  done
  if [ -s "$out/$ds.plmc.cpl" ] && [ -s "$out/$ds.ours.cpl" ]; then
    python3 "$here/plmc-agreement.py" "$out/$ds.ours.cpl" "$out/$ds.plmc.cpl" \
      | tee "$out/$ds.agreement.json"
  fi
done
