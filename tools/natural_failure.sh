#!/usr/bin/env bash
# natural_failure.sh SEED MINUTES [T] — the natural-failure recipe of issue 50, trained in the
# background: a default-initialised Mamba-2 (d_model 128, 4 layers, d_state 64, headdim 32) at
# T = 256 bytes on Austen without Persuasion with planted long-range dependencies
# (tools/plant_dependencies.py), 16,000 steps of batch 16 (65.5M tokens). It stops itself after
# MINUTES (SIGTERM: the trainer writes its checkpoint) and continues from the checkpoint when run
# again with the same SEED (in a fresh checkout, from the committed checkpoint); a copy of the model
# is kept at each of the listed steps
# (WORK/snap_s<SEED>/step<K>/) for the onset curves. One thread, niced: it takes what a build leaves.
#
#   bash tools/natural_failure.sh 0 120        # WORK defaults to build/i50
#   WORK=/big/disk bash tools/natural_failure.sh 1 600
#   EVERY=32 bash tools/natural_failure.sh 0 60  # recipe B: a plant about every 32 bytes (default T/2),
#                                                # its own corpus, run and snapshots (tag e32)
#   NO_PROSE=1 bash tools/natural_failure.sh 0 60  # the control: plants alone, no prose (tag np): can
#                                                  # this model learn the recall at all?
#   MARKED=1 NO_PROSE=1 bash tools/natural_failure.sh 0 60  # recipe D: recalls written '[Name dddd]',
#                                                  # marked apart from introductions (tag mk, mknp)
#   D_STATE=16 MARKED=1 NO_PROSE=1 bash tools/natural_failure.sh 0 60  # recipe D with another state size
#                                                  # per head (default 64): same data, its own run (tag +ds16)
set -uo pipefail
# Started with setsid (its own session), the training sits in its own autogroup, where nice alone does not
# make it yield to a build; niced as a group it takes only what the builds leave.
echo 19 > /proc/self/autogroup 2>/dev/null || true
seed="${1:?usage: natural_failure.sh SEED MINUTES [T]}"
minutes="${2:?usage: natural_failure.sh SEED MINUTES [T]}"
T="${3:-256}"
source "$(dirname "${BASH_SOURCE[0]}")/natural_failure_common.sh"
steps=16000
batch=$((4096 / T))  # tokens per step fixed across T (4,096): budgets in tokens match
mkdir -p "$work"
data="$work/planted_T$T$tag.jsonl"
[ -f "$data" ] || python3 "$root/tools/plant_dependencies.py" "$root/data/corpus/austen-novels.txt" "$data" --T "$T" \
  --copies 4 --seed 0 "${plant_flags[@]}" || exit 1
out="$work/p${T}${rtag#T$T}_s$seed"  # the work folder names T itself
# A fresh checkout continues from the committed checkpoint (docs/results/natural_failure/: the
# stopped work folder, its record and checkpoint, about 6 MB) rather than from scratch.
saved="$root/docs/results/natural_failure/p${T}${rtag#T$T}_s$seed"
if [ ! -d "$out.partial" ] && [ ! -d "$out" ] && [ -d "$saved/checkpoint" ]; then
  cp -a "$saved" "$out.partial" && echo "[natural_failure] continuing from $saved"
fi
flags=(--arch mamba2 --d-model 128 --n-layer 4 --d-state "$d_state" --headdim 32 --expand 2 --T "$T" --batch "$batch"
       --steps "$steps" --lr 2e-3 --warmup 200 --min-lr-ratio 0.1 --weight-decay 0.1 --grad-clip 1
       --seed "$seed" --data "$data" --checkpoint-every 500 --resume)
end=$(($(date +%s) + minutes * 60))
for k in 250 500 1000 2000 4000 8000 12000 16000; do
  [ -d "$snaps/step$k" ] && continue
  # A checkpoint already past step k (a fresh checkout continuing the committed one) has no snapshot
  # of step k to take: skip it rather than save a later model under its name.
  done_step=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["step"])' "$out.partial/checkpoint/trainer.json" 2>/dev/null || echo 0)
  ((k < steps && done_step >= k)) && continue
  left=$((end - $(date +%s)))
  ((left > 60)) || break
  stop=()
  ((k < steps)) && stop=(--stop-after "$k")
  STATESCOPE_THREADS=1 timeout -s TERM "$left" nice -n 19 "$cli" pretrain --out "$out" "${flags[@]}" "${stop[@]}" \
    >>"$work/train${rtag}_s$seed.log" 2>&1
  rc=$?
  ((rc == 0)) || { echo "[natural_failure] pretrain ended with $rc before step $k (log: $work/train${rtag}_s$seed.log)"; break; }
  src="$out.partial/checkpoint"
  [ -d "$src" ] || src="$out"
  mkdir -p "$snaps/step$k"
  cp "$src/model.safetensors" "$src/config.json" "$snaps/step$k/"
  printf '{"T": %d, "seed": %d, "command": "%sbash tools/natural_failure.sh %d MINUTES %d", "notes": "step %d of %d (%d tokens) of the natural-failure recipe%s, issue 50: pretrained by statescope from scratch, zero initial state, default initialisation"}\n' \
    "$T" "$seed" "${D_STATE:+D_STATE=$d_state }${every:+EVERY=$every }${marked:+MARKED=1 }${noprose:+NO_PROSE=1 }" "$seed" "$T" "$k" "$steps" "$((k * 4096))" "${every:+ (a plant every $every bytes)}${marked:+ (marked recalls)}${noprose:+ (plants alone, no prose)}${D_STATE:+ (d_state $d_state)}" \
    >"$snaps/step$k/statescope.json"
  echo "[natural_failure] seed $seed: step $k saved"
done
