#!/usr/bin/env bash
# run.sh — build and run statescope's main job on the embedded default.
# For now that is the CLI on the tiny reference model in tests/golden: print its configuration,
# run it on the reference token ids and write logits, final states and per-token state norms.
# (The demo and the desktop app take this over when they land.)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tools/build.sh"
build="${STATESCOPE_BUILD_DIR:-$root/build}"
cli="$build/bin/statescope-cli"
model="$root/tests/golden/hf-untied"
"$cli" info --model "$model"
"$cli" forward --model "$model" --input "$model/golden.h5" --output "$build/demo-forward.h5"
echo "wrote $build/demo-forward.h5 (logits, final_ssm_state, final_conv_state, ssm_state_norm)"
