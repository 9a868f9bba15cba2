#!/usr/bin/env python3
"""task_tables.py — passkey and bAbI tables over seeds from statescope experiment files.

Usage: task_tables.py LABEL=FILE[,FILE...] [LABEL=FILE,...]   (one FILE per seed)

passkey: exact match per (length, depth), mean over the files with [min-max], and the mean over
depths per length. bAbI: greedy, choice and the last-mentioned baseline per length, mean [min-max].
Reads with h5py only (run/passkey/{length, depth, accuracy}, run/babi/{length, ...}).
"""
import sys

import h5py
import numpy as np


def cell(col):
    return f"{col.mean():.2f} [{col.min():.2f}-{col.max():.2f}]"


def main(args):
    if not args:
        print(__doc__)
        return 2
    for arg in args:
        label, _, files = arg.partition("=")
        pk, babi = [], []
        for f in files.split(","):
            with h5py.File(f, "r") as h:
                for run in h:
                    if "passkey" in h[run]:
                        g = h[run]["passkey"]
                        pk.append((g["length"][:], g["depth"][:], g["accuracy"][:].reshape(len(g["length"]), -1)))
                    if "babi" in h[run]:
                        g = h[run]["babi"]
                        babi.append({k: g[k][:] for k in g})
        if pk:
            L, D = pk[0][0], pk[0][1]
            acc = np.array([p[2] for p in pk])  # [seeds, L, D]
            print(f"{label}: passkey exact match, {len(pk)} seeds, mean [min-max]")
            print("  length  " + "".join(f"{'depth ' + str(d):>20}" for d in D) + f"{'mean over depths':>20}")
            for i, l in enumerate(L):
                row = "".join(f"{cell(acc[:, i, j]):>20}" for j in range(len(D)))
                print(f"  {l:6d}  {row}{cell(acc[:, i, :].mean(axis=1)):>20}")
        if babi:
            print(f"{label}: bAbI, {len(babi)} seeds, mean [min-max]")
            print(f"  length  {'greedy':>20}{'choice':>20}{'last-mentioned':>20}")
            for i, l in enumerate(babi[0]["length"]):
                cols = [np.array([b[k][i] for b in babi]) for k in ("accuracy", "choice_accuracy", "last_mentioned_accuracy")]
                print(f"  {l:6d}  " + "".join(f"{cell(c):>20}" for c in cols))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
