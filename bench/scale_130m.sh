#!/usr/bin/env bash
# scale_130m.sh — the 130m shape on the 2-core CPU: per-position evaluation to 16k tokens and
# post-training at T = 512, with wall time and peak resident memory (getrusage of the child).
# The model is tools/check_layouts_130m.py's random 130m checkpoint (mamba_ssm layout, seed 0) with
# the BPE fixture tokenizer (tests/golden/tokenizer, 4003 ids < vocab 50288) copied in, so the data
# go through the BPE path. Usage: bash bench/scale_130m.sh [WORKDIR]   (about 15 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
CLI=$PWD/build/bin/statescope-cli
WORK=${1:-/tmp/m130}
[ -f "$WORK/ssm/pytorch_model.bin" ] || .venv/bin/python tools/check_layouts_130m.py "$WORK"
cp tests/golden/tokenizer/tokenizer.json "$WORK/ssm/"
export STATESCOPE_CACHE=$WORK/cache
measure() {  # measure LABEL CMD...: wall seconds and peak RSS of the command
  python3 - "$@" <<'PY'
import resource, subprocess, sys, time
label, cmd = sys.argv[1], sys.argv[2:]
t = time.time()
r = subprocess.run(cmd)
wall = time.time() - t
rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
print(f"RESULT {label}: exit {r.returncode}, {wall:.0f} s, peak RSS {rss:.0f} MiB", flush=True)
sys.exit(r.returncode)
PY
}
THREADS=${STATESCOPE_THREADS:-2}
"$CLI" --threads "$THREADS" data --model "$WORK/ssm" --data embedded
measure "eval 16k tokens (1 sequence, T 2048, segment 512)" \
  "$CLI" --threads "$THREADS" eval --model "$WORK/ssm" --data embedded --T 2048 --length 16384 --sequences 1 \
  --segment 512 -o "$WORK/eval16k.h5" --overwrite
"$CLI" inspect "$WORK/eval16k.h5" | head -30
measure "posttrain T 512 batch 1, 4 steps, state passing" \
  "$CLI" --threads "$THREADS" posttrain --model "$WORK/ssm" --data embedded --T 512 --batch 1 --steps 4 --warmup 1 \
  --lr 1e-4 --policy passing --out "$WORK/post512"
