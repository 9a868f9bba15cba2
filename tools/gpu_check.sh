#!/usr/bin/env bash
# gpu_check.sh — issue 6's one prepared run on the GPU machine (CUDA, nvcc, CMake, ninja and PyTorch
# 2.11 there; no Qt, no HDF5, no -dev packages, no network). Configures core + kernels + tests +
# bench without the HDF5 store, the app or ICU, builds, runs the GPU tests and the GPU benchmark, and
# leaves logs in $OUT (or ./gpu-out). Prepare here first: bash tools/gpu_deps.sh (carried as .gpu-deps).
# Device tool: run(command="bash tools/gpu_check.sh", carry=[".gpu-deps"], timeout_s=540)
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
log() { echo "== $* ($(date +%T))" | tee -a "$OUT/summary.txt"; }
PY=${PY:-$(command -v python3)}
log "machine: $(nproc) cores; $(nvidia-smi --query-gpu=name,memory.total --format=csv,noheader 2>/dev/null | head -1)"
"$PY" -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda, 'devices', torch.cuda.device_count())" \
  | tee -a "$OUT/summary.txt"
log configure
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTATESCOPE_PYTHON="$PY" \
  -DSTATESCOPE_BUILD_STORE=OFF -DSTATESCOPE_BUILD_GUI=OFF -DSTATESCOPE_REQUIRE_ICU=OFF -DSTATESCOPE_REQUIRE_COMPRESSION=OFF -DSTATESCOPE_REQUIRE_PARQUET=OFF \
  -DCMAKE_CUDA_ARCHITECTURES=90 ${GPU_CMAKE_ARGS:-} > "$OUT/configure.txt" 2>&1 || { log "configure FAILED"; tail -30 "$OUT/configure.txt"; exit 1; }
log build
ninja -C build-gpu -j"$(nproc)" test_kernels bench_gpu > "$OUT/build.txt" 2>&1 || { log "build FAILED"; grep -B2 -A8 "error" "$OUT/build.txt" | head -60; exit 1; }
log "tests (GPU kernels and engine against CPU)"
# Every GPU test must run here: a skip (no device seen, kernels not built) is a failure.
STATESCOPE_REQUIRE_GPU=1 build-gpu/tests/test_kernels --gtest_output=xml:"$OUT/test_kernels.xml" > "$OUT/test_kernels.txt" 2>&1
rc=$?
grep -E "^\[  (PASSED|FAILED|SKIPPED) |OK \]|FAILED \]|Failure|Skipped" "$OUT/test_kernels.txt" | tee -a "$OUT/summary.txt"
log "benchmark"
timeout 300 build-gpu/bin/bench_gpu ${BENCH_ARGS:-} 2>&1 | tee "$OUT/bench_gpu.jsonl" | tee -a "$OUT/summary.txt"
log "done (tests rc $rc)"
exit $rc
