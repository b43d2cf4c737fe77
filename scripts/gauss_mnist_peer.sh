#!/usr/bin/env bash
# Gaussian-Bernoulli RBMs on grayscale MNIST, ours against learnergy's VarianceGaussianRBM
# (learned variances; issue 34): the same standardized rows (scripts/gauss_mnist.py prep),
# hidden units, epochs, batch, CD-1 and learning rate; both models' exact average test
# log-likelihood computed by the same code (gauss_mnist.py exact: 2^H hidden states
# enumerated, the Gaussian layer integrated in closed form), and the time per epoch of each.
#
# usage: scripts/gauss_mnist_peer.sh BOLTZKIT PEER_PYTHON [HIDDEN EPOCHS LR N_TRAIN]
#   BOLTZKIT     our binary (target/release/boltzkit)
#   PEER_PYTHON  a python with learnergy (pip install learnergy: it pulls torch) and numpy
# env: MNIST (default ../shared/data/mnist), WORK (default a new temporary folder),
#      THREADS (default 2, both programs)
set -euo pipefail
bk=${1:?usage: gauss_mnist_peer.sh BOLTZKIT PEER_PYTHON [HIDDEN EPOCHS LR N_TRAIN]}
py=${2:?usage: gauss_mnist_peer.sh BOLTZKIT PEER_PYTHON [HIDDEN EPOCHS LR N_TRAIN]}
hidden=${3:-20}
epochs=${4:-3}
lr=${5:-0.001}
n_train=${6:-10000}
batch=100
threads=${THREADS:-2}
here=$(cd "$(dirname "$0")" && pwd)
mnist=${MNIST:-$here/../../shared/data/mnist}
work=${WORK:-$(mktemp -d)}
mkdir -p "$work"
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(uptime)"
echo "# hidden $hidden, epochs $epochs, rate $lr, batch $batch, CD-1, $n_train training rows"

[ -f "$work/train.npy" ] ||
  "$py" "$here/gauss_mnist.py" prep --mnist "$mnist" --out "$work" --n-train "$n_train"

"$py" "$here/gauss_mnist.py" peer --data "$work/train.npy" --out "$work/peer.npz" \
  --hidden "$hidden" --epochs "$epochs" --lr "$lr" --batch "$batch" --threads "$threads"

# our training time: the fit's own learn_s (the loop, without reading the data or the final
# exact log-likelihood of the training rows that rbm fit reports; --no-standardize: prep
# already standardized the rows both models see)
"$bk" rbm fit --data "$work/train.npy" --visible-units gaussian --hidden-units bernoulli \
  --hidden "$hidden" --epochs "$epochs" --lr "$lr" --batch-size "$batch" --algo cd-1 \
  --threads "$threads" --seed 1 -o "$work/ours.safetensors" --quiet --json --no-standardize \
  >"$work/ours_fit.json" ||
  echo "# our fit stopped early (the error above); its last good model is evaluated below"
"$py" -c "import json, sys; r = json.load(open(sys.argv[1])); \
print(json.dumps({'ours_train_s': r['learn_s'], 'epochs': r['epochs'], \
'per_epoch_s': r['learn_s'] / r['epochs'], 'train_avg_log_likelihood': r['avg_log_likelihood']}))" \
  "$work/ours_fit.json"

"$py" "$here/gauss_mnist.py" ours --model "$work/ours.safetensors" --out "$work/ours.npz"
for m in peer ours; do
  "$py" "$here/gauss_mnist.py" exact --params "$work/$m.npz" --data "$work/test.npy"
done
# our own exact evaluator on our model, as a check of the shared one
"$bk" rbm eval --model "$work/ours.safetensors" --data "$work/test.npy" --method exact \
  --threads "$threads"
