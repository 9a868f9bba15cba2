#!/usr/bin/env python3
"""effrem_table.py — Effective Remembrance tables from statescope experiment files.

Usage: effrem_table.py LABEL=FILE[,FILE...] [LABEL=FILE,...]  (one FILE per seed)

For every label, run and context length T in the files: EffRem_T(t) at each grid point t < T,
mean over the files (seeds) with the range [min-max] in brackets. Reads the files with h5py only
(run/effrem/{T, t, value}), so it is also a check that other tools read them.
"""
import sys

import h5py
import numpy as np


def main(args):
    if not args:
        print(__doc__)
        return 2
    for arg in args:
        label, _, files = arg.partition("=")
        files = files.split(",")
        data = {}  # (run, T) -> list of (t, value) per file
        for f in files:
            with h5py.File(f, "r") as h:
                for run in h:
                    if "effrem" not in h[run]:
                        continue
                    g = h[run]["effrem"]
                    Ts, t, v = g["T"][:], g["t"][:], g["value"][:]
                    for i, T in enumerate(Ts):
                        data.setdefault((run, int(T)), []).append((t, v[i]))
        for (run, T), per in sorted(data.items()):
            t = per[0][0]
            vals = np.array([p[1] for p in per])
            keep = t < T
            cells = []
            for j in np.nonzero(keep)[0]:
                col = vals[:, j]
                cells.append(f"t={t[j]}: {col.mean():.3f} [{col.min():.3f}-{col.max():.3f}]")
            print(f"{label} {run} T={T} ({len(per)} seeds): " + ", ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
