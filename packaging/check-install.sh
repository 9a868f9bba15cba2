#!/usr/bin/env bash
# check-install.sh BUILD_DIR — the part of the package check that fits CI: `cmake --install` of a
# build into a scratch prefix, then what the installed tree must hold and do. The programs run from
# the prefix with STATESCOPE_DATA unset find the data under <prefix>/share/statescope (not the
# source tree); --version agrees; the man pages, desktop entry, icon and AppStream metainfo are
# there and valid. packaging/check-deb.sh does the rest (dpkg -i/-r, the app under Xvfb) on a .deb.
set -euo pipefail
build=$(cd "$1" && pwd)
prefix="$(mktemp -d /tmp/statescope-install.XXXXXX)"
trap 'rm -rf "$prefix"' EXIT
fail() { echo "[check-install] FAIL: $*" >&2; exit 1; }
cmake --install "$build" --prefix "$prefix" >"$prefix.log" 2>&1 || { tail "$prefix.log"; fail "cmake --install"; }
rm -f "$prefix.log"
unset STATESCOPE_DATA
cli="$prefix/bin/statescope-cli"
[ -x "$cli" ] && [ -x "$prefix/bin/statescope" ] || fail "bin/statescope-cli and bin/statescope not installed"
for f in share/statescope/models/embedded/model.safetensors share/statescope/corpus/austen-novels.txt \
         share/statescope/experiments/demo.json share/applications/org.statescope.Statescope.desktop \
         share/icons/hicolor/scalable/apps/org.statescope.Statescope.svg \
         share/metainfo/org.statescope.Statescope.metainfo.xml share/doc/statescope/copyright; do
  [ -f "$prefix/$f" ] || fail "$f not installed"
done
out="$("$cli" info --model embedded)"
echo "$out" | head -1
grep -q "$prefix/share/statescope/models/embedded" <<<"$out" || fail "the installed CLI did not take the embedded model from $prefix/share/statescope"
v_cli="$("$cli" --version)"; v_app="$(QT_QPA_PLATFORM=offscreen "$prefix/bin/statescope" --version 2>/dev/null)"
echo "versions: $v_cli / $v_app"
[ -n "$v_cli" ] && [ "${v_cli##* }" = "${v_app##* }" ] || fail "the programs disagree on the version"
grep -q "version=\"${v_cli##* }\"" "$prefix/share/metainfo/org.statescope.Statescope.metainfo.xml" ||
  fail "the metainfo's release is not ${v_cli##* }"
if command -v help2man >/dev/null; then
  for p in statescope-cli statescope; do [ -f "$prefix/share/man/man1/$p.1.gz" ] || fail "man page $p.1.gz missing"; done
  zgrep -q '^\.SH VERBS' "$prefix/share/man/man1/statescope-cli.1.gz" || fail "statescope-cli.1 lists no verbs"
  zgrep -q '^\.SS posttrain' "$prefix/share/man/man1/statescope-cli.1.gz" || fail "statescope-cli.1 lacks the posttrain verb"
else
  echo "help2man not installed: man pages not checked (tools/setup.sh installs it)"
fi
desktop-file-validate "$prefix/share/applications/org.statescope.Statescope.desktop" || fail "desktop-file-validate"
appstreamcli validate --no-net "$prefix/share/metainfo/org.statescope.Statescope.metainfo.xml" >/dev/null ||
  fail "appstreamcli validate"
# A data folder that is not there: the error names it (the full search order, with the source tree
# hidden, is packaging/check-deb.sh's; a developer build falls back to its source tree's data/).
if err="$(STATESCOPE_DATA="$prefix/no-data" "$cli" info --model embedded 2>&1)"; then fail "ran without its data"; fi
echo "$err"
grep -q "searched \$STATESCOPE_DATA" <<<"$err" && grep -q "$prefix/no-data" <<<"$err" ||
  fail "the missing data message does not name the folder searched"
echo "[check-install] passed"
