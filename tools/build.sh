#!/usr/bin/env bash
# build.sh — configure (once) and build statescope into build/. Runs tools/setup.sh first, which
# returns in seconds when everything is installed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tools/setup.sh"
build="${STATESCOPE_BUILD_DIR:-$root/build}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build.configure.log" 2>&1 ||
    { tail -n 40 "$build.configure.log" >&2; echo "[build] configure failed (log: $build.configure.log)" >&2; exit 1; }
fi
# Two cores: at most two LibTorch compiles at once (each takes 1-2 GiB).
cmake --build "$build" -- -j "${STATESCOPE_JOBS:-2}"
