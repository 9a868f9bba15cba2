#!/usr/bin/env bash
# test.sh — build everything and run every test (CTest over the GoogleTest binaries).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tools/build.sh"
build="${STATESCOPE_BUILD_DIR:-$root/build}"
export STATESCOPE_THREADS="${STATESCOPE_THREADS:-1}"
ctest --test-dir "$build" --output-on-failure -j 2 --timeout 600
