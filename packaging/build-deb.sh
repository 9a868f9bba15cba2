#!/usr/bin/env bash
# build-deb.sh — the Debian package: a STATESCOPE_PACKAGE build in build-deb/ (CPU LibTorch bundled,
# no CUDA kernels, no tests; installed under /usr), then `cpack -G DEB`. Prints the .deb's path and
# sizes. Runs tools/setup.sh first, like tools/build.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tools/setup.sh"
build="${STATESCOPE_DEB_BUILD_DIR:-$root/build-deb}"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSTATESCOPE_PACKAGE=ON \
        -DCMAKE_INSTALL_PREFIX=/usr >"$build.configure.log" 2>&1 ||
    { tail -n 40 "$build.configure.log" >&2; echo "[deb] configure failed (log: $build.configure.log)" >&2; exit 1; }
fi
cmake --build "$build" -- -j "${STATESCOPE_JOBS:-2}"
rm -f "$build"/statescope_*.deb
(cd "$build" && cpack -G DEB >"$build/cpack.log" 2>&1) ||
  { tail -n 40 "$build/cpack.log" >&2; echo "[deb] cpack failed (log: $build/cpack.log)" >&2; exit 1; }
deb="$(ls "$build"/statescope_*.deb)"
installed_kib="$(dpkg-deb -f "$deb" Installed-Size)"
echo "[deb] $deb: $(du -m "$deb" | cut -f1) MiB to download, $((installed_kib / 1024)) MiB installed"
echo "[deb] Depends: $(dpkg-deb -f "$deb" Depends)"
