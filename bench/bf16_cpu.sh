#!/usr/bin/env bash
# bf16_cpu.sh — issue 55: the CPU bf16 path (core/model/dense.h) against fp32, measured in the same
# run, paired rounds with the order alternating (this machine's speed drifts), one ratio per round.
# Usage: [THREADS="1 2"] [ROUNDS=2] [DEMO=1] bash bench/bf16_cpu.sh [WORKDIR]   (WORKDIR: /tmp/m130)
#   1. bench_forward, the 130m shape (batch 1 x 512, random init, loop scan): forward and training-step
#      (forward + backward) tokens/s, BENCH_PRECISION=bf16 vs fp32.
#   2. `statescope-cli eval` on tools/check_layouts_130m.py's random 130m checkpoint (BPE fixture
#      tokenizer), 1,024 positions, segment 512, the full pass only (--no-reference --no-state-norms):
#      the CLI's positions/s, --precision bf16 vs fp32.
#   3. DEMO=1: the demo (data/experiments/demo.json) wall time, --jobs 1, bf16 vs fp32.
# First line: the CPU, its bf16 units as statescope detects them, one core's sgemm rate.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
CLI=$root/build/bin/statescope-cli; BENCH=$root/build/bin/bench_forward
WORK=${1:-/tmp/m130}
read -ra threads_list <<< "${THREADS:-1 2}"; rounds=${ROUNDS:-2}; demo=${DEMO:-1}
[ -x "$BENCH" ] && [ -x "$CLI" ] || { echo "build first (tools/build.sh)" >&2; exit 1; }
[ -f "$WORK/ssm/pytorch_model.bin" ] || .venv/bin/python tools/check_layouts_130m.py "$WORK" >&2
cp tests/golden/tokenizer/tokenizer.json "$WORK/ssm/"
export STATESCOPE_CACHE=$WORK/cache
"$CLI" data --model "$WORK/ssm" --data embedded >/dev/null
cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"
isa="$("$CLI" --precision bf16 info --model embedded 2>/dev/null | sed -n "s/^ *compute: *//p" | head -1)"
echo "# $(date -u +%FT%TZ) $(nproc) cores ($cpu); bf16 compute here: ${isa:-?}; $rounds rounds per pair"
ratio() { python3 -c "import sys; a, b = float(sys.argv[1]), float(sys.argv[2]); print(f'{b / a:.2f}x')" "$1" "$2"; }
field() { python3 -c "import json, sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
for t in "${threads_list[@]}"; do
  for ((r = 1; r <= rounds; r++)); do
    one() { BENCH_PRECISION=$1 "$BENCH" bench/shapes.json 130m "$t" 3 fused; }
    if ((r % 2)); then a=$(one fp32); b=$(one bf16); else b=$(one bf16); a=$(one fp32); fi
    printf '130m bench_forward, %s thread(s), round %d: forward fp32 %.0f / bf16 %.0f tok/s = %s; training step fp32 %.0f / bf16 %.0f tok/s = %s; sgemm %.0f GFLOP/s\n' \
      "$t" "$r" "$(field "$a" fwd_tok_s)" "$(field "$b" fwd_tok_s)" "$(ratio "$(field "$a" fwd_tok_s)" "$(field "$b" fwd_tok_s)")" \
      "$(field "$a" fwdbwd_tok_s)" "$(field "$b" fwdbwd_tok_s)" "$(ratio "$(field "$a" fwdbwd_tok_s)" "$(field "$b" fwdbwd_tok_s)")" \
      "$(python3 -c "print($(field "$a" sgemm_flop_s) / 1e9)")"
  done
  for ((r = 1; r <= rounds; r++)); do
    ev() {
      "$CLI" --threads "$t" --precision "$1" eval --model "$WORK/ssm" --data embedded --T 2048 --length 1024 \
        --sequences 1 --batch 1 --segment 512 --no-reference --no-state-norms -o "$WORK/bf16_eval_$1.h5" --overwrite 2>/dev/null |
        tail -n 1 | grep -o '[0-9.]* positions/s' | cut -d' ' -f1
    }
    if ((r % 2)); then a=$(ev fp32); b=$(ev bf16); else b=$(ev bf16); a=$(ev fp32); fi
    echo "130m eval (1,024 positions, full pass), $t thread(s), round $r: fp32 $a / bf16 $b positions/s = $(ratio "$a" "$b")"
  done
done
# Accuracy at the 130m shape, random weights only (nothing trained at this size is on the machine):
# the eval files of the last round (the checkpoint, transformers' init: chaotic, rounding its weights
# to bf16 alone moves its logits by units; bench/bf16_sensitivity.py measures that in transformers) and
# the logits of one 512 forward of bench_forward's model (statescope's own init).
for p in fp32 bf16; do BENCH_PRECISION=$p BENCH_FORWARD_ONLY=1 BENCH_LOGITS_OUT="$WORK/bf16_logits_$p.f32" "$BENCH" bench/shapes.json 130m 1 0 fused >/dev/null; done
.venv/bin/python - "$WORK" <<'PY'
import math, sys
import h5py, numpy as np
w = sys.argv[1]
a, b = (h5py.File(f"{w}/bf16_eval_{p}.h5")["eval/ppl/nll"][:] for p in ("fp32", "bf16"))
la, lb = (np.fromfile(f"{w}/bf16_logits_{p}.f32", dtype=np.float32) for p in ("fp32", "bf16"))
d = np.abs(a - b) / math.log(2)
print(f"130m accuracy: the random checkpoint's loss per position over {len(a)} positions differs by {d.mean():.4f} "
      f"bits/token on average (max {d.max():.4f}); statescope-init 130m, logits of 512 positions: max |diff| "
      f"{np.abs(la - lb).max():.4f} (max |logit| {np.abs(la).max():.2f})")
PY
if [ "$demo" = 1 ]; then
  for ((r = 1; r <= rounds; r++)); do
    wall() {
      local s e; s=$(date +%s.%N)
      "$CLI" --threads 1 --precision "$1" run data/experiments/demo.json -o "$WORK/bf16_demo_$1.h5" --overwrite --jobs 1 >/dev/null 2>&1
      e=$(date +%s.%N); python3 -c "print(round($e - $s, 1))"
    }
    if ((r % 2)); then a=$(wall fp32); b=$(wall bf16); else b=$(wall bf16); a=$(wall fp32); fi
    echo "demo wall time, 1 thread, --jobs 1, round $r: fp32 $a s / bf16 $b s = $(ratio "$b" "$a") faster"
  done
fi
