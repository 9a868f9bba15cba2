#!/usr/bin/env bash
# gpu_deps.sh — copies what the GPU machine lacks (it has CUDA, CMake, ninja and PyTorch, but no
# Debian -dev packages and no network) into .gpu-deps/, which the device tool carries along:
# nlohmann/json.hpp, Gloo's headers (core/dist) and the GoogleTest sources. About 6 MB. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
mkdir -p .gpu-deps/include
[ -d .gpu-deps/include/nlohmann ] || cp -r /usr/include/nlohmann .gpu-deps/include/
[ -d .gpu-deps/include/gloo ] || cp -r /usr/include/gloo .gpu-deps/include/
[ -d .gpu-deps/googletest ] || cp -r /usr/src/googletest .gpu-deps/googletest
du -sh .gpu-deps
