#!/usr/bin/env bash
# report_check.sh — the HTML report opened in a real headless browser: makes an experiment file (the
# unexplored-states spec, or FILE.h5 if given), writes its report with the CLI, and has Chromium
# (Debian's, installed here if missing) render it to a PNG to look at.
# Usage: bash tools/report_check.sh [FILE.h5] [OUT.png]   (default PNG: docs/screenshots/report.png)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$root/tools/build.sh" >/dev/null
if ! command -v chromium >/dev/null; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
work="$(mktemp -d)"; trap 'rm -rf "$work"' EXIT
file="${1:-}"
if [ -z "$file" ]; then
  file="$work/unexplored.h5"
  "$root/build/bin/statescope-cli" run "$root/data/experiments/unexplored.json" -o "$file" >/dev/null
fi
png="${2:-$root/docs/screenshots/report.png}"
"$root/build/bin/statescope-cli" report "$file" -o "$work/report.html"
# No network: the page must need none (a fetch would fail here and show as a gap in the picture).
timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars --window-size=1200,3400 \
  --screenshot="$png" "file://$work/report.html" 2>/dev/null
pdf="${png%.png}.pdf"; [ -n "${2:-}" ] || pdf="$work/report.pdf"  # the PDF is not committed
timeout 120 chromium --headless --no-sandbox --disable-gpu --no-pdf-header-footer --print-to-pdf="$pdf" \
  "file://$work/report.html" 2>/dev/null
[ -s "$pdf" ] && echo "PDF: $(stat -c %s "$pdf") bytes"
echo "report of $file rendered by $(chromium --version 2>/dev/null | head -1) -> $png"
