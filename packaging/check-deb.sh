#!/usr/bin/env bash
# check-deb.sh [statescope_*.deb] — install the package with dpkg -i and use it the way a colleague
# would, with the source and build trees hidden (a private mount namespace puts an empty tmpfs over
# the repository, so nothing can come from .venv/, build/ or data/), then remove it with dpkg -r and
# check that nothing of it is left. Needs root (sudo is used when not root) and packaging/build-deb.sh's
# .deb. Writes the app's screenshot and the check's log to build-deb/check/.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
deb="${1:-$(ls "$root"/build-deb/statescope_*.deb 2>/dev/null | head -1)}"
[ -f "$deb" ] || { echo "[check-deb] no .deb (run packaging/build-deb.sh first)" >&2; exit 1; }
SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
out="$root/build-deb/check"
rm -rf "$out" && mkdir -p "$out"
work="$(mktemp -d /tmp/statescope-deb-check.XXXXXX)"
chmod 755 "$work"
fail() { echo "[check-deb] FAIL: $*" >&2; exit 1; }

# The check's own tools (Xvfb, window lookup, screenshot): installed when missing, as setup.sh does.
need=()
for t in Xvfb:xvfb xdotool:xdotool xwininfo:x11-utils xwd:x11-apps pnmtopng:netpbm unshare:util-linux; do
  command -v "${t%%:*}" >/dev/null || need+=("${t##*:}")
