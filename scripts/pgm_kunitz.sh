#!/usr/bin/env bash
# The PGM Kunitz comparison (issue 34): PGM (scripts/pgm_kunitz.py, its notebook's settings)
# and boltzkit on the same rows and weights, the same epochs, 2 threads each; prints both JSON
# lines and the ratios (time per epoch, CPU per epoch) and the log-likelihood per site.
#
#   bash scripts/pgm_kunitz.sh EPOCHS [PYTHON] [BOLTZKIT] [OUT]
#
# PYTHON has PGM's needs (numpy, numba, scipy, pandas, matplotlib from the package registry);
# BOLTZKIT defaults to target/release/boltzkit. Both estimate ln Z by AIS (PGM: its notebook's
# 20,000 linear betas and 10 chains, the mean of the chains' log-weights; boltzkit: the same
# betas, 100 chains, the log of the mean weight), and boltzkit's `rbm eval` also scores PGM's
# trained model (exported as pgm.safetensors), so both models meet one evaluator.
# Ours trains with PGM's optimizer settings (ADAM, lr 0.005, decay after half the epochs,
# gradients saturated at 1, zero-sum gauge); OPTIM="--lr 0.01 --momentum 0.9" gives SGD.
set -euo pipefail
epochs=${1:?usage: pgm_kunitz.sh EPOCHS [PYTHON] [BOLTZKIT] [OUT]}
python=${2:-python3}
boltzkit=${3:-target/release/boltzkit}
out=${4:-$(mktemp -d)}
here=$(cd "$(dirname "$0")/.." && pwd)
pgm=${PGM:-$here/../shared/peers/PGM}
[ -d "$pgm/source" ] || pgm=/work/shared/peers/PGM

uptime
# PGM's run is kept in OUT/pgm.json (with its rows, weights and model): a second call with the
# same OUT reruns boltzkit's side only (delete OUT/pgm.json to rerun PGM)
if [ ! -s "$out/pgm.json" ]; then
  "$python" "$here/scripts/pgm_kunitz.py" --pgm "$pgm" --epochs "$epochs" --out "$out" \
    >"$out/pgm.json.tmp"
  mv "$out/pgm.json.tmp" "$out/pgm.json"
fi
# PGM prints its AIS progress on stdout: the JSON is the last line
pgm_json=$(tail -n 1 "$out/pgm.json")
echo "$pgm_json"

start=$(date +%s.%N)
/usr/bin/time -f '%U %S' -o "$out/cpu.txt" "$boltzkit" rbm fit --data "$out/codes.csv" \
  --visible-units categorical:21 --hidden-units drelu --hidden 100 --algo pcd-1 \
  --batch-size 100 --l1-squared 0.25 --weights "$out/weights.txt" --epochs "$epochs" \
  ${OPTIM:---optimizer adam --lr 0.005 --decay-after 0.5 --saturate 1 --zero-sum-gauge} \
  --threads 2 --seed 1 -q --json \
  -o "$out/ours.safetensors" >"$out/fit.json"
wall=$(echo "$(date +%s.%N) - $start" | bc)
cpu=$(awk '{print $1 + $2}' "$out/cpu.txt")
"$boltzkit" rbm eval --model "$out/ours.safetensors" --data "$out/codes.csv" \
  --weights "$out/weights.txt" --method ais --ais-steps 20000 --ais-chains 100 --threads 2 \
  --seed 1 -q --json >"$out/eval.json"
cat "$out/fit.json" "$out/eval.json"
# PGM's model by our evaluator
"$boltzkit" rbm eval --model "$out/pgm.safetensors" --data "$out/codes.csv" \
  --weights "$out/weights.txt" --method ais --ais-steps 20000 --ais-chains 100 --threads 2 \
  --seed 1 -q --json >"$out/eval_pgm.json"
cat "$out/eval_pgm.json"

"$python" - "$pgm_json" "$out/fit.json" "$out/eval.json" "$wall" "$cpu" "$epochs" "$out/eval_pgm.json" <<'EOF'
import json, sys
pgm = json.loads(sys.argv[1])
fit, ev = (json.load(open(p)) for p in sys.argv[2:4])
wall, cpu, epochs = float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
ev_pgm = json.load(open(sys.argv[7]))
ours = {"s_per_epoch": fit["learn_s"] / epochs, "cpu_s_per_epoch": cpu / epochs,
        "process_wall_s": wall, "log_z": ev["log_z"], "ll_per_site": ev["avg_log_likelihood_per_unit"]}
print(json.dumps({"boltzkit": ours}))
print(f"time per epoch: PGM / boltzkit = {pgm['s_per_epoch'] / ours['s_per_epoch']:.1f}x "
      f"(CPU per epoch {pgm['cpu_s_per_epoch'] / ours['cpu_s_per_epoch']:.1f}x)")
print(f"weighted log-likelihood per site: boltzkit {ours['ll_per_site']:.4f}, "
      f"PGM {pgm['ll_per_site']:.4f} (PGM's AIS); by boltzkit's AIS: boltzkit "
      f"{ours['ll_per_site']:.4f}, PGM {ev_pgm['avg_log_likelihood_per_unit']:.4f}")
EOF
