#!/usr/bin/env python3
"""unexplored_table.py — the unexplored-states detector's table from a statescope experiment file.

Usage: unexplored_table.py FILE.h5 [--markdown]

Per run: the fraction of evaluation states outside the envelope of that run's training states, in
position bins [0, T), [T, 2T), [2T, 4T), ..., the excess loss (bits) in the same bins, the held-out
training states outside (the calibration check), and the within-run Spearman correlation of outside
fraction and excess over positions >= T with its interval. Then the pooled correlation over every
(run, position >= T) pair, with a 95% percentile interval from resampling the evaluation sequences
(the same resample for every run: they share the sequences). Reads the file with h5py and numpy only.
"""
import sys

import h5py
import numpy as np


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


def main(args):
    if not args or args[0].startswith("-"):
        print(__doc__)
        return 2
    md = "--markdown" in args
    f = h5py.File(args[0], "r")
    runs = [r for r in f if isinstance(f[r], h5py.Group) and "unexplored" in f[r]]
    if not runs:
        print(f"{args[0]}: no run has an unexplored group")
        return 1
    g0 = f[runs[0]]["unexplored"]
    T, L = int(g0.attrs["T"]), int(g0.attrs["length"])
    bins = [(0, T)]
    while bins[-1][1] < L:
        bins.append((bins[-1][1], min(2 * bins[-1][1], L)))
    head = ["run", "held-out"] + [f"out {a}-{b}" for a, b in bins] + [f"exc {a}-{b}" for a, b in bins[1:]] + ["rho [95%]"]
    rows, pooled = [], {}
    for run in runs:
        u, ppl = f[run]["unexplored"], f[run]["ppl"]
        pos = u["position"][:]
        om = u["outside_mean"][:]
        exc = (ppl["nll"][:] - ppl["windowed_nll"][:]) / np.log(2)
        out_b = [om[(pos >= a) & (pos < b)].mean() for a, b in bins]
        exc_b = [exc[a:b].mean() for a, b in bins[1:]]
        rho = u["excess_rho"][:]
        rows.append([run, f"{u['heldout_outside'][:].mean():.3f}"] + [f"{v:.3f}" for v in out_b] +
                    [f"{v:+.3f}" for v in exc_b] + [f"{rho[0]:.2f} [{rho[1]:.2f}, {rho[2]:.2f}]"])
        # per sequence: outside fraction and excess over each stride ending at a grid point >= T
        stride = int(pos[1] - pos[0]) if len(pos) > 1 else 1
        keep = pos >= T
        per_seq_exc = ppl["nll_per_sequence"][:] - ppl["windowed_nll_per_sequence"][:]  # [S, L]
        ex = np.stack([per_seq_exc[:, max(T, p - stride + 1):p + 1].mean(1) for p in pos[keep]], 1)
        pooled[run] = (u["outside_seq"][:][:, keep], ex)
    S = next(iter(pooled.values()))[0].shape[0]

    def pooled_rho(pick):
        xs, ys = [], []
        for o, e in pooled.values():
            xs.append(o[pick].mean(0))
            ys.append(e[pick].mean(0))
        return spearman(np.concatenate(xs), np.concatenate(ys))

    rho = pooled_rho(np.arange(S))
    rng = np.random.default_rng(0)
    boot = sorted(v for v in (pooled_rho(rng.integers(0, S, S)) for _ in range(500)) if np.isfinite(v))
    lo, hi = boot[int(0.025 * (len(boot) - 1))], boot[int(0.975 * (len(boot) - 1))]
    if md:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
        print("  ".join(h.ljust(w[i]) for i, h in enumerate(head)))
        for r in rows:
            print("  ".join(c.ljust(w[i]) for i, c in enumerate(r)))
    n_pairs = sum(o.shape[1] for o, _ in pooled.values())
    print(f"\npooled over {len(runs)} runs x positions >= T ({n_pairs} pairs): Spearman(outside fraction, excess) = "
          f"{rho:.3f}, 95% interval {lo:.3f} to {hi:.3f} (500 resamples of the {S} sequences)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
