#!/usr/bin/env python3
"""head_table.py — which heads' states grow past T, over seeds, from a statescope experiment file.

Usage: head_table.py FILE [FIELD=VALUE ...]   (only the runs whose sweep cell has those values)

Per run group (a sweep's seeds gathered): the growth ||h|| at the last position / at position T-1
of every (layer, head), as `statescope-cli inspect` prints it per run; here the median over heads,
the three heads that grow most (by the mean over seeds) and the number of heads that grew more than
5x, each as mean ±95% t-interval over the seeds. Reads with h5py only (run/state_norm/norm_per_head).
"""
import sys

import numpy as np

from seed_files import cell, read_runs


def main(args):
    if not args:
        print(__doc__)
        return 2
    want = {k: float(v) for k, _, v in (a.partition("=") for a in args[1:])}
    growth = lambda g: g["norm_per_head"][:][:, :, -1] / g["norm_per_head"][:][:, :, int(g.attrs["T"]) - 1]
    _, groups = read_runs("heads=" + args[0], "state_norm", growth,  # group -> growth [layers, heads] per seed
                          keep=lambda c: all(c.get(k, v) == v for k, v in want.items()))
    print(f"state norm per (layer, head), last position / position T-1, mean ±95% over seeds")
    print(f"{'run':<10}{'seeds':>6}{'median':>22}   {'the three that grow most (layer, head)':<66}{'heads > 5x':>16}")
    for name, per in groups.items():
        g = np.array(per)  # [seeds, layers, heads]
        nl, nh = g.shape[1:]
        med = [np.median(x) for x in g]
        top = np.argsort(-g.mean(axis=0).ravel())[:3]
        tops = "  ".join(f"{cell(g.reshape(len(g), -1)[:, i], 1, spread=False)} (L{i // nh} H{i % nh})" for i in top)
        big = [(x > 5).sum() for x in g]
        label = name.split("@")[0]
        print(f"{label:<10}{len(g):>6}{cell(med, 2, spread=False):>22}   {tops:<66}{cell(big, 1, spread=False) + f' / {nl * nh}':>16}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
