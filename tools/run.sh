#!/usr/bin/env bash
# run.sh — build and run statescope on the embedded default: the demo experiment.
# With a display: opens the desktop app, which runs data/experiments/demo.json live (post-trains the
# embedded model, T = 32, with each initial-state policy, evaluates all six models to 64T) into
# demo.h5 while the plots fill in. Without a display (ssh, CI): the same experiment with the CLI,
# which prints the summary table. About 3 minutes either way on 2 cores.
# Usage: bash tools/run.sh [demo.h5] ; STATESCOPE_HEADLESS=1 forces the CLI.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tools/build.sh"
build="${STATESCOPE_BUILD_DIR:-$root/build}"
cd "$root"
out="${1:-demo.h5}"
# The demo's own file is replaced when the demo runs again; a file you name is never replaced.
replace=(); [ $# -eq 0 ] && replace=(--overwrite)
if [ -z "${STATESCOPE_HEADLESS:-}" ] && { [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; } && [ -x "$build/bin/statescope" ]; then
  exec "$build/bin/statescope" --run data/experiments/demo.json --output "$out" "${replace[@]}"
fi
"$build/bin/statescope-cli" run data/experiments/demo.json -o "$out" "${replace[@]}"
echo "(no display: ran the demo with the CLI; open $out in the app with: $build/bin/statescope $out)"
