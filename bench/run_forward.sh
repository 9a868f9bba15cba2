#!/usr/bin/env bash
# run_forward.sh — statescope vs transformers Mamba-2 on CPU, same torch, same threads, same run.
# Usage: bash bench/run_forward.sh [THREADS] [ITERS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
threads="${1:-1}"; iters="${2:-3}"
STATESCOPE_DEV=1 bash "$root/tools/build.sh" >/dev/null
py="$root/.venv/bin/python"
shapes="$root/bench/shapes.json"
echo "# $(date -u +%FT%TZ) $(nproc) cores, threads=$threads, iters=$iters (best of), $("$py" -c 'import torch, transformers; print("torch", torch.__version__, "transformers", transformers.__version__)')"
printf "%-6s %-12s %14s %14s\n" shape impl "fwd tok/s" "fwd+bwd tok/s"
for shape in tiny 130m; do
  ours=$("$root/build/bin/bench_forward" "$shapes" "$shape" "$threads" "$iters")
  ref=$(HF_HUB_OFFLINE=1 "$py" "$root/bench/hf_forward.py" "$shapes" "$shape" "$threads" "$iters" 2>/dev/null)
  "$py" - "$ours" "$ref" <<'PY'
import json, sys
a, b = json.loads(sys.argv[1]), json.loads(sys.argv[2])
for r in (a, b):
    print(f"{r['shape']:<6} {r['impl']:<12} {r['fwd_tok_s']:14.1f} {r['fwdbwd_tok_s']:14.1f}")
print(f"{a['shape']:<6} {'ratio':<12} {a['fwd_tok_s']/b['fwd_tok_s']:13.2f}x {a['fwdbwd_tok_s']/b['fwdbwd_tok_s']:13.2f}x")
PY
done
