#!/usr/bin/env bash
# run_forward.sh — statescope vs transformers (Mamba-2, or Mamba-1 for the *-mamba1 shapes) on CPU, same
# torch, same threads, same run.
# Usage: bash bench/run_forward.sh [THREADS] [ITERS] [SHAPES...]   (default shapes: tiny 130m)
#
# This machine's speed drifts by 1.5x within minutes (RESULTS.md), so one statescope number and one
# transformers number taken minutes apart make a noisy ratio. Instead: ROUNDS rounds (default 3),
# each running statescope's CPU path and transformers back to back (order alternating), one ratio
# per round; printed: every round, then the median ratio with its min and max. Each side of a round
# is best-of-ITERS (the tiny shape at least 20: a step takes ~10-30 ms). ATEN=1 also measures
# statescope with ATen's chunked scan (one run per round). The sgemm shares use each round's own
# 1024^3 sgemm at THREADS threads, measured by bench_forward in the same process.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
threads="${1:-1}"; iters="${2:-3}"; rounds="${ROUNDS:-3}"
STATESCOPE_DEV=1 bash "$root/tools/build.sh" >/dev/null
py="$root/.venv/bin/python"
shapes="$root/bench/shapes.json"
cpu="$(lscpu | sed -n 's/^Model name: *//p' | head -1)"; avx512=$(grep -qw avx512f /proc/cpuinfo && echo yes || echo no)
echo "# $(date -u +%FT%TZ) $(nproc) cores ($cpu, AVX-512 $avx512), threads=$threads, best of $iters, $rounds rounds," \
     "$("$py" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)')"
shift $(( $# > 2 ? 2 : $# ))
if [ $# -gt 0 ]; then shapes_list=("$@"); else shapes_list=(tiny 130m); fi
out="$(mktemp)"; trap 'rm -f "$out"' EXIT
for shape in "${shapes_list[@]}"; do
  n="$iters"; [[ "$shape" == tiny* ]] && [ "$n" -lt 20 ] && n=20
  : > "$out"
  for ((r = 1; r <= rounds; r++)); do
    ours() { "$root/build/bin/bench_forward" "$shapes" "$shape" "$threads" "$n" fused; }
    theirs() { HF_HUB_OFFLINE=1 "$py" "$root/bench/hf_forward.py" "$shapes" "$shape" "$threads" "$n" 2>/dev/null; }
    if ((r % 2)); then a=$(ours); b=$(theirs); else b=$(theirs); a=$(ours); fi
    echo "{\"round\": $r, \"ours\": $a, \"theirs\": $b}" >> "$out"
    if [ "${ATEN:-0}" = 1 ]; then
      echo "{\"round\": $r, \"aten\": $("$root/build/bin/bench_forward" "$shapes" "$shape" "$threads" "$n" aten)}" >> "$out"
    fi
  done
  "$py" - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
pairs = [r for r in rows if "ours" in r]
aten = [r["aten"] for r in rows if "aten" in r]
shape = pairs[0]["ours"]["shape"]
print(f"{'shape':<6} {'round':>5} {'impl':<16} {'fwd tok/s':>12} {'fwd+bwd tok/s':>14} {'sgemm GFLOP/s':>14}")
for r in pairs:
    o, t = r["ours"], r["theirs"]
    print(f"{shape:<6} {r['round']:>5} {'statescope':<16} {o['fwd_tok_s']:12.1f} {o['fwdbwd_tok_s']:14.1f} {o['sgemm_flop_s']/1e9:14.1f}")
    print(f"{shape:<6} {r['round']:>5} {'transformers':<16} {t['fwd_tok_s']:12.1f} {t['fwdbwd_tok_s']:14.1f}")
for a in aten:
    print(f"{shape:<6} {'':>5} {'statescope-aten':<16} {a['fwd_tok_s']:12.1f} {a['fwdbwd_tok_s']:14.1f}")
def spread(xs):
    return f"median {statistics.median(xs):.2f}x (min {min(xs):.2f}, max {max(xs):.2f}, {len(xs)} rounds)"
fwd = [r["ours"]["fwd_tok_s"] / r["theirs"]["fwd_tok_s"] for r in pairs]
trn = [r["ours"]["fwdbwd_tok_s"] / r["theirs"]["fwdbwd_tok_s"] for r in pairs]
print(f"{shape:<6} ratio statescope/transformers  forward {spread(fwd)}")
print(f"{shape:<6} ratio statescope/transformers  training {spread(trn)}")
f = pairs[0]["ours"]["train_flop_per_token"]
ours = [r["ours"]["fwdbwd_tok_s"] * f / r["ours"]["sgemm_flop_s"] for r in pairs]
theirs = [r["theirs"]["fwdbwd_tok_s"] * f / r["ours"]["sgemm_flop_s"] for r in pairs]
print(f"{shape:<6} training {f/1e6:.3f} MFLOP/token; share of the round's sgemm (same threads): statescope median "
      f"{statistics.median(ours):.0%} ({min(ours):.0%}-{max(ours):.0%}), transformers {statistics.median(theirs):.0%}")
g = pairs[0]["ours"]["fwd_flop_per_token"]
ours = [r["ours"]["fwd_tok_s"] * g / r["ours"]["sgemm_flop_s"] for r in pairs]
theirs = [r["theirs"]["fwd_tok_s"] * g / r["ours"]["sgemm_flop_s"] for r in pairs]
print(f"{shape:<6} forward {g/1e6:.3f} MFLOP/token; share of the round's sgemm (same threads): statescope median "
      f"{statistics.median(ours):.0%} ({min(ours):.0%}-{max(ours):.0%}), transformers {statistics.median(theirs):.0%}")
PY
done
