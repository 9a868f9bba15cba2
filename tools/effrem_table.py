#!/usr/bin/env python3
"""effrem_table.py — Effective Remembrance tables from statescope experiment files.

Usage: effrem_table.py LABEL=FILE[,FILE...] [LABEL=FILE,...]  (one FILE per seed)

For every label and context length T in the files: EffRem_T(t) at each grid point t < T, one
column per run (a sweep's seeds gathered by group), mean ±95% t-interval over the seeds [min-max]. Reads the files with h5py only
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
        data = {}  # T -> {run: list of (t, value) per file}
        for run, per in runs.items():
            for Ts, t, v in per:
                for i, T in enumerate(Ts):
                    data.setdefault(int(T), {}).setdefault(run, []).append((t, v[i]))
        for T in sorted(data):
            by_run = data[T]
            names = list(by_run)
            t = by_run[names[0]][0][0]
            seeds = len(by_run[names[0]])
            print(f"{label}: EffRem_T(t) at T = {T}, {seeds} seed(s), mean ±95% [min-max]")
            cols = {run: np.array([p[1] for p in per]) for run, per in by_run.items()}
            w = 30
            print(f"  {'t':>6}  " + "".join(f"{n:>{w}}" for n in names))
            for j in np.nonzero(t < T)[0]:
                print(f"  {int(t[j]):>6}  " + "".join(f"{cell(cols[n][:, j], 3):>{w}}" for n in names))
            print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
