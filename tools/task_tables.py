#!/usr/bin/env python3
"""task_tables.py — copying, passkey and bAbI tables over seeds from statescope experiment files.

Usage: task_tables.py LABEL=FILE[,FILE...] [LABEL=FILE,...]   (one FILE per seed)

For every run found in the files (a spec's runs: baseline, zero, fitted, ...), mean [min-max] over
the files: copying exact match per string length from a zero | a passed state, and per-token
accuracy; passkey exact match per (length, depth) and the mean over depths; bAbI greedy, choice and
the last-mentioned baseline per length. Reads with h5py only (run/copying, run/passkey, run/babi).
"""
import sys

import numpy as np

from seed_files import cell, read_runs


def copying(label, runs):
    for run, per in runs.items():
        L = int(per[0]["L"])
        foreign = str(per[0].get("foreign", "")).split(",") if "exact_foreign" in per[0] else []
        print(f"{label} {run}: copying exact match by starting state, {len(per)} seeds, mean ±95% [min-max]; L = {L}")
        head = ["zero", "passed"] + foreign
        print("  length  " + "".join(f"{h:>26}" for h in head))
        for i, n in enumerate(per[0]["length"]):
            cols = [[p["exact"][i] for p in per], [p["exact_passed"][i] for p in per]]
            cols += [[p["exact_foreign"][k][i] for p in per] for k in range(len(foreign))]
            print(f"  {n:6d}  " + "".join(f"{cell(c):>26}" for c in cols) + ("   > L" if n > L else ""))
        tz = np.mean([p["token_accuracy"] for p in per], axis=0)
        tq = np.mean([p["token_accuracy_passed"] for p in per], axis=0)
        print("  per-token accuracy, mean: " + " ".join(f"{x:.2f}" for x in tz) + " / " + " ".join(f"{x:.2f}" for x in tq))


def passkey(label, runs):
    for run, per in runs.items():
        L, D = per[0]["length"], per[0]["depth"]
        acc = np.array([p["accuracy"].reshape(len(L), -1) for p in per])  # [seeds, L, D]
        print(f"{label} {run}: passkey exact match, {len(per)} seeds, mean ±95% [min-max]")
        print("  length  " + "".join(f"{'depth ' + str(d):>26}" for d in D) + f"{'mean over depths':>26}")
        for i, n in enumerate(L):
            row = "".join(f"{cell(acc[:, i, j]):>26}" for j in range(len(D)))
            print(f"  {n:6d}  {row}{cell(acc[:, i, :].mean(axis=1)):>26}")


def babi(label, runs):
    for run, per in runs.items():
        print(f"{label} {run}: bAbI, {len(per)} seeds, mean ±95% [min-max]")
        print(f"  length  {'greedy':>26}{'choice':>26}{'last-mentioned':>26}")
        for i, n in enumerate(per[0]["length"]):
            cols = [[p[k][i] for p in per] for k in ("accuracy", "choice_accuracy", "last_mentioned_accuracy")]
            print(f"  {n:6d}  " + "".join(f"{cell(c):>26}" for c in cols))


def read_group(g):
    out = {k: g[k][:] for k in g if not hasattr(g[k], "keys")}  # datasets only (not train/)
    out.update({k: g.attrs[k] for k in g.attrs})
    return out


def main(args):
    if not args:
        print(__doc__)
        return 2
    for arg in args:
        for group, show in (("copying", copying), ("passkey", passkey), ("babi", babi)):
            label, runs = read_runs(arg, group, read_group)
            show(label, runs)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
