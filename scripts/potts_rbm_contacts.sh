#!/usr/bin/env bash
# Contacts from a Potts-visible RBM (issue 34): fit an RBM with categorical visible units on the
# Kunitz family (PF00014, 13,600 x 53), take its effective couplings (`rbm couplings`, PGM's
# definition) and rank them against the structure with `potts contacts`; prints the precision
# at L/5, L/2, L and 2L.
#
#   bash scripts/potts_rbm_contacts.sh [BOLTZKIT] [OUT]
#
# Settings by environment: HIDDEN_UNITS (drelu), HIDDEN (100), EPOCHS (30), LR (0.01),
# L1SQ (0.25, PGM's L1²), BINS (10, PGM's), THREADS (2), DATA (the mirror's PF00014).
set -euo pipefail
boltzkit=${1:-target/release/boltzkit}
out=${2:-$(mktemp -d)}
here=$(cd "$(dirname "$0")/.." && pwd)
dca=${DCA:-$here/../shared/data/dca}
[ -f "$dca/PF00014_struct.dat" ] || dca=/work/shared/data/dca
data=${DATA:-$dca/PF00014_mgap6.fasta.gz}
mkdir -p "$out"

uptime
"$boltzkit" rbm fit --data "$data" --visible-units categorical \
  --hidden-units "${HIDDEN_UNITS:-drelu}" --hidden "${HIDDEN:-100}" --algo pcd-1 \
  --batch-size 100 --l1-squared "${L1SQ:-0.25}" --reweight 0.8 --epochs "${EPOCHS:-30}" \
  --lr "${LR:-0.01}" --momentum 0.9 --threads "${THREADS:-2}" --seed 1 -q --json \
  -o "$out/rbm.safetensors"
"$boltzkit" rbm couplings --model "$out/rbm.safetensors" --data "$data" --reweight 0.8 \
  --bins "${BINS:-10}" --threads "${THREADS:-2}" -q --json -o "$out/rbm.couplings"
"$boltzkit" potts contacts --couplings "$out/rbm.couplings" \
  --distances "$dca/PF00014_struct.dat" --json -q
