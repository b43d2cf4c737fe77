#!/usr/bin/env bash
# A Gaussian-Bernoulli RBM on grayscale MNIST with many hidden units (issue 34): train on the
# standardized rows of scripts/gauss_mnist.py prep, the RAISE/AIS bracket of the average test
# log-likelihood, samples of block Gibbs chains (the sampled rows, and each row's visible
# conditional mean E[v | h] at its next hidden draw) and the weight filters as PNGs.
#
# usage: scripts/gauss_mnist_example.sh BOLTZKIT PYTHON OUT [HIDDEN EPOCHS LR N_TRAIN N_TEST]
#   BOLTZKIT  our binary (target/release/boltzkit)
#   PYTHON    a python with numpy and matplotlib (the worktree's .venv has both)
#   OUT       folder for the data, model, report and PNGs
# env: MNIST (default ../shared/data/mnist), THREADS (default 2), GIBBS (Gibbs steps per
#      sample, default 1000), AIS_STEPS (default 14500), RAISE_VECTORS (default 100),
#      ALGO (default cd-1), MOMENTUM (default 0), CLIP (gradient-norm clip, default 0: off),
#      MODEL (an already trained model file: skip the fit), SD_FLOOR (prep's floor of each
#      pixel's standard deviation, default 1.0: every sd of [0, 1] pixels is below 1, so the
#      rows are only centered; a floor of 0.05, standardizing, let CD-1 collapse onto the
#      rarely lit border pixels twice: every hidden unit one feature, examples/gaussian_mnist),
#      SAMPLER (rbm sample's --sampler, default gibbs; gibbs-langevin needs a binary of
#      6fbb9b7 or later)
set -euo pipefail
usage="usage: gauss_mnist_example.sh BOLTZKIT PYTHON OUT [HIDDEN EPOCHS LR N_TRAIN N_TEST]"
bk=${1:?$usage}
py=${2:?$usage}
out=${3:?$usage}
hidden=${4:-500}
epochs=${5:-10}
lr=${6:-0.02}
n_train=${7:-20000}
n_test=${8:-1000}
threads=${THREADS:-2}
gibbs=${GIBBS:-1000}
ais_steps=${AIS_STEPS:-14500}
algo=${ALGO:-cd-1}
momentum=${MOMENTUM:-0}
clip=${CLIP:-0}
raise_vectors=${RAISE_VECTORS:-100}
sd_floor=${SD_FLOOR:-1.0}
sampler=${SAMPLER:-gibbs}
here=$(cd "$(dirname "$0")" && pwd)
mnist=${MNIST:-$here/../../shared/data/mnist}
mkdir -p "$out"
echo "# $(date -u +%FT%TZ) $(nproc) cores, $(uptime)"
echo "# hidden $hidden, epochs $epochs, rate $lr, momentum $momentum, clip $clip, batch 100, $algo, $n_train training rows, sd floor $sd_floor, sampler $sampler"

[ -f "$out/train.npy" ] ||
  "$py" "$here/gauss_mnist.py" prep --mnist "$mnist" --out "$out" \
    --n-train "$n_train" --n-test "$n_test" --sd-floor "$sd_floor"
# prep scaled the rows (its scaling.npz turns samples back into pixels): --no-standardize
if [ -n "${MODEL:-}" ]; then
  cp "$MODEL" "$out/model.safetensors"
else
  "$bk" rbm fit --data "$out/train.npy" --visible-units gaussian --hidden-units bernoulli \
    --hidden "$hidden" --epochs "$epochs" --lr "$lr" --momentum "$momentum" --batch-size 100 \
    --algo "$algo" --clip-norm "$clip" --no-standardize --threads "$threads" --seed 1 \
    -o "$out/model.safetensors" --quiet --json
fi
"$bk" rbm eval --model "$out/model.safetensors" --data "$out/test.npy" --method bracket \
  --ais-steps "$ais_steps" --raise-vectors "$raise_vectors" --threads "$threads" --seed 2 --quiet --json
sampler_flags=()
[ "$sampler" = gibbs ] || sampler_flags=(--sampler "$sampler")
"$bk" rbm sample --model "$out/model.safetensors" -n 100 --gibbs-steps "$gibbs" \
  "${sampler_flags[@]}" -o "$out/samples.npy" --threads "$threads" --seed 3 --quiet --json
"$py" "$here/gauss_mnist.py" ours --model "$out/model.safetensors" --out "$out/model.npz"
"$py" "$here/gauss_mnist.py" png --input "$out/samples.npy" --scaling "$out/scaling.npz" \
  --out "$out/samples.png"
"$py" "$here/gauss_mnist.py" png --input "$out/samples.npy" --scaling "$out/scaling.npz" \
  --means "$out/model.npz" --out "$out/means.png"
"$py" "$here/gauss_mnist.py" png --input "$out/model.npz" --filters --out "$out/filters.png"
