#!/usr/bin/env bash
# man-page.sh PROGRAM OUT.1 — a man page from the program's --help and --version (help2man), with
# each statescope-cli verb's own --help, the environment, the files and the exit status added.
set -euo pipefail
prog=$1 out=$2
name=$(basename "$prog")
inc=$(mktemp)
trap 'rm -f "$inc"' EXIT
export QT_QPA_PLATFORM=offscreen XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
roff() { sed -e 's/\\/\\e/g' -e 's/^\([.'"'"']\)/\\\&\1/'; }
if [[ $name == statescope-cli ]]; then
  summary="headless length-generalization lab for Mamba-2 (post-training, evaluation, analyses)"
  {
    echo "[VERBS]"
    echo "Each verb has its own options; \\fBstatescope-cli\\fR \\fIVERB\\fR \\fB--help\\fR prints them."
    "$prog" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && NF {print $1}' | while read -r verb; do
      echo ".SS $verb"
      echo ".nf"
      "$prog" "$verb" --help | tail -n +2 | sed "s|$prog|statescope-cli|g" | roff
      echo ".fi"
    done
    cat <<'T'
[EXIT STATUS]
0 success; 1 failure (one line on standard error names the file, field or value); 2 bad usage;
130 cancelled by SIGINT or SIGTERM (finished work stays in the output file, which stays valid).
[EXAMPLES]
.nf
statescope-cli run /usr/share/statescope/experiments/demo.json -o demo.h5
statescope-cli inspect demo.h5
statescope-cli report demo.h5 -o demo.html
.fi
T
  } > "$inc"
else
  summary="desktop length-generalization lab for Mamba-2: run, compare and export experiments"
  : > "$inc"
fi
cat >> "$inc" <<'T'
[ENVIRONMENT]
.TP
.B STATESCOPE_DATA
the folder holding models/, corpus/ and experiments/ (default: share/statescope beside the
program's bin/, i.e. /usr/share/statescope when installed).
.TP
.B STATESCOPE_THREADS
intra-op CPU threads when \-\-threads is not given.
.TP
.B XDG_CACHE_HOME
the token cache lives in $XDG_CACHE_HOME/statescope/tokens (default ~/.cache/statescope/tokens).
[FILES]
.TP
.I /usr/share/statescope/
the embedded models, the corpus and the experiment specs (demo.json and others).
[SEE ALSO]
.BR statescope (1),
.BR statescope-cli (1)
T
help2man --no-info --no-discard-stderr --name="$summary" --include="$inc" --output="$out" "$prog"
