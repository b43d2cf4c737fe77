"""Summarize the epoch lines of bench/rbm_speed/run.sh (modes epoch, scaling, pairs).

Reads "round R NAME threads=T load=L ... min_s" lines on stdin and prints, per tool and
thread count, the minimum and median epoch; for each tool measured on 2 and 1 threads, the
2-thread / 1-thread ratio (by minima, by medians, and the median of the per-round ratios,
which pair rounds by number: meaningful for the scaling mode, not across separate runs);
for every tool, the median of its per-round ratios to the first tool on the same thread
count (paired: the rounds are seconds to minutes apart); and each tool's speed-up over the
PyTorch peer ("torch") when it ran.

usage: bash bench/rbm_speed/run.sh scaling 8 BIN_A BIN_B torch | tee runs.txt
       python3 bench/rbm_speed/summary.py < runs.txt
"""

import re
import statistics
import sys
from collections import defaultdict

LINE = re.compile(
    r"round (\d+) (\S+) threads=(\d+) load=([0-9.]+).*?\"min(?:_s)?\": ?([0-9.]+)"
)


def main() -> None:
    runs: dict[tuple[str, str], dict[int, float]] = defaultdict(dict)
    order: list[str] = []
    loads = []
    for line in sys.stdin:
        m = LINE.search(line)
        if not m:
            continue
        rnd, tool, threads, load, epoch = m.groups()
        runs[(tool, threads)][int(rnd)] = float(epoch)
        loads.append(float(load))
        if tool not in order:
            order.append(tool)
    if not runs:
        sys.exit("no epoch lines on stdin")
    print(f"load average {min(loads):.2f}-{max(loads):.2f}")
    for (tool, threads), v in sorted(runs.items()):
        x = list(v.values())
        print(
            f"{tool} threads={threads}: min {min(x):.3f} s, median "
            f"{statistics.median(x):.3f} s over {len(x)} rounds"
        )

    def ratios(a: dict[int, float], b: dict[int, float]) -> list[float]:
        return [a[r] / b[r] for r in b if r in a]

    for tool in order:
        one, two = runs.get((tool, "1")), runs.get((tool, "2"))
        if one and two:
            per_round = ratios(one, two)
            print(
                f"{tool}: 2 threads {min(one.values()) / min(two.values()):.2f}x one by "
                f"minima, {statistics.median(one.values()) / statistics.median(two.values()):.2f}x "
                f"by medians, per-round median {statistics.median(per_round):.2f}x"
            )
    first = order[0]
    for tool in order[1:]:
        for threads in ("2", "1"):
            a, b = runs.get((tool, threads)), runs.get((first, threads))
            if a and b and tool != "torch":
                print(
                    f"{tool} / {first}, threads={threads}: paired median ratio "
                    f"{statistics.median(ratios(a, b)):.3f}"
                )
    for tool in order:
        for threads in ("2", "1"):
            mine, peer = runs.get((tool, threads)), runs.get(("torch", threads))
            if tool != "torch" and mine and peer:
                print(
                    f"{tool} threads={threads}: {min(peer.values()) / min(mine.values()):.2f}x "
                    f"PyTorch by minima, per-round median "
                    f"{statistics.median(ratios(peer, mine)):.2f}x"
                )


if __name__ == "__main__":
    main()
