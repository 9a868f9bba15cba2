#!/usr/bin/env bash
# run.sh — build and run statescope's main job on the embedded default: the demo experiment.
# Post-trains the embedded model (T = 32) with each initial-state policy, evaluates all six models to
# 64T, prints the summary table and writes demo.h5 (about 4 minutes on 2 cores).
# (The desktop app takes this over when it lands.)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tools/build.sh"
build="${STATESCOPE_BUILD_DIR:-$root/build}"
cd "$root"
"$build/bin/statescope-cli" run data/experiments/demo.json -o "${1:-demo.h5}"
