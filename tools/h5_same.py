#!/usr/bin/env python3
"""h5_same.py — do two statescope experiment files hold the same numbers?

Usage: h5_same.py A.h5 B.h5

Compares every dataset (values, shape, dtype) and every attribute of every group and dataset,
leaving out the timestamps (created, started, finished) and the wall times (seconds_*). Prints the first differences and exits 1
if there are any, else prints how many objects matched and exits 0. h5py only.
"""
import sys

import h5py
import numpy as np

TIMES = {"created", "started", "finished"}


def walk(h):
    out = {}

    def visit(name, obj):
        for k, v in obj.attrs.items():
            if k not in TIMES and not k.startswith("seconds_"):
                out[f"{name}@{k}"] = v
        if isinstance(obj, h5py.Dataset):
            out[name] = obj[()]

    for k, v in h.attrs.items():
        if k not in TIMES:
            out[f"/@{k}"] = v
    h.visititems(visit)
    return out


def main(a, b):
    with h5py.File(a, "r") as fa, h5py.File(b, "r") as fb:
        da, db = walk(fa), walk(fb)
    diff = sorted(set(da) ^ set(db))
    for k in sorted(set(da) & set(db)):
        x, y = np.asarray(da[k]), np.asarray(db[k])
        if x.shape != y.shape or x.dtype != y.dtype or not np.array_equal(x, y):
            diff.append(k)
    for k in diff[:20]:
        print(f"differs: {k}")
    if diff:
        print(f"{len(diff)} of {len(set(da) | set(db))} objects differ")
        return 1
    print(f"same: {len(da)} datasets and attributes (timestamps left out)")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print(__doc__)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
