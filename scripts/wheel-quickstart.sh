#!/usr/bin/env bash
# Installs a boltzkit wheel into a fresh virtual environment and runs the README's Python quick
# start there from a scratch folder, with no cargo or rustc on PATH: the wheel needs no Rust.
#
#   bash scripts/wheel-quickstart.sh target/wheels/boltzkit-*.whl
#
# numpy comes from the package index (pip); the quick start's data set from the registry's
# mirror (BOLTZKIT_DATA_MIRROR, as scripts/test-all.sh sets it) or the network.
set -euo pipefail
WHEEL=$(realpath "$1")
cd "$(dirname "$0")/.."
ROOT=$PWD
PYTHON=${PYTHON:-python3}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$PYTHON" -m venv "$tmp/venv"
"$tmp/venv/bin/python" -m pip install --quiet --disable-pip-version-check "$WHEEL"

# the block under "### Python quick start" in the README, as written
"$tmp/venv/bin/python" - "$ROOT/README.md" >"$tmp/quickstart.py" <<'PY'
import re
import sys

section = open(sys.argv[1], encoding="utf-8").read().split("### Python quick start", 1)[1]
print(re.search(r"```python\n(.*?)```", section, re.DOTALL).group(1))
PY

# PATH without any folder that holds cargo or rustc
NO_RUST_PATH=""
IFS=: read -r -a dirs <<<"$PATH"
for d in "${dirs[@]}"; do
  if [ -n "$d" ] && [ ! -e "$d/cargo" ] && [ ! -e "$d/rustc" ]; then
    NO_RUST_PATH="${NO_RUST_PATH:+$NO_RUST_PATH:}$d"
  fi
done
if PATH="$NO_RUST_PATH" command -v cargo >/dev/null 2>&1; then
  echo "cargo is still on PATH: $NO_RUST_PATH" >&2
  exit 1
fi

cd "$tmp"
PATH="$NO_RUST_PATH" "$tmp/venv/bin/python" -c \
  "import boltzkit, sys; assert boltzkit.__file__.startswith(sys.prefix), boltzkit.__file__"
PATH="$NO_RUST_PATH" "$tmp/venv/bin/python" quickstart.py
echo "the wheel's quick start ran in a fresh venv without cargo on PATH"
