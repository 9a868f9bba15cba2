#!/usr/bin/env python3
"""attention_table.py — how far back each run's heads look, over seeds, from a statescope experiment file.

Usage: attention_table.py FILE[,FILE...]

Per run group (a sweep's seeds gathered), from run/attention (effective attention of one layer's heads on
one sequence, M[t, s]; by_distance = mean |M[t, t-d]| over t): the mean over heads of by_distance
summed over the distance bands [0, T/4), [T/4, T), [T, 4T), [4T, L), each as mean ±95% t-interval over
the seeds; and the reach: the distance within which 90% of a head's summed by_distance lies, median over
heads. The model's T is the run's (run/ppl attribute T). Reads with h5py only.
"""
import sys

import numpy as np

from seed_files import cell, read_runs


def bands(g):
    d = g["by_distance"][:]                      # [heads, L]
    T = int(g.parent["ppl"].attrs["T"])  # the run's evaluation (position p >= T lies past its context)
    L = d.shape[1]
    edges = [0, T // 4, T, 4 * T, L]
    out = [d[:, a:b].sum(1).mean() for a, b in zip(edges[:-1], edges[1:]) if a < L]
    cum = np.cumsum(d, 1) / np.maximum(d.sum(1, keepdims=True), 1e-300)
    reach = np.median([int(np.argmax(c >= 0.9)) for c in cum])
    return out + [reach], T, L


def main(args):
    if not args:
        print(__doc__)
        return 2
    _, groups = read_runs("attention=" + args[0], "attention", lambda g: bands(g))
    if not groups:
        raise SystemExit(f"{args[0]}: no run holds an attention group")
    T, L = next(iter(groups.values()))[0][1:]
    print(f"effective attention, layer's heads on the first {L} validation tokens: mean over heads of "
          f"sum_d by_distance over each band (T = {T}); reach = distance holding 90% (median over heads); "
          f"mean ±95% over seeds")
    heads = ["d<T/4", "T/4<=d<T", "T<=d<4T", f"4T<=d<{L}", "reach"]
    print(f"{'run':<16}{'seeds':>6}" + "".join(f"{h:>30}" for h in heads[:-1]) + f"{heads[-1]:>18}")
    for name, per in groups.items():
        rows = np.array([p[0] for p in per])      # [seeds, bands + 1]
        cells = [cell(rows[:, k], 3) for k in range(rows.shape[1] - 1)] + [cell(rows[:, -1], 0)]
        print(f"{name:<16}{len(per):>6}" + "".join(f"{c:>30}" for c in cells[:-1]) + f"{cells[-1]:>18}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
