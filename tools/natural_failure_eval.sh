#!/usr/bin/env bash
# natural_failure_eval.sh SEED [T] — the onset curve of one natural-failure training (issue 50):
# every saved snapshot (WORK/snap[_<tag>]_s<SEED>/step<K>/, tools/natural_failure.sh, with the same
# EVERY / MARKED / NO_PROSE / D_STATE as the training) evaluated to 32T with SEQUENCES sequences
# (default 32) against the one yardstick (the snapshot's own state reset every T/2), with its heads'
# timescales (the decay analysis). One experiment file per snapshot
# (WORK/eval[_<tag>]_s<SEED>/step<K>[_heldout].h5) and one line per snapshot.
# Data: *Persuasion* (the embedded corpus's validation split, never trained on); DATA=heldout:
# Persuasion planted the way the training's stream was (tools/plant_dependencies.py --held-out
# --seed 99 and the training's flags; repeated for T > 256 so that 32 sequences of 32T fit).
#
#   MARKED=1 NO_PROSE=1 DATA=heldout bash tools/natural_failure_eval.sh 0 512
set -uo pipefail
seed="${1:?usage: natural_failure_eval.sh SEED [T]}"
T="${2:-256}"
source "$(dirname "${BASH_SOURCE[0]}")/natural_failure_common.sh"
sequences="${SEQUENCES:-32}"
length=$((32 * T))
data="embedded"
suffix=""
if [ "${DATA:-}" = heldout ]; then
  data="$work/heldout_T$T$tag.jsonl"
  suffix="_heldout"
  repeat=$(((length * sequences + 466855) / 466856))  # Persuasion planted is 466,856 bytes
  [ -f "$data" ] || python3 "$root/tools/plant_dependencies.py" "$root/data/corpus/austen-novels.txt" "$data" --T "$T" \
    --held-out --seed 99 "${plant_flags[@]}" $( ((repeat > 1)) && echo --repeat "$repeat") || exit 1
fi
[ "$sequences" = 32 ] || suffix="${suffix}_n$sequences"
evals="$work/eval${rtag:+_$rtag}_s$seed"
mkdir -p "$evals"
for k in $(ls "$snaps" 2>/dev/null | sed -n 's/^step//p' | sort -n); do  # in training order
  snap="$snaps/step$k"
  out="$evals/step$k$suffix.h5"
  if [ ! -f "$out" ]; then
    spec="$evals/step$k$suffix.json"
    printf '{"comment": "issue 50 onset: snapshot step %s (seed %s, T %s%s)", "model": "%s", "data": "%s", "T": %s, "seed": 0, "policies": [], "eval": {"length": %s, "sequences": %s}, "analyses": {"decay": {}}}\n' \
      "$k" "$seed" "$T" "${rtag:+, $rtag}" "$snap" "$data" "$T" "$length" "$sequences" >"$spec"
    STATESCOPE_THREADS="${STATESCOPE_THREADS:-2}" "$cli" run "$spec" -o "$out" >"$evals/step$k$suffix.log" 2>&1 ||
      { echo "step $k: run failed (log $evals/step$k$suffix.log)"; continue; }
  fi
  echo "== step $k ($((k * 4096)) tokens)"
  "$cli" inspect "$out" 2>&1 | grep -E "^baseline|exc|norm|timescale|decay" | head -12
done
