#!/usr/bin/env bash
# eval_once.sh — the demo's evaluation phase with the one yardstick computed once per experiment (the
# default) against every run also scoring its own state-reset reference (eval.own_reference: true,
# the work each run did before), in ROUNDS paired rounds (order alternating), one run at a time
# (--jobs 1, --threads 1) so each run's seconds_eval is its own. Prints per round the summed
# seconds_eval of the six runs on each side, the ratio, and the whole demo's wall time with --jobs 2.
# Usage: ROUNDS=3 bash bench/eval_once.sh
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
rounds="${ROUNDS:-3}"
bash "$root/tools/build.sh" >/dev/null
cli="$root/build/bin/statescope-cli"; py="$root/.venv/bin/python"
out="$(mktemp -d)"; trap 'rm -rf "$out"' EXIT
"$py" - "$root/data/experiments/demo.json" "$out/own.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1])); s["eval"]["own_reference"] = True; json.dump(s, open(sys.argv[2], "w"))
PY
cpu="$(lscpu | sed -n "s/^Model name: *//p" | head -1)"
echo "# $(date -u +%FT%TZ) $(nproc) cores ($cpu), demo.json, --threads 1 --jobs 1, $rounds rounds"
evals() { "$py" -c "import h5py,sys; f=h5py.File(sys.argv[1]); print(sum(float(f[r].attrs['seconds_eval']) for r in f))" "$1"; }
wall() { local s e; s=$(date +%s.%N); "$@" >/dev/null 2>&1; e=$(date +%s.%N); "$py" -c "print(round($e - $s, 2))"; }
for ((r = 1; r <= rounds; r++)); do
  once() { "$cli" --threads 1 run "$root/data/experiments/demo.json" -o "$out/once.h5" --overwrite --jobs 1 >/dev/null 2>&1; }
  own() { "$cli" --threads 1 run "$out/own.json" -o "$out/own.h5" --overwrite --jobs 1 >/dev/null 2>&1; }
  if ((r % 2)); then once; own; else own; once; fi
  a=$(evals "$out/once.h5"); b=$(evals "$out/own.h5")
  d=$(wall "$cli" --threads 1 run "$root/data/experiments/demo.json" -o "$out/d.h5" --overwrite --jobs 2)
  "$py" -c "print(f'round $r  eval phase: once {$a:.2f} s, own reference per run {$b:.2f} s, ratio {$b/$a:.2f}x;  whole demo --jobs 2: $d s')"
done
