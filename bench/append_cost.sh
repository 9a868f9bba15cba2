#!/usr/bin/env bash
# append_cost.sh — what the output rule costs an --append (docs/reliability.md, "Outputs"): the run is
# written into a copy of the experiment file, renamed over it when the run finished. Measured on a
# file of SIZE_MB (default 100) megabytes, in paired rounds on this machine: the same small `eval`
# appended to that file, and written to a new file; the difference is the copy (and the rename).
#   bash bench/append_cost.sh [ROUNDS] [SIZE_MB]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="${STATESCOPE_CLI:-$root/build/bin/statescope-cli}"
py="$root/.venv/bin/python"
rounds="${1:-5}" size_mb="${2:-100}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# A real experiment file of the size asked: one eval run, then a dataset of incompressible noise in it.
"$cli" eval --model embedded --data embedded --length 256 --sequences 2 -o "$work/base.h5" --run first >/dev/null
"$py" - "$work/base.h5" "$size_mb" <<'PY'
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "a") as f:
    f["first"].create_dataset("padding", data=np.random.default_rng(0).random(int(sys.argv[2]) * 2**20 // 8))
PY
echo "file: $(du -m "$work/base.h5" | cut -f1) MB; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); $(nproc) cores"
small=(eval --model embedded --data embedded --length 256 --sequences 2 --run second)
t() { local s e; s=$(date +%s.%N); "$@" >/dev/null; e=$(date +%s.%N); echo "$e - $s" | bc; }
printf "%6s %12s %12s %12s\n" round "new file s" "append s" "difference s"
diffs=()
for r in $(seq 1 "$rounds"); do
  cp "$work/base.h5" "$work/target.h5"
  rm -f "$work/new.h5"
  if (( r % 2 )); then
    a=$(t "$cli" "${small[@]}" -o "$work/new.h5"); b=$(t "$cli" "${small[@]}" -o "$work/target.h5" --append)
  else
    b=$(t "$cli" "${small[@]}" -o "$work/target.h5" --append); a=$(t "$cli" "${small[@]}" -o "$work/new.h5")
  fi
  d=$(echo "$b - $a" | bc)
  diffs+=("$d")
  printf "%6d %12.3f %12.3f %12.3f\n" "$r" "$a" "$b" "$d"
done
printf "%s\n" "${diffs[@]}" | sort -g | awk '{v[NR]=$1} END {printf "append cost on the file: median %.3f s (min %.3f, max %.3f)\n", v[int((NR+1)/2)], v[1], v[NR]}'
