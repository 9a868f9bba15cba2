#!/usr/bin/env bash
# reproduce.sh — regenerates the generated tables of docs/analyses-results.md: runs each recipe's
# experiments, writes its table to docs/results/NAME.txt (headed by how, where and how long it was
# made), then puts every table into the page (tools/doc_tables.py write). The test
# Docs.TablesAreTheLastRunsOutput checks that the page quotes these files and no hand-copied number.
#
#   bash tools/reproduce.sh              every recipe (wall times: docs/analyses-results.md)
#   bash tools/reproduce.sh NAME ...     those recipes only;  --list: the recipes
# Env: STATESCOPE_CLI (default build/bin/statescope-cli), OUT (the experiment files; default
# build/reproduce), JOBS (runs at once inside each experiment, one thread each; default 2),
# TABLES_ONLY=1 (remake the tables from the experiment files a previous run left in OUT, e.g. after
# a change to a table's format; the header keeps that run's date and wall time).
set -euo pipefail
# STATESCOPE_ROOT: the repository, when the script runs from a copy (bash <(cat tools/reproduce.sh):
# bash reads a script file as it goes, so editing it under a running one would break that run).
root=${STATESCOPE_ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
cli=$(realpath "${STATESCOPE_CLI:-$root/build/bin/statescope-cli}")
out=${OUT:-$root/build/reproduce}
mkdir -p "$out" "$root/docs/results"
out=$(cd "$out" && pwd)
jobs=${JOBS:-2}
export STATESCOPE_THREADS=1

# --- recipes: `step` runs statescope-cli in $out, `table` adds its output to the recipe's table ----

# Issue 29 point 1: does a failure past T arise by itself with Mamba-2's default initialisation?
recipe_failure_sweep() {
  fresh failure_sweep_models
  step run data/experiments/failure_sweep.json -o failure_sweep.h5 --jobs "$jobs" --yes --overwrite
  table inspect failure_sweep.h5 --table sweep
}

# The same at T = 16, the smallest and largest state, trained 4x longer.
recipe_failure_long() {
  fresh failure_sweep_long_models
  spec_table failure_sweep_long sweep
}

# The demo's six runs, seed 0: the one yardstick, and each run's own state-reset reference beside it.
recipe_demo() {
  step run data/experiments/demo_own_reference.json -o demo.h5 --jobs "$jobs" --overwrite
  table inspect demo.h5 --table runs
}

# The demo's policies over 3 seeds and 3 post-training lengths.
recipe_sweep() {
  spec_table sweep sweep
}

# Issue 29 point 5: the detector over 3 seeds, each run also against one envelope for every run.
recipe_unexplored() {
  step run data/experiments/unexplored_seeds.json -o unexplored_seeds.h5 --jobs "$jobs" --overwrite
  pytable tools/unexplored_table.py unexplored_seeds.h5
}

# Issue 29 point 3: bAbI with the model as loaded and all five policies, 5 seeds, 100 questions.
recipe_babi() {
  step run data/experiments/babi_controls.json -o babi_controls.h5 --jobs "$jobs" --overwrite
  pytable tools/task_tables.py babi=babi_controls.h5
}

# Issue 29 point 4: copying from a zero, a passed and three foreign states, 3 seeds.
recipe_copying() {
  for s in 0 1 2; do step run data/experiments/copying.json -o "copying_s$s.h5" --seed "$s" --jobs "$jobs" --overwrite; done
  pytable tools/task_tables.py copying=copying_s0.h5,copying_s1.h5,copying_s2.h5
}

# Issue 29 point 3: Effective Remembrance with the zero-state control, 3 seeds.
recipe_effrem() {
  step run data/experiments/effrem_controls.json -o effrem_controls.h5 --jobs "$jobs" --overwrite
  pytable tools/effrem_table.py embedded=effrem_controls.h5
}

# Issue 29 point 3: passkey with the model as loaded and all five policies, 5 seeds, 200 prompts a cell.
recipe_passkey() {
  step run data/experiments/passkey_controls.json -o passkey_controls.h5 --jobs "$jobs" --overwrite
  pytable tools/task_tables.py passkey=passkey_controls.h5
}

# Which heads' states grow past T: the sweep's runs at 200 steps, per (layer, head), 3 seeds.
recipe_heads() {
  step run data/experiments/sweep.json -o heads_sweep.h5 --jobs "$jobs" --overwrite
  pytable tools/head_table.py heads_sweep.h5 posttrain.steps=200
}

# Random-noise initial states at five sigmas, 3 seeds, state passing beside them.
recipe_sigma() {
  spec_table sigma_sweep sweep
  table states --model embedded -o states.h5 --positions 31 255 2047 --overwrite  # the scale of the states
}

# Fitted noise fitted at T (the paper's), at 256 and at 2048 tokens, 3 seeds.
recipe_fitted_length() {
  spec_table fitted_length sweep
}

# Mamba-1 beside Mamba-2: the two embedded models, the demo on the Mamba-1, and both architectures
# trained alike from scratch (one model per seed).
recipe_architectures() {
  spec_table architectures sweep
  spec_table demo_mamba1 sweep
  spec_table free_mamba2 sweep
  spec_table free_mamba1 sweep
}

# GLA free and with a provoked failure (fla's clamp_min: every memory longer than T), one model per seed.
recipe_gla_provoked() {
  spec_table free_gla sweep
  spec_table provoked_gla sweep
}

# Copying as post-training: 3000 zero-state steps, then 500 with the policy, 3 seeds.
recipe_copying_posttrain() {
  for s in 0 1 2; do step run data/experiments/copying_posttrain.json -o "copying_pt_s$s.h5" --seed "$s" --jobs "$jobs" --overwrite; done
  pytable tools/task_tables.py copying_pt=copying_pt_s0.h5,copying_pt_s1.h5,copying_pt_s2.h5
}

# Effective Remembrance of two models pretrained from scratch (default and slow decays), one per
# seed, with the zero control and state passing; their language-model numbers beside.
recipe_effrem_models() {
  local m
  for m in longmem slowmem; do
    step run "data/experiments/effrem_$m.json" -o "effrem_$m.h5" --jobs "$jobs" --overwrite
    pytable tools/effrem_table.py "$m=effrem_$m.h5"
    table inspect "effrem_$m.h5" --table sweep
  done
}

# Training-free interventions beside the zero control and state passing, 3 seeds; how far back heads look.
recipe_interventions() {
  spec_table interventions sweep
  pytable tools/attention_table.py interventions.h5
}

# Issue 53: tiny hybrids trained by statescope beside their pure twins (the attention layer replaced by
# the family's recurrent layer), one model per seed, the zero control and state passing.
recipe_hybrids() {
  spec_table hybrid_nemotron_h sweep
  spec_table hybrid_nemotron_h_twin sweep
  spec_table hybrid_qwen3_5 sweep
  spec_table hybrid_qwen3_5_twin sweep
  pytable tools/hybrid_table.py nemotron_h=hybrid_nemotron_h.h5 qwen3_5=hybrid_qwen3_5.h5
}

recipes=(failure_sweep failure_long demo sweep unexplored effrem copying babi passkey sigma fitted_length
         architectures gla_provoked copying_posttrain effrem_models heads interventions hybrids)

# --- machinery -------------------------------------------------------------------------------------
shown() {  # a command as the page shows it: statescope-cli and paths inside the repository
  local s="statescope-cli" a
  for a in "$@"; do s+=" ${a#"$root"/}"; done
  printf '%s' "$s"
}
fresh() { [[ -n $skip_steps ]] || rm -rf "$@"; }  # an output folder the experiment makes anew
step() {
  commands+=("# $(shown "$@")")
  [[ -z $skip_steps ]] || return 0
  local args=() a
  for a in "$@"; do [[ -e "$root/$a" ]] && args+=("$root/$a") || args+=("$a"); done
  (cd "$out" && "$cli" "${args[@]}") >"$out/$name.log" 2>&1 || { echo "reproduce: $name failed; see $out/$name.log" >&2; exit 1; }
}
table() {
  commands+=("# $(shown "$@")")
  body+=$(cd "$out" && "$cli" "$@")$'\n'
}

# A committed spec run into <name>.h5 and its table: spec_table NAME TABLE.
spec_table() {
  step run "data/experiments/$1.json" -o "$1.h5" --jobs "$jobs" --overwrite
  table inspect "$1.h5" --table "$2"
}

pytable() {  # a table tool of tools/ (h5py: the dev environment's Python)
  commands+=("# python3 $1 ${*:2}")
  body+=$(cd "$out" && "$python" "$root/$1" "${@:2}")$'\n'
}
python=${STATESCOPE_PYTHON:-$root/.venv/bin/python}
[[ -x $python ]] || python=python3

if [[ ${1:-} == --list ]]; then printf '%s\n' "${recipes[@]}"; exit 0; fi
chosen=("$@")
[[ ${#chosen[@]} -gt 0 ]] || chosen=("${recipes[@]}")
for name in "${chosen[@]}"; do
  declare -F "recipe_$name" >/dev/null || { echo "reproduce: no recipe '$name' (known: ${recipes[*]})" >&2; exit 2; }
done
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
version=$("$cli" --version 2>/dev/null | head -1)
for name in "${chosen[@]}"; do
  commands=() body="" skip_steps=""
  made="$out/$name.made"  # "<date> <cpu> | <cores> | <jobs> | <wall s> | <version>" of the run that made the files
  if [[ -n ${TABLES_ONLY:-} ]]; then
    [[ -f $made ]] || { echo "reproduce: TABLES_ONLY, but $name was never run into $out" >&2; exit 1; }
    skip_steps=1
  fi
  t0=$(date +%s)
  echo "reproduce: $name ..."
  pushd "$out" >/dev/null
  "recipe_$name"
  popd >/dev/null
  if [[ -z $skip_steps ]]; then
    echo "$(date -u +%Y-%m-%d), $cpu, $(nproc) cores, $jobs jobs x 1 thread, wall $(( $(date +%s) - t0 )) s, $version" >"$made"
  fi
  {
    echo "# tools/reproduce.sh $name: $(cat "$made")"
    printf '%s\n' "${commands[@]}"
    printf '%s' "$body"
  } >"$root/docs/results/$name.txt"
  echo "reproduce: $name done in $(( $(date +%s) - t0 )) s -> docs/results/$name.txt"
done
python3 "$root/tools/doc_tables.py" write
