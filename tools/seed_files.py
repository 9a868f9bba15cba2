"""seed_files.py — what the table tools share: LABEL=FILE[,FILE...] arguments (one experiment file
per seed) read with h5py into per-run lists, and the "mean [min-max]" cell."""
import h5py
import numpy as np


def read_runs(arg, group, read):
    """arg 'LABEL=F1,F2,...' -> (label, {run: [read(h5 group) per file that has run/group]})."""
    label, _, files = arg.partition("=")
    if not files:
        raise SystemExit(f"{arg!r}: expected LABEL=FILE[,FILE...]")
    runs = {}
    for f in files.split(","):
        with h5py.File(f, "r") as h:
            # in the order the runs started (the spec's order), not h5py's alphabetical one
            for run in sorted(h, key=lambda r: str(h[r].attrs.get("started", ""))):
                if isinstance(h[run], h5py.Group) and group in h[run]:
                    runs.setdefault(run, []).append(read(h[run][group]))
    return label, runs


def cell(col, digits=2):
    col = np.asarray(col, dtype=float)
    return f"{col.mean():.{digits}f} [{col.min():.{digits}f}-{col.max():.{digits}f}]"
