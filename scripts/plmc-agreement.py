#!/usr/bin/env python3
"""Agreement of two couplings files (plmc's format, `i A_i j A_j 0 score`, one pair a line).

Issue 36, must-show (b): the scores of our fit against plmc's on the same alignment and
settings, both run to convergence, should differ by at most 1e-3 of the largest score, with
the same top-L pairs (L = the number of sites). Prints one JSON object: the number of pairs,
L, the largest reference score, the max abs difference and its ratio to the largest score,
the pair where it is largest, the top-L overlap (pairs in both top-L sets), and whether both
checks pass.

    python3 scripts/plmc-agreement.py OURS.cpl PLMC.cpl [--tol 1e-3]
"""

import argparse
import json
import sys


def die(msg):
    """One line on stderr, exit status 2."""
    print(f"plmc-agreement: {msg}", file=sys.stderr)
    sys.exit(2)


def read_couplings(path):
    """{(i, j): score} with i < j, from a plmc couplings file; exits 2 on a bad line."""
    try:
        with open(path) as f:
            lines = f.readlines()
    except OSError as e:
        die(f"{path}: cannot read: {e.strerror}")
    scores = {}
    for n, line in enumerate(lines, 1):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 6:
            die(
                f"{path}:{n}: expected 6 columns (i A_i j A_j 0 score), found {len(parts)}"
            )
        try:
            i, j, s = int(parts[0]), int(parts[2]), float(parts[5])
        except ValueError:
            die(
                f"{path}:{n}: expected integers i, j and a number score, found {line.strip()!r}"
            )
        key = (min(i, j), max(i, j))
        if key in scores:
            die(f"{path}:{n}: pair {key} appears twice")
        scores[key] = s
    if not scores:
        die(f"{path}: no pairs")
    return scores


def top(scores, k):
    """The k pairs of highest score (ties broken by the pair, so the set is well defined)."""
    return [p for p, _ in sorted(scores.items(), key=lambda kv: (-kv[1], kv[0]))[:k]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ours")
    ap.add_argument("reference", help="plmc's couplings file")
    ap.add_argument(
        "--tol", type=float, default=1e-3, help="max abs difference / largest score"
    )
    a = ap.parse_args()
    ours, ref = read_couplings(a.ours), read_couplings(a.reference)
    if ours.keys() != ref.keys():
        only = sorted(set(ours) ^ set(ref))[:5]
        die(f"the files hold different pairs (e.g. {only})")
    sites = sorted({i for p in ref for i in p})
    n_sites = len(sites)
    largest = max(abs(s) for s in ref.values())
    worst = max(ref, key=lambda p: abs(ours[p] - ref[p]))
    diff = abs(ours[worst] - ref[worst])
    top_ours, top_ref = top(ours, n_sites), top(ref, n_sites)
    overlap = len(set(top_ours) & set(top_ref))
    # The margin around the L-th place: how far apart the reference's L-th and (L+1)-th scores
    # are, against the score differences (a swap there is within the fits' disagreement).
    ranked = sorted(ref.values(), reverse=True)
    out = {
        "pairs": len(ref),
        "L": n_sites,
        "largest_score": largest,
        "max_abs_diff": diff,
        "ratio": diff / largest,
        "worst_pair": list(worst),
        "top_L_overlap": overlap,
        "reference_gap_at_L": ranked[n_sites - 1] - ranked[n_sites]
        if len(ranked) > n_sites
        else None,
        "pass_ratio": diff / largest <= a.tol,
        "pass_top_L": overlap == n_sites,
    }
    print(json.dumps(out))


if __name__ == "__main__":
    main()
