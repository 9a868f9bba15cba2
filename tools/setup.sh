#!/usr/bin/env bash
# setup.sh — install everything statescope needs on a Debian 12 machine, idempotently.
#
# What it is: the single place where dependencies are named and pinned. A second run with everything
# present checks and returns in seconds, downloading nothing.
# What it is not: a build script (see tools/build.sh).
#
# LibTorch comes from the PyPI `torch` wheel (CUDA-enabled build, so CUDA code paths compile and link
# everywhere), installed into a project-local virtual environment at .venv/. CMake finds it through
# `python -c 'import torch; print(torch.utils.cmake_prefix_path)'` (see CMakeLists.txt).
set -euo pipefail

TORCH_VERSION="2.11.0"   # pinned here and only here; matches the GPU machine's PyTorch 2.11 (cu130)
PY_EXTRA=(numpy h5py nexusformat==2.1.0 silx==3.1.3 pyarrow==26.0.1)  # pyarrow: Arrow's C++ Parquet reader (libarrow, libparquet, headers) that core/data links, and the writer of its test files; h5py: tests/tools read our HDF5 files the way users will; nexusformat, silx: NeXus readers (tests/nexus_check.py)

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="${STATESCOPE_VENV:-$root/.venv}"

APT_PACKAGES=(
  build-essential cmake ninja-build ccache pkg-config
  qt6-base-dev qt6-base-dev-tools qt6-svg-dev libqcustomplot-dev libqcustomplot2.1-qt6 libgl-dev
  libhdf5-dev hdf5-tools nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libicu-dev
  xvfb xauth python3-venv help2man desktop-file-utils appstream libgloo-dev
  zlib1g-dev liblzma-dev libzstd-dev gzip xz-utils zstd  # compressed corpora; the CLIs write the test files
)

missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "[setup] installing Debian packages: ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  log="$(mktemp)"
  if ! { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq \
         --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    tail -n 30 "$log" >&2; echo "[setup] apt-get failed (full log: $log)" >&2; exit 1
  fi
  rm -f "$log"
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "[setup] warning: nvcc not found; CUDA kernels will not be built (set STATESCOPE_CUDA=OFF)" >&2
fi

py="$venv/bin/python"
if [ ! -x "$py" ]; then
  echo "[setup] creating virtual environment $venv"
  python3 -m venv "$venv"
fi
have_torch="$("$py" -c 'import torch; print(torch.__version__.split("+")[0])' 2>/dev/null || true)"
if [ "$have_torch" != "$TORCH_VERSION" ]; then
  # The CUDA wheel and its nvidia-* libraries take ~5 GiB installed, plus the downloads while pip
  # works. Say so plainly before pip fails half-way with "No space left on device".
  need_mib=8192
  for d in "$venv" "${TMPDIR:-/tmp}"; do
    free_mib="$(df -Pm "$d" | awk 'NR==2 {print $4}')"
    if [ -n "$free_mib" ] && [ "$free_mib" -lt "$need_mib" ]; then
      echo "[setup] error: installing torch==$TORCH_VERSION needs about $need_mib MiB free in $d;" \
           "only $free_mib MiB are free there (free some space, or point STATESCOPE_VENV / TMPDIR" \
           "at a larger disk)" >&2
      exit 1
    fi
  done
  echo "[setup] installing torch==$TORCH_VERSION into $venv (large, ~5 GiB; not kept in pip's cache)"
  "$py" -m pip install -q --no-cache-dir "torch==$TORCH_VERSION"
fi
for m in "${PY_EXTRA[@]}"; do  # "name" or "name==version": the module is the name
  "$py" -c "import ${m%%==*}" 2>/dev/null || { echo "[setup] installing $m"; "$py" -m pip install -q "$m"; }
done
if [ "${STATESCOPE_DEV:-0}" = "1" ]; then   # only for tests/golden and bench/ reference runs
  "$py" -c "import transformers, safetensors" 2>/dev/null || "$py" -m pip install -q transformers safetensors
fi
echo "[setup] ok: torch $("$py" -c 'import torch; print(torch.__version__)') in $venv"
