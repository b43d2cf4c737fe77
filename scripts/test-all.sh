#!/usr/bin/env bash
# The one test command (README, .ci/run): on a fresh machine it creates its own virtual
# environment (.venv, ignored by git), installs the Python tools, builds the Python package as
# an abi3 wheel, installs it, runs every check of both languages, then installs the same wheel
# into a fresh virtual environment with no cargo on PATH and runs the README's Python quick
# start there. Exits non-zero on the first failure; prints the seconds of every stage at the end.
#
#   bash scripts/test-all.sh
#
# Needs cargo (with rustfmt and clippy) and python3 >= 3.9 with venv; the package index
# must be reachable the first time (pip). PYTHON=/path/to/python3 picks the interpreter.
# Data sets by name come from the mirror ../shared/data (when it is there) into a cache under
# target/, never from the network (BOLTZKIT_DATA_MIRROR, BOLTZKIT_DATA, BOLTZKIT_OFFLINE
# override).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
if [ -d ../shared/data ]; then
  export BOLTZKIT_DATA_MIRROR=${BOLTZKIT_DATA_MIRROR:-$(cd ../shared/data && pwd)}
fi
export BOLTZKIT_DATA=${BOLTZKIT_DATA:-$PWD/target/data-cache}
export BOLTZKIT_OFFLINE=${BOLTZKIT_OFFLINE:-1}

TIMES=()
TIMES_FILE=$(mktemp)
trap 'rm -f "$TIMES_FILE"' EXIT
# cpu_now: CPU seconds (user + system) of this shell's finished children so far into CPU_NOW,
# from `times` run in this shell (in a subshell it would count none)
cpu_now() {
  times >"$TIMES_FILE"
  CPU_NOW=$(tail -n 1 "$TIMES_FILE" | awk '{ s = 0; for (i = 1; i <= 2; i++) {
    split($i, a, "m"); s += a[1] * 60 + a[2] } printf "%d", s }')
}
# stage NAME COMMAND...: runs COMMAND under a heading and records its wall and CPU seconds
stage() {
  local name=$1
  shift
  echo "== $name"
  local t0=$SECONDS c0
  cpu_now
  c0=$CPU_NOW
  "$@"
  cpu_now
  TIMES+=("$(printf '%6d s wall %6d s CPU  %s' $((SECONDS - t0)) $((CPU_NOW - c0)) "$name")")
}

PYTHON=${PYTHON:-python3}
VENV=.venv
if [ ! -x "$VENV/bin/python" ]; then
  stage "create $VENV with $PYTHON" "$PYTHON" -m venv "$VENV"
fi
stage "pip install (maturin, numpy, pytest, scikit-learn, pandas, matplotlib, ruff, distributed)" \
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
  "maturin>=1.5,<2" numpy pytest scikit-learn pandas matplotlib ruff distributed

PY_CODE=(crates/boltzkit-py examples/python)

stage "cargo fmt --check" cargo fmt --all -- --check

ruff_checks() {
  "$VENV/bin/ruff" check "${PY_CODE[@]}"
  "$VENV/bin/ruff" format --check "${PY_CODE[@]}"
}
stage "ruff check, ruff format --check" ruff_checks

stage "cargo clippy --workspace --all-targets -- -D warnings" \
  cargo clippy --workspace --all-targets -- -D warnings

stage "cargo test --workspace" cargo test --workspace

# the wheel is the one release build of the package: pytest runs against it, and so does the
# quick start in a fresh environment below
build_wheel() {
  rm -f target/wheels/boltzkit-*.whl
  "$VENV/bin/maturin" build --release --strip --quiet -m crates/boltzkit-py/Cargo.toml \
    --interpreter "$VENV/bin/python" --out target/wheels
}
stage "maturin build --release (the abi3 wheel)" build_wheel
WHEEL=$(ls target/wheels/boltzkit-*.whl)
echo "wheel: $WHEEL ($(du -k "$WHEEL" | cut -f1) KiB)"
stage "pip install the wheel into $VENV" "$VENV/bin/python" -m pip install --quiet \
  --disable-pip-version-check --force-reinstall --no-deps "$WHEEL"

# the CLI round-trip tests use the binary `cargo test` just built (target/debug/boltzkit)
stage "pytest" "$VENV/bin/python" -m pytest crates/boltzkit-py/tests -q -p no:cacheprovider

stage "the wheel without Rust: a fresh venv, no cargo on PATH, the README's Python quick start" \
  bash scripts/wheel-quickstart.sh "$WHEEL"

echo "== seconds by stage (load now: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null))"
printf '%s\n' "${TIMES[@]}"
echo "== all checks passed"
