#!/usr/bin/env bash
# nexus_fresh.sh CLI PYTHON — a file the current writer makes now (not only the committed fixture)
# opens in the NeXus readers: every result kind at a tiny size, then tests/nexus_check.py.
set -euo pipefail
cli=$1 py=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/spec.json" <<'SPEC'
{"model": "embedded", "T": 32, "posttrain": {"steps": 2, "batch": 2}, "policies": [{"kind": "passing"}],
 "eval": {"length": 128, "sequences": 2, "segment": 64, "batch": 2},
 "analyses": {"effrem": {"T": [32], "points": 3, "sequences": 1},
              "states": {"sequences": 1, "positions": [16, 64]},
              "unexplored": {"stride": 32, "samples": 256, "train_steps": 20, "train_batch": 4, "components": 2, "bootstrap": 5},
              "passkey": {"lengths": [128], "depths": [0, 1], "samples": 1},
              "babi": {"lengths": [256], "samples": 2},
              "copying": {"L": 3, "alphabet": 3, "steps": 2, "samples": 2}}}
SPEC
"$cli" run "$tmp/spec.json" -o "$tmp/fresh.h5" >"$tmp/run.log" 2>&1 || { tail "$tmp/run.log"; exit 1; }
"$py" "$here/nexus_check.py" "$tmp/fresh.h5"
