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
# betas, 100 chains, the log of the mean weight).
set -euo pipefail
epochs=${1:?usage: pgm_kunitz.sh EPOCHS [PYTHON] [BOLTZKIT] [OUT]}
python=${2:-python3}
boltzkit=${3:-target/release/boltzkit}
out=${4:-$(mktemp -d)}
here=$(cd "$(dirname "$0")/.." && pwd)
pgm=${PGM:-$here/../shared/peers/PGM}
[ -d "$pgm/source" ] || pgm=/work/shared/peers/PGM

uptime
pgm_json=$("$python" "$here/scripts/pgm_kunitz.py" --pgm "$pgm" --epochs "$epochs" --out "$out")
echo "$pgm_json"

start=$(date +%s.%N)
/usr/bin/time -f '%U %S' -o "$out/cpu.txt" "$boltzkit" rbm fit --data "$out/codes.csv" \
  --visible-units categorical:21 --hidden-units drelu --hidden 100 --algo pcd-1 \
  --batch-size 100 --l1-squared 0.25 --weights "$out/weights.txt" --epochs "$epochs" \
  --lr "${LR:-0.01}" --momentum "${MOMENTUM:-0.9}" --threads 2 --seed 1 -q --json \
  -o "$out/ours.safetensors" >"$out/fit.json"
wall=$(echo "$(date +%s.%N) - $start" | bc)
cpu=$(awk '{print $1 + $2}' "$out/cpu.txt")
"$boltzkit" rbm eval --model "$out/ours.safetensors" --data "$out/codes.csv" \
  --weights "$out/weights.txt" --method ais --ais-steps 20000 --ais-chains 100 --threads 2 \
  --seed 1 -q --json >"$out/eval.json"
cat "$out/fit.json" "$out/eval.json"

"$python" - "$pgm_json" "$out/fit.json" "$out/eval.json" "$wall" "$cpu" "$epochs" <<'EOF'
import json, sys
pgm = json.loads(sys.argv[1])
fit, ev = (json.load(open(p)) for p in sys.argv[2:4])
wall, cpu, epochs = float(sys.argv[4]), float(sys.argv[5]), int(sys.argv[6])
ours = {"s_per_epoch": fit["learn_s"] / epochs, "cpu_s_per_epoch": cpu / epochs,
        "process_wall_s": wall, "log_z": ev["log_z"], "ll_per_site": ev["avg_log_likelihood_per_unit"]}
print(json.dumps({"boltzkit": ours}))
print(f"time per epoch: PGM / boltzkit = {pgm['s_per_epoch'] / ours['s_per_epoch']:.1f}x "
      f"(CPU per epoch {pgm['cpu_s_per_epoch'] / ours['cpu_s_per_epoch']:.1f}x)")
print(f"weighted log-likelihood per site: boltzkit {ours['ll_per_site']:.4f}, "
      f"PGM {pgm['ll_per_site']:.4f}")
EOF
