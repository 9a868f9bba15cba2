#!/usr/bin/env bash
# run_compressed.sh — compressed and columnar corpora: memory flat in the file size, and the cost of
# decompressing. Parquet files are written by pyarrow (the venv's) from the same lines, in row groups
# of 4096 documents (.parquet, about 12 MiB of text each, as dataset writers bound them) and as one
# row group (.rg1.parquet, pyarrow's default for fewer than a million rows): the reader holds one row
# group's column, so the second grows with the file by design.
#
# Makes JSON Lines corpora of SMALL and LARGE MiB from the embedded Austen text (repeated, one
# chapter-sized paragraph per line), compresses each with zstd, gzip and xz, and tokenizes every file
# with `statescope-cli data` into a fresh cache (byte tokenizer), in alternating rounds. Prints the
# peak resident memory (GNU time's maximum RSS) per file and the time of each compressed file as a
# ratio to the plain .jsonl of the same size, measured in the same round.
#   bash bench/run_compressed.sh [ROUNDS]     env: SMALL (default 16), LARGE (default 256) MiB
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cli=${STATESCOPE_CLI:-$root/build/bin/statescope-cli}
rounds=${1:-2}
small=${SMALL:-16} large=${LARGE:-256}
work=$(mktemp -d "${TMPDIR:-/tmp}/statescope_compressed_XXXX")
trap 'rm -rf "$work"' EXIT
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)" >&2; exit 1; }

python3 - "$root/data/corpus" "$work" "$small" "$large" <<'EOF'
import json, pathlib, sys
corpus, work = pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2])
paras = [p for f in sorted(corpus.glob("*.txt")) for p in f.read_text().split("\n\n") if p.strip()]
for mib in sys.argv[3:]:
    want, n = int(mib) << 20, 0
    with open(work / f"c{mib}.jsonl", "w") as out:
        while n < want:
            for p in paras:
                line = json.dumps({"text": p}) + "\n"
                out.write(line)
                n += len(line)
                if n >= want:
                    break
EOF
for mib in "$small" "$large"; do
  f="$work/c$mib.jsonl"
  zstd -q -3 -k "$f"; gzip -k -6 "$f"; xz -k -1 -T1 "$f"
  "$root/.venv/bin/python" - "$f" <<'PY'
import json, sys
import pyarrow as pa, pyarrow.parquet as pq
src = sys.argv[1]
t = pa.table({"text": [json.loads(l)["text"] for l in open(src)]})
pq.write_table(t, src + ".parquet", row_group_size=4096)
pq.write_table(t, src + ".rg1.parquet")
PY
done

declare -A rss secs
run() {  # file -> sets rss[file] (KiB, max over rounds) and secs[file] (list)
  local f=$1 cache="$work/cache" log="$work/time.log"
  rm -rf "$cache"
  STATESCOPE_THREADS=1 /usr/bin/time -f "%M %e" -o "$log" "$cli" data --data "$f" --cache "$cache" >/dev/null
  read -r kb s <"$log"
  (( ${rss[$f]:-0} > kb )) || rss[$f]=$kb
  secs[$f]+="$s "
}
for ((r = 1; r <= rounds; r++)); do
  for mib in "$small" "$large"; do
    for ext in "" .zst .gz .xz .parquet .rg1.parquet; do run "$work/c$mib.jsonl$ext"; done
  done
done

median() { tr ' ' '\n' | grep . | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores; $rounds rounds"
printf '%-22s %10s %12s %10s %14s\n' file "size MiB" "peak RSS MiB" "median s" "time / plain"
for mib in "$small" "$large"; do
  plain=$(echo "${secs[$work/c$mib.jsonl]}" | median)
  for ext in "" .zst .gz .xz .parquet .rg1.parquet; do
    f="$work/c$mib.jsonl$ext"
    m=$(echo "${secs[$f]}" | median)
    printf '%-22s %10.1f %12.1f %10.2f %14.2f\n' "c$mib.jsonl$ext" "$(echo "$(stat -c %s "$f") / 1048576" | bc -l)" \
      "$(echo "${rss[$f]} / 1024" | bc -l)" "$m" "$(echo "$m / $plain" | bc -l)"
  done
done
echo "(peak RSS of the whole process; flat in the file size means the LARGE rows match the SMALL ones)"
