#!/usr/bin/env bash
# demo_jobs.sh — the demo (data/experiments/demo.json) serial (--jobs 1) and with --jobs N, one
# intra-op thread per job, in the same run; wall times, their ratio, and whether the two files
# hold the same numbers (tools/h5_same.py). Usage: bash bench/demo_jobs.sh [N] [SPEC]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
jobs="${1:-$(nproc)}"; spec="${2:-$root/data/experiments/demo.json}"
bash "$root/tools/build.sh" >/dev/null
cli="$root/build/bin/statescope-cli"; py="$root/.venv/bin/python"
out="$(mktemp -d)"; trap 'rm -rf "$out"' EXIT
cpu="$(lscpu | sed -n "s/^Model name: *//p" | head -1)"
echo "# $(date -u +%FT%TZ) $(nproc) cores ($cpu), $(basename "$spec"), --threads 1"
t() { local s e; s=$(date +%s.%N); "$@" > "$out/log" 2>&1 || { cat "$out/log"; exit 1; }; e=$(date +%s.%N); "$py" -c "print($e - $s)"; }
serial=$(t "$cli" --threads 1 run "$spec" -o "$out/serial.h5" --jobs 1)
parallel=$(t "$cli" --threads 1 run "$spec" -o "$out/parallel.h5" --jobs "$jobs")
printf "serial (--jobs 1)   %7.1f s\nparallel (--jobs %s) %7.1f s\nspeed-up            %7.2fx\n" \
  "$serial" "$jobs" "$parallel" "$("$py" -c "print($serial / $parallel)")"
"$py" "$root/tools/h5_same.py" "$out/serial.h5" "$out/parallel.h5"
