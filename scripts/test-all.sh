#!/usr/bin/env bash
# The one test command (README, .ci/run): on a fresh machine it creates its own virtual
# environment (.venv, ignored by git), installs the Python tools, builds the Python package,
# and runs every check of both languages. Exits non-zero on the first failure.
#
#   bash scripts/test-all.sh
#
# Needs cargo (with rustfmt and clippy) and python3 >= 3.9 with venv; the package index
# must be reachable the first time (pip). PYTHON=/path/to/python3 picks the interpreter.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

PYTHON=${PYTHON:-python3}
VENV=.venv
if [ ! -x "$VENV/bin/python" ]; then
  echo "== creating $VENV with $PYTHON"
  "$PYTHON" -m venv "$VENV"
fi
echo "== pip install (maturin, numpy, pytest, scikit-learn, matplotlib, ruff)"
"$VENV/bin/python" -m pip install --quiet --disable-pip-version-check \
  "maturin>=1.5,<2" numpy pytest scikit-learn matplotlib ruff

PY_CODE=(crates/boltzkit-py examples/python)

echo "== cargo fmt --check"
cargo fmt --all -- --check

echo "== ruff check, ruff format --check"
"$VENV/bin/ruff" check "${PY_CODE[@]}"
"$VENV/bin/ruff" format --check "${PY_CODE[@]}"

echo "== cargo clippy --workspace --all-targets -- -D warnings"
cargo clippy --workspace --all-targets -- -D warnings

echo "== cargo test --workspace"
cargo test --workspace

echo "== maturin develop --release (the Python package into $VENV)"
VIRTUAL_ENV="$PWD/$VENV" "$VENV/bin/maturin" develop --release --quiet \
  -m crates/boltzkit-py/Cargo.toml

echo "== pytest"
# the CLI round-trip tests use the binary `cargo test` just built (target/debug/boltzkit)
"$VENV/bin/python" -m pytest crates/boltzkit-py/tests -q -p no:cacheprovider
echo "== all checks passed"
