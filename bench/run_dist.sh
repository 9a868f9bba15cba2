#!/usr/bin/env bash
# run_dist.sh — data-parallel post-training throughput on this machine: 1 process vs --nproc 2
# (Gloo over loopback), each process one intra-op thread, in paired rounds (order alternating; this
# machine's speed drifts), for the embedded model's shape and the 130m shape (d_model 768, 24
# layers, a model pretrained from scratch for 1 step so only the shape matters). Prints tokens/s,
# the ratio per round and rank 0's time inside collectives.
# Usage: bash bench/run_dist.sh [ROUNDS]   (default 3)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="$root/build/bin/statescope-cli"
rounds="${1:-3}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
export STATESCOPE_THREADS=1
"$cli" pretrain --out "$work/m130" --d-model 768 --n-layer 24 --d-state 128 --headdim 64 --chunk-size 64 \
  --T 64 --steps 1 --batch 2 >/dev/null 2>&1
tok() { grep -o '[0-9]* tok/s' | tail -1 | cut -d' ' -f1; }
measure() {  # shape nproc -> "tokens/s comm%"
  local model=$1 n=$2 T=$3 batch=$4 steps=$5 out
  rm -rf "$work/out"
  out="$("$cli" --nproc "$n" posttrain --model "$model" --out "$work/out" --T "$T" --batch "$batch" --steps "$steps" \
         --warmup 1 --policy passing 2>&1)"
  local t; t="$(echo "$out" | tok)"
  local c; c="$(echo "$out" | sed -n 's/.*collectives (\([0-9]*\)%).*/\1/p')"
  echo "$t ${c:-0}"
}
for shape in "embedded embedded 32 16 40" "130m $work/m130 256 4 3"; do
  set -- $shape
  name=$1 model=$2 T=$3 batch=$4 steps=$5
  echo "== $name: batch $batch x T $T, $steps steps of post-training (state passing)"
  for r in $(seq "$rounds"); do
    if ((r % 2)); then a=$(measure "$model" 1 "$T" "$batch" "$steps"); b=$(measure "$model" 2 "$T" "$batch" "$steps")
    else b=$(measure "$model" 2 "$T" "$batch" "$steps"); a=$(measure "$model" 1 "$T" "$batch" "$steps"); fi
    set -- $a; one=$1; set -- $b; two=$1 comm=$2
    echo "round $r: 1 process $one tok/s, 2 processes $two tok/s, ratio $(echo "scale=2; $two / $one" | bc)x, rank 0 in collectives $comm%"
  done
done
