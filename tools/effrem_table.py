#!/usr/bin/env python3
"""effrem_table.py — Effective Remembrance tables from statescope experiment files.

Usage: effrem_table.py LABEL=FILE[,FILE...] [LABEL=FILE,...]  (one FILE per seed)

For every label, run and context length T in the files: EffRem_T(t) at each grid point t < T,
mean over the files (seeds) with the range [min-max] in brackets. Reads the files with h5py only
(run/effrem/{T, t, value}), so it is also a check that other tools read them.
"""
import sys

import numpy as np

from seed_files import cell, read_runs


def main(args):
    if not args:
        print(__doc__)
        return 2
    for arg in args:
        label, runs = read_runs(arg, "effrem", lambda g: (g["T"][:], g["t"][:], g["value"][:]))
        data = {}  # (run, T) -> list of (t, value) per file
        for run, per in runs.items():
            for Ts, t, v in per:
                for i, T in enumerate(Ts):
                    data.setdefault((run, int(T)), []).append((t, v[i]))
        for (run, T), per in sorted(data.items()):
            t = per[0][0]
            vals = np.array([p[1] for p in per])
            cells = [f"t={t[j]}: {cell(vals[:, j], 3)}" for j in np.nonzero(t < T)[0]]
            print(f"{label} {run} T={T} ({len(per)} seeds): " + ", ".join(cells))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
