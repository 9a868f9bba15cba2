# natural_failure_common.sh — sourced by tools/natural_failure.sh and tools/natural_failure_eval.sh
# (issue 50) after they set `seed` and `T`: the recipe's names, from the same environment in both.
#   EVERY=N    a plant about every N bytes (default T/2)      data tag e<N>
#   MARKED=1   recalls written '[Name dddd]' (recipe D)        data tag mk
#   NO_PROSE=1 plants alone, no prose                         data tag np
#   D_STATE=N  state size per head other than 64               run tag +ds<N>
# A T other than 256 adds T<T> to the run's tag (its snapshots and evaluations), not to the data's
# (the data file names its T already). WORK (default build/i50) holds everything;
# STATESCOPE_CLI names the CLI (default build/bin/statescope-cli).
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="${WORK:-$root/build/i50}"
cli="${STATESCOPE_CLI:-$root/build/bin/statescope-cli}"
every="${EVERY:-}"
noprose="${NO_PROSE:-}"
marked="${MARKED:-}"
tag="${every:+e$every}${marked:+mk}${noprose:+np}"
plant_flags=(${every:+--every "$every"} ${noprose:+--no-prose} ${marked:+--marked})
d_state="${D_STATE:-64}"
rtag="$tag"
[ "$d_state" = 64 ] || rtag="${rtag}ds$d_state"
[ "$T" = 256 ] || rtag="T$T$rtag"
snaps="$work/snap${rtag:+_$rtag}_s$seed"
