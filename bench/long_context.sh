#!/usr/bin/env bash
# long_context.sh — evaluation of the Mamba-2 130m shape far past T on the CPU: positions/s and peak
# resident memory at each length, batch 1, one sequence, the state carried between segments.
# Usage: [THREADS=2] [PRECISION=fp32|bf16] [LENGTHS="32768 262144"] [SEGMENT=512] [MODES="plain norms"] bash bench/long_context.sh [WORKDIR]
#
# The model is tools/check_layouts_130m.py's random 130m checkpoint (mamba_ssm layout, seed 0; made
# once in WORKDIR, default /tmp/m130, about 2 minutes) with the BPE fixture tokenizer copied in.
# The text: a JSON Lines file of two documents, the second the whole embedded corpus (4 MB of Austen,
# about 1.4M BPE tokens): a source with fewer than 10 documents validates on its last one, so one
# sequence of 256k tokens fits. Tokenized once (`data`) before anything is timed.
# Modes: plain = `eval --no-reference --no-state-norms` (the forward, the loss per position);
#        norms = `eval --no-reference` (adds the per-position state norms per layer and head, the one
#        table that grows with the length: 8 x layers x (heads + 1) bytes per position).
# The state-reset reference (the excess) doubles the work at any length and is left out here.
# Each line: the CLI's own "evaluated ...; peak resident memory ... MiB; ... positions/s" line (getrusage).
set -euo pipefail
cd "$(dirname "$0")/.."
CLI=$PWD/build/bin/statescope-cli
WORK=${1:-/tmp/m130}
PRECISION=${PRECISION:-fp32}; THREADS=${THREADS:-2}; LENGTHS=${LENGTHS:-"32768 262144"}; SEGMENT=${SEGMENT:-512}; MODES=${MODES:-"plain norms"}
[ -x "$CLI" ] || { echo "$CLI not found: build first (tools/build.sh)" >&2; exit 1; }
[ -f "$WORK/ssm/pytorch_model.bin" ] || .venv/bin/python tools/check_layouts_130m.py "$WORK" >&2
cp tests/golden/tokenizer/tokenizer.json "$WORK/ssm/"
export STATESCOPE_CACHE=$WORK/cache
text="$WORK/long.jsonl"
[ -f "$text" ] || python3 - "$text" <<'PY'
import json, sys
corpus = open("data/corpus/austen-novels.txt", encoding="utf-8").read()
with open(sys.argv[1], "w", encoding="utf-8") as f:
    f.write(json.dumps({"text": "A short first document, for training."}) + "\n")
    f.write(json.dumps({"text": corpus}) + "\n")
PY
"$CLI" data --model "$WORK/ssm" --data "$text" >&2
cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
echo "# $(date -u +%FT%TZ) $(nproc) cores ($cpu), --threads $THREADS --precision $PRECISION, mamba2 130m shape (random, seed 0), batch 1, segment $SEGMENT"
for mode in $MODES; do
  flags="--no-reference"; [ "$mode" = plain ] && flags="$flags --no-state-norms"
  for L in $LENGTHS; do
    out=$("$CLI" --threads "$THREADS" --precision "$PRECISION" eval --model "$WORK/ssm" --data "$text" --T 2048 --length "$L" --sequences 1 \
          --batch 1 --segment "$SEGMENT" $flags -o "$WORK/eval_${mode}_$L.h5" --overwrite 2>/dev/null | tail -n 1)
    echo "$mode L=$L: $out"
  done
done
