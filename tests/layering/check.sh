#!/usr/bin/env bash
# check.sh BUILD_DIR LAYER:TORCH:QT ... — builds each layer's probes (tests/layering/CMakeLists.txt)
# and checks that a LibTorch or Qt include compiles exactly where the table allows it.
set -u
build="$1"; shift
pass=0; fail=0
probe() {  # target expected(yes|no) [header whose absence must be the reason for a "no"]
  local out; out="$(cmake --build "$build" --target "$1" 2>&1)"; local rc=$?
  local got=yes; [ $rc -ne 0 ] && got=no
  # A "no" counts only when the probed header is what was not found (not any other build error).
  if [ "$got" = no ] && [ -n "${3:-}" ] && ! grep -q "$3: No such file or directory" <<<"$out"; then
    got="no, for another reason"
  fi
  if [ "$got" = "$2" ]; then
    pass=$((pass + 1)); echo "ok    $1 compiles: $got"
  else
    fail=$((fail + 1)); echo "FAIL  $1 compiles: $got, expected $2"; echo "$out" | grep -m3 -E "error|fatal" || true
  fi
}
for row in "$@"; do
  IFS=: read -r layer torch qt <<<"$row"
  probe "probe_${layer}_plain" yes
  probe "probe_${layer}_torch" "$torch" "c10/macros/Macros.h"
  probe "probe_${layer}_qt" "$qt" "QtCore/QObject"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
