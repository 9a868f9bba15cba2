#!/usr/bin/env python3
"""head_table.py — which heads' states grow past T, over seeds, from a statescope experiment file.

Usage: head_table.py FILE [FIELD=VALUE ...]   (only the runs whose sweep cell has those values)

Per run group (a sweep's seeds gathered): the growth ||h|| at the last position / at position T-1
of every (layer, head), as `statescope-cli inspect` prints it per run; here the median over heads,
the three heads that grow most (by the mean over seeds) and the number of heads that grew more than
5x, each as mean ±95% t-interval over the seeds. Reads with h5py only (run/state_norm/norm_per_head).
"""
import json
import sys

import h5py
import numpy as np

from seed_files import cell


def main(args):
    if not args:
        print(__doc__)
        return 2
    want = {k: float(v) for k, _, v in (a.partition("=") for a in args[1:])}
    groups = {}  # group -> list of growth [layers, heads] per seed
    with h5py.File(args[0], "r") as h:
        for run in sorted(h, key=lambda r: str(h[r].attrs.get("started", ""))):
            g = h[run]
            if not isinstance(g, h5py.Group) or "state_norm/norm_per_head" not in g:
                continue
            spec = json.loads(g.attrs.get("spec", "{}") or "{}").get("run", {})
            c = spec.get("sweep_cell", {})
            if any(k in c and c[k] != v for k, v in want.items()):
                continue
            n = g["state_norm/norm_per_head"][:]  # [layer, head, position]
            T = int(g["state_norm"].attrs["T"])
            groups.setdefault(spec.get("sweep_group", run), []).append(n[:, :, -1] / n[:, :, T - 1])
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
