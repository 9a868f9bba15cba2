"""seed_files.py — what the table tools share: LABEL=FILE[,FILE...] arguments (one experiment file
per seed, or one file whose sweep has the seeds) read with h5py into per-run lists, and the
"mean ±95% t-interval [min-max]" cell."""
import json
import math

import h5py
import numpy as np

T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228]


def read_runs(arg, group, read, keep=lambda cell: True):
    """arg 'LABEL=F1,F2,...' -> (label, {run: [read(h5 group) per file that has run/group]}); the
    runs of a sweep are gathered by their group (the run's name without its seed); keep(sweep cell)
    false leaves a run out."""
    label, _, files = arg.partition("=")
    if not files:
        raise SystemExit(f"{arg!r}: expected LABEL=FILE[,FILE...]")
    runs = {}
    for f in files.split(","):
        with h5py.File(f, "r") as h:
            # in the order the runs started (the spec's order), not h5py's alphabetical one
            for run in sorted(h, key=lambda r: str(h[r].attrs.get("started", ""))):
                if isinstance(h[run], h5py.Group) and group in h[run]:
                    spec = json.loads(h[run].attrs.get("spec", "{}") or "{}").get("run", {})
                    if not keep(spec.get("sweep_cell", {})):
                        continue
                    runs.setdefault(spec.get("sweep_group", run), []).append(read(h[run][group]))
    return label, runs


def cell(col, digits=2, sign=False, spread=True):
    """mean ±95% t-interval over the seeds, then [min-max] unless spread is False; the value alone
    for one seed; NaNs dropped ("-" when none is left)."""
    col = np.asarray([x for x in np.asarray(col, dtype=float).ravel() if np.isfinite(x)])
    if len(col) == 0:
        return "-"
    f = f"{{:{'+' if sign else ''}.{digits}f}}"
    if len(col) == 1:
        return f.format(col[0])
    half = (T975[len(col) - 2] if len(col) <= 11 else 1.96) * col.std(ddof=1) / math.sqrt(len(col))
    out = f.format(col.mean()) + f" ±{half:.{digits}f}"
    return out + (f" [{col.min():.{digits}f}-{col.max():.{digits}f}]" if spread else "")
