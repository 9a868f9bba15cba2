#!/usr/bin/env python3
"""recall_probe.py MODEL_DIR [MODEL_DIR ...] [--data heldout.jsonl] [--T 256] [--length 8192] [--batch 8]

Does the natural-failure recipe's model (issue 50) use its memory, and does that memory break past T?
On Persuasion with planted dependencies (tools/plant_dependencies.py --held-out --seed 99: each
'<Name dddd>' introduced once and recalled 16 to T - 48 bytes later), every sequence of LENGTH bytes
is run in one pass by `statescope-cli forward` (the state carried, as in evaluation), and the loss of
the four digits is read at each introduction (fresh numbers: nothing predicts them, ~log2(10) = 3.32
bits) and at each recall whose introduction lies in the same sequence (memory predicts them: 0 bits
when remembered, ~3.32 when not). Recalls are binned by position: [0, T), [T, 2T), [2T, 4T), ...
A model that uses its memory within T has recall loss far below the introductions' in the first bin;
a memory that breaks past T shows recall loss climbing in the later bins.

The score's oracles (tests/test_recall_probe.py is not needed: run with --oracle): a perfect
rememberer (logits from the text itself) scores recall loss 0, and uniform logits score 8 bits on
every digit; --oracle checks both before measuring and exits 1 if either is off.

Prints one table per model: bin, recalls, recall-digit loss (bits), introduction-digit loss (bits).
Only the standard library, numpy and h5py (the dev environment's .venv); the CLI from
STATESCOPE_CLI or build/bin/statescope-cli.
"""
import argparse, json, math, os, re, subprocess, sys, tempfile

import h5py
import numpy as np

ap = argparse.ArgumentParser()
ap.add_argument("models", nargs="+")
ap.add_argument("--data", default="build/i50/heldout_T256.jsonl")
ap.add_argument("--T", type=int, default=256)
ap.add_argument("--length", type=int, default=8192)
ap.add_argument("--batch", type=int, default=8)
ap.add_argument("--oracle", action="store_true")
a = ap.parse_args()
root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
cli = os.environ.get("STATESCOPE_CLI", os.path.join(root, "build/bin/statescope-cli"))

docs = [json.loads(l)["text"] for l in open(a.data, encoding="utf-8")]
text = max(docs, key=len).encode("utf-8")  # the planted novel (the held-out file's tenth document)
need = a.length * a.batch
if len(text) < need:
    sys.exit(f"recall_probe: {a.data} holds {len(text)} bytes, fewer than {a.batch} x {a.length}")
step = (len(text) - a.length) // max(1, a.batch - 1)
starts = [i * step for i in range(a.batch)]
seqs = np.stack([np.frombuffer(text[s:s + a.length], dtype=np.uint8) for s in starts]).astype(np.int64)

# Plants per sequence: (intro digit positions, recall digit positions), both inside the sequence.
plant = re.compile(rb"[<\[]([A-Z][a-z]{4} (\d{4}))[>\]]")  # '[...]': a marked recall (--marked)
plants = []
for row in seqs:
    b = row.astype(np.uint8).tobytes()
    seen, rows = {}, []
    for m in plant.finditer(b):
        key = m.group(1)
        if key in seen:
            rows.append((seen.pop(key), m.start(2)))
        else:
            seen[key] = m.start(2)
    plants.append(rows)

edges = [0, a.T]
while edges[-1] < a.length:
    edges.append(edges[-1] * 2)
edges[-1] = a.length


def digit_bits(logp, row, pos):
    # bits of the 4 digits at pos..pos+3; logits at t predict token t+1
    return float(-sum(logp[row, p - 1, seqs[row, p]] for p in range(pos, pos + 4)) / math.log(2) / 4)


def table(logp):
    out = []
    for lo, hi in zip(edges[:-1], edges[1:]):
        rec, intro = [], []
        for r, rows in enumerate(plants):
            for i, c in rows:
                if lo <= c < hi:
                    rec.append(digit_bits(logp, r, c))
                    intro.append(digit_bits(logp, r, i))
        out.append((lo, hi, len(rec), np.mean(rec) if rec else float("nan"), np.mean(intro) if intro else float("nan")))
    return out


def log_softmax(x):
    x = x - x.max(-1, keepdims=True)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


if a.oracle:
    perfect = np.full(seqs.shape + (256,), -1e4, dtype=np.float32)
    for r in range(seqs.shape[0]):
        perfect[r, np.arange(a.length - 1), seqs[r, 1:]] = 0.0
    uniform = np.zeros(seqs.shape + (256,), dtype=np.float32)
    ok_p = all(abs(t[3]) < 1e-6 for t in table(log_softmax(perfect)) if t[2])
    ok_u = all(abs(t[3] - 8) < 1e-6 and abs(t[4] - 8) < 1e-6 for t in table(log_softmax(uniform)) if t[2])
    print(f"oracle: perfect rememberer recall loss 0: {'ok' if ok_p else 'FAIL'}; uniform 8 bits: {'ok' if ok_u else 'FAIL'}")
    if not (ok_p and ok_u):
        sys.exit(1)

with tempfile.TemporaryDirectory() as tmp:
    inp = os.path.join(tmp, "in.h5")
    with h5py.File(inp, "w") as f:
        f["input_ids"] = seqs.astype(np.int32)
    for model in a.models:
        out = os.path.join(tmp, "out.h5")
        subprocess.run([cli, "forward", "--model", model, "--input", inp, "--output", out, "--overwrite"], check=True,
                       stdout=subprocess.DEVNULL)
        with h5py.File(out, "r") as f:
            logp = log_softmax(f["logits"][...].astype(np.float64))
        print(f"== {model}: {a.batch} sequences of {a.length} bytes, one pass (T = {a.T})")
        print("  positions        recalls  recall digits (bits)  introduction digits (bits)")
        for lo, hi, n, rec, intro in table(logp):
            print(f"  [{lo:5d}, {hi:5d})  {n:7d}  {rec:20.3f}  {intro:26.3f}")
        sys.stdout.flush()
