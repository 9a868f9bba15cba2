#!/usr/bin/env bash
# natural_failure_eval.sh SEED [T] — the onset curve of one natural-failure training (issue 50):
# every saved snapshot (WORK/snap_s<SEED>/step<K>/, tools/natural_failure.sh) evaluated on
# *Persuasion* (the embedded corpus's validation split, never trained on) to 32T with 32 sequences
# against the one yardstick (the snapshot's own state reset every T/2), with its heads' timescales
# (the decay analysis). One experiment file per snapshot (WORK/eval_s<SEED>/step<K>.h5) and one line
# per snapshot: tokens seen, loss within T, excess at 8T-16T and 16T-32T, norm far/T.
# DATA=heldout evaluates on Persuasion with dependencies planted the same way instead
# (tools/plant_dependencies.py --held-out --seed 99): whether the memory the plants ask for breaks past T.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seed="${1:?usage: natural_failure_eval.sh SEED [T]}"
T="${2:-256}"
work="${WORK:-$root/build/i50}"
cli="${STATESCOPE_CLI:-$root/build/bin/statescope-cli}"
data="embedded"
tag=""
if [ "${DATA:-}" = heldout ]; then
  data="$work/heldout_T$T.jsonl"
  tag="_heldout"
  [ -f "$data" ] || python3 "$root/tools/plant_dependencies.py" "$root/data/corpus/austen-novels.txt" "$data" --T "$T" \
    --held-out --seed 99 || exit 1
fi
mkdir -p "$work/eval_s$seed"
for snap in $(ls -d "$work/snap_s$seed"/step* 2>/dev/null | sort -t p -k 3 -n); do
  k="${snap##*/step}"
  out="$work/eval_s$seed/step$k$tag.h5"
  if [ ! -f "$out" ]; then
    spec="$work/eval_s$seed/step$k$tag.json"
    printf '{"comment": "issue 50 onset: snapshot step %s (seed %s)", "model": "%s", "data": "%s", "T": %s, "seed": 0, "policies": [], "eval": {"length": %s, "sequences": 32}, "analyses": {"decay": {}}}\n' \
      "$k" "$seed" "$snap" "$data" "$T" "$((32 * T))" >"$spec"
    STATESCOPE_THREADS="${STATESCOPE_THREADS:-2}" "$cli" run "$spec" -o "$out" >"$work/eval_s$seed/step$k$tag.log" 2>&1 ||
      { echo "step $k: run failed (log $work/eval_s$seed/step$k$tag.log)"; continue; }
  fi
  echo "== step $k ($((k * 4096)) tokens)"
  "$cli" inspect "$out" 2>&1 | grep -E "^baseline|exc|norm|timescale|decay" | head -12
done
