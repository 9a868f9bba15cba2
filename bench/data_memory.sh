#!/usr/bin/env bash
# data_memory.sh — does memory grow with corpus size? Tokenizes JSON Lines corpora of growing size
# (Austen paragraphs, numbered so no two documents are equal) with the BPE fixture tokenizer, and
# reads the process's peak resident set, heap and mapped-file pages from /proc (statescope-cli data).
# Usage: bash bench/data_memory.sh [MB ...]   (default: 16 64 256)
set -euo pipefail
cd "$(dirname "$0")/.."
CLI=build/bin/statescope-cli
[ -x "$CLI" ] || { echo "build first: bash tools/build.sh" >&2; exit 1; }
SIZES=("$@")
[ $# -gt 0 ] || SIZES=(16 64 256)
WORK=$(mktemp -d /tmp/statescope-datamem.XXXX)
trap 'rm -rf "$WORK"' EXIT
printf "%8s %10s %10s %9s %10s %9s %9s %9s\n" "MB" "documents" "tokens" "seconds" "MB/s" "peakMiB" "heapMiB" "fileMiB"
for mb in "${SIZES[@]}"; do
  python3 - "$mb" "$WORK/c$mb.jsonl" <<'PY'
import json, sys
mb, out = int(sys.argv[1]), sys.argv[2]
text = open("data/corpus/austen-novels.txt", encoding="utf-8").read()
paras = [p for p in text.split("\n\n") if len(p) > 200]
with open(out, "w", encoding="utf-8") as f:
    n, size, i = 0, 0, 0
    while size < mb * 1_000_000:
        doc = f"Document {n}.\n\n" + "\n\n".join(paras[(i + k) % len(paras)] for k in range(8))
        line = json.dumps({"text": doc}) + "\n"
        f.write(line); size += len(line.encode()); n += 1; i += 8
PY
  out=$("$CLI" data --data "$WORK/c$mb.jsonl" --tokenizer tests/golden/tokenizer --cache "$WORK/cache" 2>/dev/null)
  docs=$(echo "$out" | awk '/train:/{t=$2} /validation:/{v=$2} END{print t+v}')
  toks=$(echo "$out" | awk '/train:/{t=$4} /validation:/{v=$4} END{print t+v}')
  secs=$(echo "$out" | sed -n 's/.*prepared in \([0-9.]*\) s.*/\1/p')
  mem=$(echo "$out" | sed -n 's/.*peak resident \([0-9]*\) MiB, heap \([0-9]*\) MiB, mapped file pages \([0-9]*\) MiB.*/\1 \2 \3/p')
  read -r peak heap file <<<"$mem"
  bytes=$(stat -c %s "$WORK/c$mb.jsonl")
  awk -v b="$bytes" -v d="$docs" -v t="$toks" -v s="$secs" -v p="$peak" -v h="$heap" -v f="$file" \
    'BEGIN{printf "%8.1f %10s %10s %9s %10.2f %9s %9s %9s\n", b/1e6, d, t, s, b/1e6/s, p, h, f}'
  rm -f "$WORK/c$mb.jsonl"
  rm -rf "$WORK/cache"
done
