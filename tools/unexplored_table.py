#!/usr/bin/env python3
"""unexplored_table.py — the unexplored-states detector's tables from statescope experiment files.

Usage: unexplored_table.py FILE.h5 [FILE.h5 ...]

Runs are grouped by setting: a sweep's seeds (run attribute spec.run.sweep_group) or the same run
name in several files form one group, reported as mean ±95% t-interval over the seeds. Per group,
in position bins [0, T), [T, 2T), [2T, 4T), [4T, 16T), [16T, end):
  1. the fraction of evaluation states outside the envelope of the run's own training states, the
     held-out training states outside (the calibration check), and the within-run Spearman
     correlation of outside fraction and excess over positions >= T;
  2. the same states against one envelope for every run (the loaded model's zero-state training
     states, `common_outside`), with its within-run Spearman;
  3. the excess loss against the experiment's one yardstick (the loaded model's state-reset loss on
     the same bytes; each run's own reference in files without it), bits per token.
Then the pooled Spearman over every (run, position >= T) pair, per seed, for both envelopes, with a
95% percentile interval from resampling the evaluation sequences (one resample for every run of a
seed: they share the sequences). Reads with h5py and numpy only.
"""
import json
import math
import sys

import h5py
import numpy as np

from seed_files import cell as seed_cell

def ranks(v):
    order = np.argsort(v, kind="mergesort")
    r = np.empty(len(v))
    sv = v[order]
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and sv[j + 1] == sv[i]:
            j += 1
        r[order[i:j + 1]] = 0.5 * (i + j) + 1
        i = j + 1
    return r


def spearman(x, y):
    rx, ry = ranks(np.asarray(x, float)), ranks(np.asarray(y, float))
    rx, ry = rx - rx.mean(), ry - ry.mean()
    d = np.sqrt((rx * rx).sum() * (ry * ry).sum())
    return float((rx * ry).sum() / d) if d > 0 else float("nan")


def cell(values, digits=3, sign=False):
    """mean ±95% t-interval over seeds (the mean alone for one)."""
    return seed_cell(values, digits, sign, spread=False)


def read(path):
    """[(group, seed, run record)] for every run with an unexplored group."""
    out = []
    with h5py.File(path, "r") as f:
        for run in sorted(f, key=lambda r: str(f[r].attrs.get("started", ""))):
            if not isinstance(f[run], h5py.Group) or "unexplored" not in f[run]:
                continue
            u, ppl = f[run]["unexplored"], f[run]["ppl"]
            spec = json.loads(f[run].attrs.get("spec", "{}") or "{}").get("run", {})
            group = spec.get("sweep_group", run)
            seed = str(f[run].attrs.get("seed", path))
            nll = ppl["nll_per_sequence"][:]
            fixed = "fixed_reference_per_sequence" in ppl
            ref = ppl["fixed_reference_per_sequence" if fixed else "windowed_nll_per_sequence"][:]
            rec = {
                "T": int(u.attrs["T"]), "length": int(u.attrs["length"]), "pos": u["position"][:],
                "out": u["outside_mean"][:], "seq": u["outside_seq"][:],
                "common": u["common_outside_mean"][:] if "common_outside_mean" in u else None,
                "held": float(u["heldout_outside"][:].mean()), "rho": float(u["excess_rho"][0]),
                "crho": float(u["common_rho"][0]) if "common_rho" in u else float("nan"),
                "exc": (nll - ref) / math.log(2), "fixed": fixed,
            }
            out.append((group, seed + "@" + path, rec))
    return out


def bins_of(T, L):
    edges = [0, T, 2 * T, 4 * T, 16 * T, L]
    return [(a, min(b, L)) for a, b in zip(edges, edges[1:]) if a < L and a < b]