done
if ((${#need[@]})); then
  echo "[check-deb] installing ${need[*]}"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >"$work/apt.log" 2>&1 ||
    { cat "$work/apt.log" >&2; fail "apt-get install ${need[*]}"; }
fi

echo "[check-deb] dpkg -i $(basename "$deb")"
if ! $SUDO dpkg -i "$deb" >"$work/dpkg.log" 2>&1; then  # missing dependencies: let apt bring them
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -f -y -qq >>"$work/dpkg.log" 2>&1 ||
    { cat "$work/dpkg.log" >&2; fail "dpkg -i"; }
fi
dpkg -L statescope | sort >"$work/files.txt"
echo "[check-deb] installed $(wc -l <"$work/files.txt") paths; $(du -sm /usr/lib/*/statescope | cut -f1) MiB of bundled runtime"

# Everything below runs with the repository hidden.
cat >"$work/inside.sh" <<'INSIDE'
set -euo pipefail
root=$1 work=$2
fail() { echo "[check-deb] FAIL: $*" >&2; exit 1; }
mount -t tmpfs -o size=1m none "$root"
[ -z "$(ls -A "$root")" ] || fail "the repository is still visible"
cd "$work"
unset STATESCOPE_DATA LD_LIBRARY_PATH
for prog in /usr/bin/statescope-cli /usr/bin/statescope; do
  ldd "$prog" >"$work/ldd.txt" 2>&1
  ! grep -q "not found" "$work/ldd.txt" || { cat "$work/ldd.txt"; fail "$prog: a library is not found"; }
  ! grep -q "$root" "$work/ldd.txt" || fail "$prog loads a library from the build tree"
  grep -q "libtorch_cpu.so => /usr/bin/../lib/.*/statescope/libtorch_cpu.so" "$work/ldd.txt" ||
    fail "$prog: libtorch_cpu is not the bundled one"
  ! grep -q "libtorch_cuda\|libcublas\|libcudnn" "$work/ldd.txt" || fail "$prog loads the CUDA math libraries"
done
v_cli="$(statescope-cli --version)"; v_app="$(QT_QPA_PLATFORM=offscreen statescope --version 2>/dev/null)"
echo "[check-deb] versions: '$v_cli' / '$v_app'"
[ "${v_cli##* }" = "${v_app##* }" ] || fail "the two programs disagree on the version"
man -w statescope-cli >/dev/null && man -w statescope >/dev/null || fail "man pages missing"
MANWIDTH=100 man statescope-cli 2>/dev/null | grep -q "VERBS" || fail "statescope-cli(1) has no VERBS section"
desktop-file-validate /usr/share/applications/org.statescope.Statescope.desktop || fail "desktop-file-validate"
appstreamcli validate --no-net /usr/share/metainfo/org.statescope.Statescope.metainfo.xml || fail "appstreamcli validate"
echo "[check-deb] the CLI demo from the installed files"
start=$SECONDS
statescope-cli run /usr/share/statescope/experiments/demo.json -o "$work/demo.h5" >"$work/demo.log" 2>&1 ||
  { tail "$work/demo.log"; fail "the demo run"; }
echo "[check-deb] demo: $((SECONDS - start)) s"
statescope-cli inspect "$work/demo.h5" | tee "$work/inspect.txt" | head -20
grep -q "passing" "$work/inspect.txt" || fail "inspect does not list the state-passing run"
echo "[check-deb] a data-parallel job from the installed files (2 processes, Gloo over loopback)"
statescope-cli --nproc 2 posttrain --model embedded --out "$work/dp" --T 32 --steps 2 --batch 4 >"$work/dp.log" 2>&1 ||
  { tail "$work/dp.log"; fail "--nproc 2 posttrain"; }
grep "data parallel: 2 processes (gloo)" "$work/dp.log" || fail "the job did not run as 2 processes"
echo "[check-deb] bad input"
if statescope-cli run /usr/share/statescope/experiments/demo.json -o /proc/statescope/demo.h5 2>"$work/err.txt"; then
  fail "an output in a missing folder was accepted"
fi
cat "$work/err.txt"; grep -q "does not exist" "$work/err.txt" || fail "the unwritable output's message"
mount -t tmpfs -o size=1m,ro none /usr/share/statescope  # the data folder gone from an installed layout
if statescope-cli eval --model embedded -o "$work/x.h5" 2>"$work/err.txt"; then fail "ran without its data"; fi
cat "$work/err.txt"; grep -q "searched" "$work/err.txt" || fail "the missing data message names no folders"
umount /usr/share/statescope
echo "[check-deb] the app from /usr/bin under Xvfb (1600x1000), a fresh user"
export HOME="$work/home" XDG_CONFIG_HOME="$work/home/.config" XDG_RUNTIME_DIR="$work/run"
mkdir -p "$HOME" "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"
Xvfb :57 -screen 0 1600x1000x24 -nolisten tcp >/dev/null 2>&1 & xpid=$!
trap 'kill $xpid ${apid:-} 2>/dev/null || true' EXIT  # no display or app left behind on a failure
sleep 1
DISPLAY=:57 /usr/bin/statescope "$work/demo.h5" >"$work/app.log" 2>&1 & apid=$!
wid=""
for _ in $(seq 60); do
  wid="$(DISPLAY=:57 xdotool search --name '^statescope' 2>/dev/null | head -1 || true)"
  [ -n "$wid" ] && break; sleep 0.5
done
[ -n "$wid" ] || { cat "$work/app.log"; fail "no app window"; }
sleep 4
DISPLAY=:57 xwininfo -id "$wid" | tee "$work/window.txt" | grep -E "Absolute|Width|Height"
w="$(awk '/Width:/ {print $2}' "$work/window.txt")"; h="$(awk '/Height:/ {print $2}' "$work/window.txt")"
x="$(awk '/Absolute upper-left X:/ {print $4}' "$work/window.txt")"; y="$(awk '/Absolute upper-left Y:/ {print $4}' "$work/window.txt")"
DISPLAY=:57 xwd -root -silent | xwdtopnm 2>/dev/null | pnmtopng >"$work/app.png"
kill "$apid"; wait "$apid" 2>/dev/null || true
kill "$xpid"; wait "$xpid" 2>/dev/null || true
((x >= 0 && y >= 0 && x + w <= 1600 && y + h <= 1000)) || fail "the window ($w x $h at $x,$y) is not inside the 1600x1000 screen"
echo "[check-deb] inside: all checks passed"
INSIDE
set +e  # whatever happens inside, the package is removed below
$SUDO unshare -m --propagation private bash "$work/inside.sh" "$root" "$work" 2>&1 | tee "$out/inside.log"
rc=${PIPESTATUS[0]}
set -e
cp "$work"/*.png "$work"/*.txt "$out"/ 2>/dev/null || true
echo "[check-deb] dpkg -r statescope"
$SUDO dpkg -r statescope >"$work/remove.log" 2>&1 || { cat "$work/remove.log" >&2; fail "dpkg -r"; }
left=0
while read -r p; do
  [ -e "$p" ] || continue
  [ -d "$p" ] && [ -n "$(ls -A "$p" 2>/dev/null)" ] && continue  # a shared folder other packages use
  [ -d "$p" ] && [ "$p" != /usr/share/statescope ] && [[ $p != */statescope* ]] && continue
  echo "left behind: $p"; left=$((left + 1))
done <"$work/files.txt"
dpkg-query -W statescope 2>/dev/null | grep -q . && { dpkg-query -W -f='${Status}\n' statescope | grep -q "not-installed\|deinstall ok config-files" || fail "still registered"; }
((left == 0)) || fail "$left paths left behind after dpkg -r"
((rc == 0)) || fail "checks with the package installed (log: $out/inside.log)"
rm -rf "$work"
echo "[check-deb] all passed: installed, used with the source tree hidden, removed with nothing left"
