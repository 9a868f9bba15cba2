#!/usr/bin/env python3
"""plant_dependencies.py AUSTEN.txt OUT.jsonl [--T 256] [--every 0] [--min-gap 16] [--copies 4] [--seed 0] [--no-prose] [--marked]

The natural-failure recipe's corpus (issue 50): text where memory pays within the training window T.
Austen's novels without *Persuasion* (kept unseen for evaluation: the embedded corpus's validation
split), one JSON line per chapter, with planted long-range dependencies: an introduction
'<Name dddd>' about every T/2 bytes and, GAP bytes later (uniform in [min-gap, T - 48]), a recall of
the same pair. Names come from a fixed pool of ~300, numbers are fresh per plant, so only memory of
the window predicts a recall's digits. Several copies with different seeds (numbers never repeat).
Deterministic for its arguments; only the standard library.

    python3 tools/plant_dependencies.py data/corpus/austen-novels.txt build/i50/planted_T256.jsonl --T 256
    python3 tools/plant_dependencies.py data/corpus/austen-novels.txt build/i50/heldout_T256.jsonl --T 256 --held-out --seed 99
"""
import argparse, json, random, re
ap = argparse.ArgumentParser()
ap.add_argument("src"); ap.add_argument("out")
ap.add_argument("--T", type=int, default=256)          # the training window in bytes
ap.add_argument("--every", type=int, default=0)        # mean bytes between introductions (0: T/2)
ap.add_argument("--min-gap", type=int, default=16)
ap.add_argument("--copies", type=int, default=4)
ap.add_argument("--seed", type=int, default=0)
# The held-out evaluation text: Persuasion alone, planted the same way, written as nine one-byte
# documents and then the whole novel as the tenth, so statescope's split (every 10th document is
# validation) makes the planted novel the validation split (`eval --data OUT`).
ap.add_argument("--held-out", action="store_true")
# Held-out only: the novel repeated R times, so that with --no-prose (plants alone, as long as the
# novel) the stream is R times longer for evaluations at a larger T; its first len(novel) bytes are
# those of R = 1, the same plants from the same seed.
ap.add_argument("--repeat", type=int, default=1)
# No prose: each chapter replaced by as many bytes of plants alone, one space apart, every pending
# recall emitted when due and a new introduction otherwise (the control for whether the model can
# learn the recall at all: every digit is an introduction's or a recall's).
ap.add_argument("--no-prose", action="store_true")
# Marked recalls: a recall is written '[Name dddd]' (square brackets) and its introduction '<Name dddd>',
# so the model knows at the bracket that a recall starts and which kind of byte comes next; the
# task becomes multi-query associative recall over the window's pending names (recipe D, after
# recipes A-C learned no recall when a recall looked like a fresh introduction until its digits).
ap.add_argument("--marked", action="store_true")
a = ap.parse_args()
every = a.every or a.T // 2
TITLES = ["EMMA", "MANSFIELD PARK", "NORTHANGER ABBEY", "Persuasion", "PRIDE AND PREJUDICE", "SENSE AND SENSIBILITY"]
docs, novel, buf = [], None, []
def flush():
    if novel and (novel == "Persuasion") == a.held_out and "".join(buf).strip(): docs.append("".join(buf))
    buf.clear()
for line in open(a.src, encoding="utf-8"):
    t = line.rstrip(" \r\n")
    if t in TITLES: flush(); novel = t
    elif t.startswith(("CHAPTER ", "Chapter ")): flush()
    buf.append(line)
flush()
CONS, VOW = "bcdfghklmnprstvz", "aeiou"
rng0 = random.Random(12345)
POOL = sorted({"".join(rng0.choice(CONS).upper() + rng0.choice(VOW) + rng0.choice(CONS) + rng0.choice(VOW) + rng0.choice(CONS)) for _ in range(300)})
n_plants = n_bytes = 0
def recall(s):
    return "[" + s[1:-1] + "]" if a.marked else s
if a.held_out:
    docs, a.copies = ["".join(docs) * a.repeat], 1
with open(a.out, "w", encoding="utf-8") as f:
    if a.held_out:
        for _ in range(9): f.write(json.dumps({"text": "."}) + "\n")
    for c in range(a.copies):
        rng = random.Random(a.seed * 1000 + c)
        for d in docs:
            out, pos, pending = [], 0, []          # pending: (due offset, text)
            nxt = rng.expovariate(1 / every)
            while a.no_prose and pos < len(d):
                if pending and pos >= pending[0][0]:
                    s = recall(pending.pop(0)[1])
                else:
                    s = "<%s %s>" % (rng.choice(POOL), "%04d" % rng.randrange(10000))
                    pending.append((pos + len(s) + 1 + rng.randint(a.min_gap, a.T - 48), s)); pending.sort(); n_plants += 1
                out.append(s + " "); pos += len(s) + 1
            for w in ([] if a.no_prose else re.split(r"(\s+)", d)):  # words and the whitespace between them
                while not w.isspace() and pending and pos >= pending[0][0]:
                    s = recall(pending.pop(0)[1]); out.append(s + " "); pos += len(s) + 1
                if pos >= nxt and not w.isspace():
                    name, num = rng.choice(POOL), "%04d" % rng.randrange(10000)
                    s = "<%s %s>" % (name, num); out.append(s + " "); pos += len(s) + 1
                    gap = rng.randint(a.min_gap, a.T - 48)
                    pending.append((pos + gap, s)); pending.sort(); n_plants += 1
                    nxt = pos + rng.expovariate(1 / every)
                out.append(w); pos += len(w)
            text = "".join(out); n_bytes += len(text.encode())
            f.write(json.dumps({"text": text}) + "\n")
print(f"{len(docs)} chapters x {a.copies} copies, {n_plants} plants, {n_bytes} bytes -> {a.out}")