def main(args):
    paths = [a for a in args if not a.startswith("-")]
    if not paths:
        print(__doc__)
        return 2
    recs = [r for p in paths for r in read(p)]
    if not recs:
        print(f"{', '.join(paths)}: no run has an unexplored group")
        return 1
    T, L = recs[0][2]["T"], recs[0][2]["length"]
    bins = bins_of(T, L)
    groups = {}
    for g, seed, r in recs:
        groups.setdefault(g, []).append((seed, r))
    seeds = sorted({s for _, s, _ in recs})
    fixed = all(r["fixed"] for _, _, r in recs)
    have_common = all(r["common"] is not None for _, _, r in recs)

    def table(title, row):
        head = ["run", "seeds"] + row(None)
        rows = [[g, str(len(rs))] + row(rs) for g, rs in groups.items()]
        w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
        print(title)
        print("  ".join(h.ljust(w[i]) for i, h in enumerate(head)))
        for r in rows:
            print("  ".join(c.ljust(w[i]) for i, c in enumerate(r)))
        print()

    def binned(key):
        def row(rs):
            if rs is None:
                return [f"{a}-{b}" for a, b in bins] + ["rho within run"]
            cols = []
            for a, b in bins:
                cols.append(cell([r[key][(r["pos"] >= a) & (r["pos"] < b)].mean() for _, r in rs]))
            cols.append(cell([r["rho" if key == "out" else "crho"] for _, r in rs], 2, True))
            return cols
        return row

    def held(rs):
        return ["held-out"] if rs is None else [cell([r["held"] for _, r in rs])]

    print(f"T = {T}, {L} positions; {len(seeds)} seed(s); mean ±95% t-interval over seeds\n")
    table("1. fraction of states outside the run's own envelope (its training states under its policy)",
          lambda rs: held(rs) + binned("out")(rs))
    if have_common:
        table("2. fraction outside one envelope for every run (the loaded model's zero-state training states)",
              binned("common"))
    table("3. excess loss, bits/token, against " + ("the one yardstick (the loaded model's state-reset loss)" if fixed
                                                      else "each run's own state-reset reference"),
          lambda rs: [f"{a}-{b}" for a, b in bins[1:]] if rs is None else
          [cell([r["exc"][:, a:b].mean() for _, r in rs], 3, True) for a, b in bins[1:]])

    # Pooled over runs and positions >= T, per seed (files or sweep seeds), both envelopes.
    rng = np.random.default_rng(0)
    per_seed = []
    for s in seeds:
        rs = [r for _, sd, r in recs if sd == s]
        if not rs:
            continue
        pooled = []
        for r in rs:
            pos, keep = r["pos"], r["pos"] >= T
            stride = int(pos[1] - pos[0]) if len(pos) > 1 else 1
            ex = np.stack([r["exc"][:, max(T, p - stride + 1):p + 1].mean(1) for p in pos[keep]], 1)
            pooled.append((r["seq"][:, keep], ex))
        S = pooled[0][0].shape[0]

        def rho_of(pick):
            return spearman(np.concatenate([o[pick].mean(0) for o, _ in pooled]),
                            np.concatenate([e[pick].mean(0) for _, e in pooled]))

        rho = rho_of(np.arange(S))
        boot = sorted(v for v in (rho_of(rng.integers(0, S, S)) for _ in range(500)) if np.isfinite(v))
        lo, hi = boot[int(0.025 * (len(boot) - 1))], boot[int(0.975 * (len(boot) - 1))]
        per_seed.append(rho)
        n_pairs = sum(o.shape[1] for o, _ in pooled)
        print(f"pooled, seed {s.split('@')[0]}: {len(rs)} runs x positions >= T ({n_pairs} pairs), Spearman(outside "
              f"own envelope, excess) = {rho:.3f}, 95% interval {lo:.3f} to {hi:.3f} (500 resamples of {S} sequences)")
    if len(per_seed) > 1:
        print(f"pooled, over seeds: {cell(per_seed, 3, True)}")
    if have_common:
        per_seed = []
        for s in seeds:
            rs = [r for _, sd, r in recs if sd == s]
            xs, ys = [], []
            for r in rs:
                pos, keep = r["pos"], r["pos"] >= T
                stride = int(pos[1] - pos[0]) if len(pos) > 1 else 1
                xs.append(r["common"][keep])
                ys.append([r["exc"][:, max(T, p - stride + 1):p + 1].mean() for p in pos[keep]])
            per_seed.append(spearman(np.concatenate(xs), np.concatenate(ys)))
        print("pooled, common envelope (means over sequences), per seed: " +
              ", ".join(f"{v:+.3f}" for v in per_seed) + (f"; over seeds {cell(per_seed, 3, True)}" if len(per_seed) > 1 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
