#!/usr/bin/env python3
"""make_hostile.py — small files that declare more than they hold (run by hand; outputs committed).

sparse.h5: an experiment-file-shaped HDF5 file whose run 'baseline' declares a per-position loss of
2 x 500,000,000 float64 (8 GB) that was never written: 20 KB on disk, chunked and compressed, so
only the fill value exists. Readers must refuse it by name instead of allocating 8 GB.

    .venv/bin/python tests/golden/hostile/make_hostile.py
"""
import os

import h5py

HERE = os.path.dirname(os.path.abspath(__file__))
with h5py.File(os.path.join(HERE, "sparse.h5"), "w") as f:
    f.attrs["format"] = "statescope-experiment"
    f.attrs["format_version"] = "1"  # strings, as statescope writes its attributes
    g = f.create_group("baseline")
    g.attrs["status"] = "finished"
    p = g.create_group("ppl")
    p.create_dataset("nll", shape=(2, 500_000_000), dtype="f8", chunks=(1, 65536), compression="gzip")
print(os.path.getsize(os.path.join(HERE, "sparse.h5")), "bytes")
