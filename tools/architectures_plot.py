#!/usr/bin/env python3
"""architectures_plot.py — the per-architecture figure of docs/analyses-results.md (dev only: matplotlib).

For each model of an experiment file (runs named <model>:<run>, as data/experiments/architectures.json
writes them) and each extra file (one model, e.g. provoked_gla.h5): the excess loss per position over
the experiment's one yardstick (ppl/fixed_excess, stored in nats, drawn in bits/token), log-binned, for the baseline and the
mean over seeds of the zero control and of state passing; below it the mean layer state norm per
position relative to position T-1. Regenerate (after `bash tools/reproduce.sh architectures gla_provoked`):

    .venv/bin/python tools/architectures_plot.py build/reproduce/architectures.h5 \
        "provoked GLA=build/reproduce/provoked_gla.h5" -o docs/results/architectures.png
"""
import argparse
import collections

import h5py
import matplotlib
import numpy as np

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

TITLES = {"embedded": "Mamba-2 (embedded, A frozen)", "embedded-mamba1": "Mamba-1", "embedded-gla": "GLA",
          "embedded-gdn": "Gated DeltaNet"}


def log_bins(n, per_decade=12):
    edges = np.unique(np.round(np.logspace(0, np.log10(n), per_decade * int(np.ceil(np.log10(n))) + 1)).astype(int))
    return [(a, b) for a, b in zip(edges[:-1], edges[1:]) if b > a]


def binned(y, bins):
    return np.array([y[a:b].mean() for a, b in bins]), np.array([np.sqrt(a * b) for a, b in bins])


def groups(f, prefix):
    """run kind -> [run group names] for one model (prefix '' or '<model>:')."""
    out = collections.defaultdict(list)
    for name in f.keys():
        if not name.startswith(prefix) or "ppl" not in f[name]:
            continue
        kind = name[len(prefix):].split("@")[0]
        if ":" in kind:
            continue
        out[kind].append(name)
    return out


def panel(ax_loss, ax_norm, f, prefix, title, T):
    colours = {"baseline": "0.2", "zero": "tab:orange", "passing": "tab:blue"}
    for kind in ("baseline", "zero", "passing"):
        names = groups(f, prefix).get(kind, [])
        if not names:
            continue
        # ppl/ holds nats per token (the store's unit); the axis is bits: / ln 2 (it was plotted
        # in nats under a bits label until 2026-12-06, every curve 0.69x its height).
        ex = np.mean([f[n]["ppl/fixed_excess"][:] for n in names], 0) / np.log(2)
        nm = np.mean([f[n]["state_norm/norm"][:].mean(0) for n in names], 0)
        bins = log_bins(len(ex))
        y, x = binned(ex, bins)
        label = kind if len(names) == 1 else f"{kind} (mean of {len(names)} seeds)"
        ax_loss.plot(x, y, color=colours[kind], label=label)
        y, x = binned(nm / nm[T - 1], bins)
        ax_norm.plot(x, y, color=colours[kind])
    for ax in (ax_loss, ax_norm):
        ax.set_xscale("log")
        ax.axvline(T, color="0.6", ls="--", lw=0.8)
        ax.grid(alpha=0.3)
    ax_loss.axhline(0, color="0.6", lw=0.8)
    ax_loss.set_title(title, fontsize=10)
    ax_norm.set_xlabel("position (tokens)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", help="the multi-model experiment file (architectures.h5)")
    ap.add_argument("extra", nargs="*", help="TITLE=FILE: a one-model experiment file added as a panel")
    ap.add_argument("-o", "--output", required=True)
    a = ap.parse_args()
    f = h5py.File(a.models, "r")
    models = sorted({k.split(":")[0] for k in f.keys() if ":" in k}, key=lambda m: list(TITLES).index(m) if m in TITLES else 99)
    panels = [(f, m + ":", TITLES.get(m, m)) for m in models]
    for e in a.extra:
        title, path = e.split("=", 1)
        panels.append((h5py.File(path, "r"), "", title))
    T = 32
    fig, axes = plt.subplots(2, len(panels), figsize=(3.2 * len(panels), 5.2), sharex=True, sharey="row", squeeze=False)
    for i, (h, prefix, title) in enumerate(panels):
        panel(axes[0][i], axes[1][i], h, prefix, title, T)
    axes[0][0].set_ylabel("excess over the yardstick\n(bits/token)")
    axes[1][0].set_ylabel("state norm / norm at T-1")
    axes[0][0].legend(fontsize=7, loc="upper left")
    fig.suptitle("Past T = 32: as loaded, after 200 steps from zero states, after 200 steps of state passing", fontsize=10)
    fig.text(0.01, 0.005, "tools/architectures_plot.py " + " ".join([a.models] + a.extra) + "  (data/experiments/"
             "architectures.json, provoked_gla.json; seeds 0, 1, 2)", fontsize=6, color="0.4")
    fig.tight_layout(rect=(0, 0.02, 1, 0.96))
    fig.savefig(a.output, dpi=110)


if __name__ == "__main__":
    main()
