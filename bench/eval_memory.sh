#!/usr/bin/env bash
# eval_memory.sh — peak resident memory of streamed evaluation at 4T, 64T and 256T on the embedded
# model (T = 32), with the same segment size. Memory must not grow with the evaluated length.
# Usage: bash bench/eval_memory.sh [SEGMENT]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seg="${1:-128}"
bash "$root/tools/build.sh" >/dev/null
cli="$root/build/bin/statescope-cli"
tmp="$(mktemp -d)"
echo "# $(date -u +%FT%TZ) embedded model, T=32, 32 sequences, segment $seg"
for L in 128 2048 8192; do
  line=$("$cli" eval --model embedded -o "$tmp/e.h5" --overwrite --length "$L" --sequences 32 --segment "$seg" 2>/dev/null | tail -n 1)
  echo "length $L ($((L / 32))T): ${line#*; }"
done
rm -rf "$tmp"
