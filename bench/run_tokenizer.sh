#!/usr/bin/env bash
# run_tokenizer.sh — BPE encoding speed (one core) of statescope vs the `tokenizers` library on the
# golden 1.2 MB text, measured in the same run. Target: >= 5 MB/s (issue 7).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
dir="$root/tests/golden/tokenizer"
ours=$(taskset -c 0 "$root/build/bin/bench_tokenizer" "$dir/tokenizer.json" "$dir/text.txt" 3)
ref=$(taskset -c 0 "$root/.venv/bin/python" "$root/bench/tokenizer_hf.py" "$dir/tokenizer.json" "$dir/text.txt" 3)
echo "$ours"
echo "$ref"
python3 - "$ours" "$ref" <<'PY'
import re, sys
o = float(re.search(r"cold ([\d.]+)", sys.argv[1]).group(1)); r = float(re.search(r"([\d.]+) MB/s", sys.argv[2]).group(1))
print(f"ratio statescope (cold) / tokenizers: {o / r:.2f}x")
PY
