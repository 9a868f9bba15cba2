#!/usr/bin/env bash
# run_forward.sh — statescope vs transformers Mamba-2 on CPU, same torch, same threads, same run.
# Usage: bash bench/run_forward.sh [THREADS] [ITERS] [SHAPES...]   (default shapes: tiny 130m; the tiny
# shape runs at least 20 iterations: a step takes ~30 ms, and best-of-3 of it swings with the machine)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
threads="${1:-1}"; iters="${2:-3}"
STATESCOPE_DEV=1 bash "$root/tools/build.sh" >/dev/null
py="$root/.venv/bin/python"
shapes="$root/bench/shapes.json"
echo "# $(date -u +%FT%TZ) $(nproc) cores, threads=$threads, iters=$iters (best of), $("$py" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)')"
printf "%-6s %-16s %14s %14s\n" shape impl "fwd tok/s" "fwd+bwd tok/s"
shift $(( $# > 2 ? 2 : $# ))
if [ $# -gt 0 ]; then shapes_list=("$@"); else shapes_list=(tiny 130m); fi
for shape in "${shapes_list[@]}"; do
  n="$iters"; [ "$shape" = tiny ] && [ "$n" -lt 20 ] && n=20
  # statescope with ATen's chunked scan and with the CPU loop scan (the CPU default), then transformers
  aten=$("$root/build/bin/bench_forward" "$shapes" "$shape" "$threads" "$n" aten)
  loops=$("$root/build/bin/bench_forward" "$shapes" "$shape" "$threads" "$n" fused)
  ref=$(HF_HUB_OFFLINE=1 "$py" "$root/bench/hf_forward.py" "$shapes" "$shape" "$threads" "$n" 2>/dev/null)
  "$py" - "$aten" "$loops" "$ref" <<'PY'
import json, sys
a, l, b = (json.loads(x) for x in sys.argv[1:4])
for r in (a, l, b):
    print(f"{r['shape']:<6} {r['impl']:<16} {r['fwd_tok_s']:14.1f} {r['fwdbwd_tok_s']:14.1f}")
for r in (a, l):
    print(f"{r['shape']:<6} {'ratio ' + r['impl'].split('-')[-1]:<16} {r['fwd_tok_s']/b['fwd_tok_s']:13.2f}x {r['fwdbwd_tok_s']/b['fwdbwd_tok_s']:13.2f}x")
# FLOPs per trained token (bench_forward.cpp's count) times tokens/s, against one sgemm in the same run
f, peak = l['train_flop_per_token'], l['sgemm_flop_s']
print(f"{l['shape']:<6} training {f/1e6:.3f} MFLOP/token; sgemm {peak/1e9:.1f} GFLOP/s; share of it: "
      f"fused {l['fwdbwd_tok_s']*f/peak:.0%}, aten {a['fwdbwd_tok_s']*f/peak:.0%}, transformers {b['fwdbwd_tok_s']*f/peak:.0%}")
PY
done
