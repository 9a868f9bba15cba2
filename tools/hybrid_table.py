#!/usr/bin/env python3
"""hybrid_table.py NAME=FILE.h5 [...] — what a hybrid's attention layers read within T and far past it
(issue 53), from the evaluation's attention_stats/ group: per run group (the run's name without its
sweep cell: baseline, zero, passing), over its seeds, mean ± 95% t interval of

  entropy <T      the entropy of a position's attention in bits, mean over the attention layers'
                  heads and the positions [T/2, T)
  entropy far     the same over the last half of the evaluated positions [L/2, L)
  uniform far     log2(p+1) averaged over those positions: attention spread evenly over everything
  first <T, far   the share of the attention on the sequence's first tokens, over the same positions

A file without attention_stats (a pure model) prints no rows. Used by tools/reproduce.sh hybrids."""
import math
import sys

import h5py
import numpy as np

T95 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262}


def cell(values):
    v = np.asarray(values, dtype=float)
    if len(v) < 2:
        return f"{v.mean():.3f}"
    half = T95.get(len(v) - 1, 2.0) * v.std(ddof=1) / math.sqrt(len(v))
    return f"{v.mean():.3f} ±{half:.3f}"


def main(args):
    header = f"{'group':<28} {'seeds':>5} {'entropy <T':>14} {'entropy far':>14} {'uniform far':>11} {'first <T':>14} {'first far':>14}"
    print(header)
    for arg in args:
        name, path = arg.split("=", 1)
        groups = {}
        with h5py.File(path, "r") as f:
            for run in f:
                g = f[run]
                if not isinstance(g, h5py.Group) or "attention_stats" not in g:
                    continue
                a = g["attention_stats"]
                ent, first = a["entropy"][...], a["first_mass"][...]  # [layers, heads, L]
                T, L = int(a.attrs["T"]), ent.shape[2]
                near, far = slice(T // 2, T), slice(L // 2, L)
                p = np.arange(L)
                row = (ent[:, :, near].mean(), ent[:, :, far].mean(), np.log2(p[far] + 1).mean(),
                       first[:, :, near].mean(), first[:, :, far].mean())
                groups.setdefault(run.split("@")[0], []).append(row)
        for group in sorted(groups):
            rows = np.array(groups[group])
            print(f"{name + ':' + group:<28} {len(rows):>5} {cell(rows[:, 0]):>14} {cell(rows[:, 1]):>14} "
                  f"{rows[:, 2].mean():>11.2f} {cell(rows[:, 3]):>14} {cell(rows[:, 4]):>14}")
    print("(attention layers of the hybrids: entropy in bits of a position's attention, mean over layers, heads and the "
          "positions [T/2, T) or the last half [L/2, L); uniform far = log2(p+1) there; first = its share on the "
          "sequence's first tokens; mean ±95% t-interval over the seeds)")


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    main(sys.argv[1:])
