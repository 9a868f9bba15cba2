#!/usr/bin/env bash
# fuzz.sh SECONDS [TARGET ...] — runs every libFuzzer target (tests/fuzz/) for SECONDS each.
#
# Builds the fuzz build (clang 14, ASan + UBSan, -DSTATESCOPE_FUZZ=ON) in build-fuzz/ (once;
# installs clang-14 and its runtime when missing), gathers each target's seed corpus from the real
# files in the tree (data/, tests/golden/, tests/fuzz/seeds/), first replays every committed
# regression input (tests/fuzz/regressions/<target>/: each once, all must pass), then fuzzes.
# Targets run FUZZ_JOBS at a time (default: the number of cores). The corpus each grows is kept in
# build-fuzz/corpus/<target>/; crashes land in build-fuzz/crashes/<target>/ and fail the script.
# Prints one line per target: executions, rate, corpus size, coverage, crashes. Exit 1 on any crash.
#
#   FUZZ_SEED=1 bash bench/fuzz.sh 10           # CI: every target briefly, the same mutations each run
#   FUZZ_JOBS=2 bash bench/fuzz.sh 1200 fuzz_spec   # one long run
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
seconds="${1:?usage: fuzz.sh SECONDS [TARGET ...]}"
shift
all=(fuzz_safetensors fuzz_config fuzz_torch_pickle fuzz_tokenizer fuzz_token_files fuzz_parquet fuzz_spec fuzz_experiment_file fuzz_hub_cache)
targets=("$@")
((${#targets[@]})) || targets=("${all[@]}")
build="${STATESCOPE_FUZZ_DIR:-$root/build-fuzz}"
jobs="${FUZZ_JOBS:-$(nproc)}"

# clang and libFuzzer's runtime (Debian: clang-14, libclang-rt-14-dev).
missing=()
for p in clang-14 libclang-rt-14-dev; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "[fuzz] installing ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
bash "$root/tools/setup.sh" >/dev/null  # LibTorch for the pickle reader, the -dev packages

if [ ! -f "$build/build.ninja" ]; then
  CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSTATESCOPE_FUZZ=ON >"$build.configure.log" 2>&1 ||
    { tail -n 30 "$build.configure.log" >&2; echo "[fuzz] configure failed (log: $build.configure.log)" >&2; exit 1; }
fi
cmake --build "$build" --target fuzzers -- -j "${STATESCOPE_JOBS:-2}" >"$build/build.log" 2>&1 ||
  { grep -m 20 -E "error|Error" "$build/build.log" >&2; echo "[fuzz] build failed (log: $build/build.log)" >&2; exit 1; }

# Seed corpora, from the real writers' files.
seeds="$build/seeds"
rm -rf "$seeds"
for t in "${all[@]}"; do
  mkdir -p "$seeds/$t"
  if [ -d "$root/tests/fuzz/seeds/$t" ]; then
    find "$root/tests/fuzz/seeds/$t" -type f ! -name README.md ! -name '*.json' -exec cp {} "$seeds/$t/" \;
  fi
done
n=0
while IFS= read -r f; do n=$((n + 1)); cp "$f" "$seeds/fuzz_safetensors/$n.safetensors"; done \
  < <(find "$root/data" "$root/tests/golden" -name '*.safetensors' | sort)
while IFS= read -r f; do n=$((n + 1)); cp "$f" "$seeds/fuzz_config/$n.json"; done \
  < <(find "$root/data" "$root/tests/golden" -name config.json | sort)
for f in "$root"/data/experiments/*.json; do cp "$f" "$seeds/fuzz_spec/"; done
while IFS= read -r f; do n=$((n + 1)); cp "$f" "$seeds/fuzz_parquet/$n.parquet"; done \
  < <(find "$root/tests/golden/parquet" -name '*.parquet' | sort)
"$root/.venv/bin/python" "$root/tests/fuzz/make_seeds.py" "$root" "$seeds"

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=0:handle_abort=1}"
export LSAN_OPTIONS="${LSAN_OPTIONS:-suppressions=$root/tests/fuzz/lsan.supp:print_suppressions=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TMPDIR="${TMPDIR:-/tmp}"
export STATESCOPE_H5_PREFLIGHT_SECONDS=5  # a file that hangs libhdf5 in the pre-read child is refused after 5 s
flags=(-rss_limit_mb=2560 -malloc_limit_mb=1024 -timeout=20 -max_len=1048576 -print_final_stats=1)
# FUZZ_SEED fixes libFuzzer's mutation sequence (CI: the same inputs on every run); unset, each run differs.
[ -n "${FUZZ_SEED:-}" ] && flags+=(-seed="$FUZZ_SEED")

# Regression inputs first: each committed input that once crashed must now pass.
for t in "${targets[@]}"; do
  reg="$root/tests/fuzz/regressions/$t"
  if [ -d "$reg" ] && compgen -G "$reg/*" >/dev/null; then
    if ! "$build/tests/fuzz/$t" "${flags[@]}" "$reg"/* >"$build/$t.regressions.log" 2>&1; then
      tail -n 30 "$build/$t.regressions.log" >&2
      echo "[fuzz] $t: a committed regression input fails again (log: $build/$t.regressions.log)" >&2
      exit 1
    fi
    echo "[fuzz] $t: $(ls "$reg" | wc -l) regression inputs pass"
  fi
done

# libFuzzer stops at its first finding; a target is restarted on its grown corpus until its SECONDS of
# wall time are spent, so one finding does not end the run. Its executions are summed over restarts.
run_one() {
  local t="$1" start left rc=0 total=0 n
  mkdir -p "$build/corpus/$t" "$build/crashes/$t"
  : >"$build/$t.log"
  start=$(date +%s)
  while left=$((seconds - ($(date +%s) - start))); ((left > 0)); do
    "$build/tests/fuzz/$t" "${flags[@]}" -max_total_time="$left" -artifact_prefix="$build/crashes/$t/" \
      "$build/corpus/$t" "$seeds/$t" >"$build/$t.last.log" 2>&1 || rc=$?
    cat "$build/$t.last.log" >>"$build/$t.log"
    n="$(grep -oE 'stat::number_of_executed_units: +[0-9]+' "$build/$t.last.log" | grep -oE '[0-9]+$' || true)"
    if [ -z "$n" ]; then n="$(grep -oE '^#[0-9]+' "$build/$t.last.log" | tail -n 1 | tr -d '#' || true)"; fi
    total=$((total + ${n:-0}))
  done
  echo "$total" >"$build/$t.executions"
  return "$rc"
}
pids=(); names=(); failed=0
for t in "${targets[@]}"; do
  while (($(jobs -rp | wc -l) >= jobs)); do sleep 1; done
  run_one "$t" & pids+=($!); names+=("$t")
done
rcs=()
for i in "${!pids[@]}"; do rc=0; wait "${pids[$i]}" || rc=$?; rcs+=("$rc"); done

# Triage: an input counts as an open finding only if replaying it alone fails again. One that passes
# on replay either crashed a forked child that the code under test spawns on purpose (the HDF5
# pre-read, core/store/h5_preflight.h: the parent refused the file by name and lived on), or was a
# per-input leak report that does not reproduce alone (library memory freed when it shuts down).
# Those are kept in build-fuzz/contained/<target>/ and counted apart; look at them, they are few.
for t in "${names[@]}"; do
  mkdir -p "$build/contained/$t"
  for f in "$build/crashes/$t"/*; do
    [ -e "$f" ] || continue
    if "$build/tests/fuzz/$t" "${flags[@]}" "$f" >/dev/null 2>&1; then mv "$f" "$build/contained/$t/"; fi
  done
done

printf '%-22s %12s %10s %8s %8s %8s %8s %s\n' target executions exec/s corpus cov ft contained crashes
for i in "${!names[@]}"; do
  t="${names[$i]}"; log="$build/$t.log"
  execs="$(cat "$build/$t.executions" 2>/dev/null || echo '?')"
  rate="$([ "$execs" != '?' ] && echo $((execs / seconds)) || echo '?')"
  last="$(grep -E '^#[0-9]+' "$log" | tail -n 1)"
  cov="$(grep -oE 'cov: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || echo '?')"
  ft="$(grep -oE 'ft: [0-9]+' <<<"$last" | grep -oE '[0-9]+' || echo '?')"
  corpus="$(ls "$build/corpus/$t" | wc -l)"
  crashes="$(ls "$build/crashes/$t" | wc -l)"
  contained="$(ls "$build/contained/$t" | wc -l)"
  printf '%-22s %12s %10s %8s %8s %8s %8s %s\n' "$t" "$execs" "$rate" "$corpus" "$cov" "$ft" "$contained" "$crashes"
  if [ "$crashes" -ne 0 ] || { [ "${rcs[$i]}" -ne 0 ] && [ "$contained" -eq 0 ]; }; then
    failed=1
    echo "[fuzz] $t: finding (exit ${rcs[$i]}); log $log; inputs in $build/crashes/$t/" >&2
    grep -m 5 -E "ERROR|SUMMARY|runtime error|terminate|what\(\)" "$log" >&2 || true
  fi
done
exit "$failed"
