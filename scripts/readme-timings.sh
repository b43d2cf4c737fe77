#!/usr/bin/env bash
# Times the README tour's commands as written, for the table "Run time and memory of the long
# commands": each PATTERN picks the one command of the tour's code block (README.md, "A tour of
# the commands"; continuation lines joined, comments dropped) that contains it as a fixed string,
# and runs it in a scratch folder under `/usr/bin/time` with `boltzkit` replaced by the binary.
# One Markdown row per command on stdout: the command run, wall time, CPU seconds (user +
# system), peak memory (max RSS), the load average (1 min) before and after, the date and the
# machine; the command's own output goes to DIR/LOGNAME.log.
#
#   bash scripts/readme-timings.sh [-b BIN] [-d DIR] [--] PATTERN[@FLAG=VALUE,...] ...
#
# `--` goes before a PATTERN that starts with `-`. PATTERN@--flag=value,... runs a shortened
# form: each flag's value replaced (or the flag added), and the row says "shortened". Commands
# run in the order given, in one DIR (default target/readme-timings), so a command reading an
# earlier one's output runs after it (the tour's `gen` lines first). BIN defaults to
# target/release/boltzkit (`cargo build --release -p boltzkit-cli`). Data sets named by --data/--valid/--test NAME[:split] are fetched into the
# cache before the clock starts: BOLTZKIT_DATA (default target/data-cache), from the mirror
# BOLTZKIT_DATA_MIRROR (default ../shared/data beside the repository) when it is there.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BIN=$ROOT/target/release/boltzkit
DIR=$ROOT/target/readme-timings
while getopts "b:d:" opt; do
  case $opt in
    b) BIN=$(realpath "$OPTARG") ;;
    d) DIR=$OPTARG ;;
    *) echo "usage: $0 [-b BIN] [-d DIR] PATTERN[@FLAG=VALUE,...] ..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "$0: no PATTERN given (a fixed string of one tour command)" >&2; exit 2; }
[ -x "$BIN" ] || { echo "$0: no binary $BIN (cargo build --release -p boltzkit-cli)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "$0: /usr/bin/time is missing (apt-get install time)" >&2; exit 2; }
if [ -z "${BOLTZKIT_DATA_MIRROR:-}" ] && [ -d ../shared/data ]; then
  export BOLTZKIT_DATA_MIRROR=$(cd ../shared/data && pwd)
fi
export BOLTZKIT_DATA=${BOLTZKIT_DATA:-$ROOT/target/data-cache}
mkdir -p "$DIR"

# the tour's commands, one a line, `boltzkit` removed
mapfile -t TOUR < <(awk '
  /^## A tour of the commands/ { tour = 1 }
  tour && /^```sh$/ { inblock = 1; next }
  inblock && /^```$/ { exit }
  inblock {
    line = $0
    if (line ~ /\\$/) { pending = pending substr(line, 1, length(line) - 1); next }
    line = pending line; pending = ""
    sub(/ #.*/, "", line); sub(/^#.*/, "", line)
    gsub(/  +/, " ", line); sub(/^ +/, "", line); sub(/ +$/, "", line)
    if (line == "") next
    if (line !~ /^boltzkit /) { print "not a command: " line > "/dev/stderr"; exit 1 }
    print substr(line, 10)
  }' README.md)
[ ${#TOUR[@]} -gt 0 ] || { echo "$0: no tour code block in README.md" >&2; exit 1; }

CPU_MODEL=$(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //; s/([^)]*)//g; s/  */ /g')
AVX512=$(grep -qm1 avx512f /proc/cpuinfo && echo "AVX-512" || echo "no AVX-512")
MACHINE="$CPU_MODEL, $AVX512, nproc $(nproc)"

human() { # seconds -> "0.25 s", "12.5 s" or "3 min 29 s"
  awk -v s="$1" 'BEGIN {
    if (s < 10) printf "%.2f s", s; else if (s < 60) printf "%.1f s", s
    else printf "%d min %d s", s / 60, s % 60 }'
}
load1() { cut -d' ' -f1 /proc/loadavg; }

echo "| command | wall | CPU | peak memory | load before-after | date (UTC), machine |"
echo "|---|---|---|---|---|---|"
for arg in "$@"; do
  pattern=${arg%%@*}
  changes=""
  [ "$pattern" != "$arg" ] && changes=${arg#*@}
  matches=()
  for cmd in "${TOUR[@]}"; do
    [[ $cmd == *"$pattern"* ]] && matches+=("$cmd")
  done
  if [ ${#matches[@]} -ne 1 ]; then
    echo "$0: '$pattern' matches ${#matches[@]} tour commands, expected one" >&2
    exit 2
  fi
  read -r -a words <<<"${matches[0]}"
  note=""
  if [ -n "$changes" ]; then
    IFS=, read -r -a sets <<<"$changes"
    for set in "${sets[@]}"; do
      flag=${set%%=*} value=${set#*=} found=0
      for i in "${!words[@]}"; do
        if [ "${words[$i]}" = "$flag" ]; then words[i + 1]=$value found=1; fi
      done
      [ $found = 1 ] || words+=("$flag" "$value")
    done
    note=" (shortened)"
  fi
  # data sets by name: into the cache before the clock starts
  for i in "${!words[@]}"; do
    case ${words[$i]} in
      --data | --valid | --test)
        spec=${words[i + 1]}
        [ -e "$DIR/$spec" ] || (cd "$DIR" && "$BIN" data fetch -q "${spec%%:*}" >/dev/null)
        ;;
    esac
  done
  log=$(printf '%s' "${words[*]}" | tr -c 'A-Za-z0-9_.-' '_' | cut -c1-80).log
  before=$(load1)
  when=$(date -u '+%Y-%m-%d %H:%M')
  (cd "$DIR" && /usr/bin/time -o "$DIR/time.txt" -f '%e %U %S %M' "$BIN" "${words[@]}" >"$DIR/$log" 2>&1) || {
    echo "$0: failed (see $DIR/$log): boltzkit ${words[*]}" >&2
    exit 1
  }
  after=$(load1)
  read -r wall user sys rss_kb <"$DIR/time.txt"
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN { printf "%.2f", u + s }')
  mem=$(awk -v k="$rss_kb" 'BEGIN { if (k >= 1048576) printf "%.1f GiB", k / 1048576; else printf "%d MB", k / 1024 + 0.5 }')
  echo "| \`boltzkit ${words[*]}\`$note | $(human "$wall") | $(human "$cpu") | $mem | $before-$after | $when, $MACHINE |"
done
