#!/usr/bin/env bash
# CTF import speed against babeltrace2's own decoding floor: the same trace read
# by `babeltrace2 DIR -c sink.utils.dummy` (src.ctf.fs -> muxer -> a sink that
# drops every message) and imported by `schedlab-cli info DIR` (same graph, plus
# building the model). Runs alternate (floor, import, floor, import...) so both
# see the same machine load; prints the medians of wall time and of CPU time
# (user + sys, steadier on a shared machine) and their ratios.
#
# usage: ctf_import_bench.sh [CTF_DIR] [SCHEDLAB_CLI] [RUNS]
#   CTF_DIR       default /tmp/bench-ctf/ctf, recorded with
#                 /work/shared/tools/record-sched-trace /tmp/bench-ctf perf -- hackbench -g 8 -l 4000
#   SCHEDLAB_CLI  default: build-ctf, build-release or build next to this checkout
#   RUNS          default 5
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-/tmp/bench-ctf/ctf}
cli=${2:-}
runs=${3:-5}
if [ -z "$cli" ]; then
  for b in build-ctf build-release build; do
    if [ -x "$here/$b/app/cli/schedlab-cli" ]; then cli="$here/$b/app/cli/schedlab-cli"; break; fi
  done
fi
[ -n "$cli" ] && [ -x "$cli" ] || { echo "schedlab-cli not found; pass its path as the 2nd argument" >&2; exit 2; }
[ -f "$dir/metadata" ] || { echo "$dir is not a CTF trace folder (no metadata)" >&2; exit 2; }
command -v babeltrace2 >/dev/null || { echo "babeltrace2 CLI not installed" >&2; exit 2; }

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
measure() {  # label, command... -> appends "wall cpu" to $tmp/label
  local label=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 1; }
  awk '{ printf "%.3f %.3f\n", $1, $2 + $3 }' "$tmp/t" >> "$tmp/$label"
}
# One warm-up of each: the first read of a 100 MB trace measures the disk.
measure warm babeltrace2 "$dir" -c sink.utils.dummy
measure warm "$cli" info "$dir"
for ((i = 0; i < runs; i++)); do
  measure floor babeltrace2 "$dir" -c sink.utils.dummy
  measure import "$cli" info "$dir"
done
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
fw=$(cut -d' ' -f1 "$tmp/floor" | median); fc=$(cut -d' ' -f2 "$tmp/floor" | median)
iw=$(cut -d' ' -f1 "$tmp/import" | median); ic=$(cut -d' ' -f2 "$tmp/import" | median)
events=$("$cli" info "$dir" --json | awk -F': ' '/"event_count"/ { gsub(",", "", $2); print $2 }')
echo "trace:   $dir ($events events, $(du -sh "$dir" | cut -f1))"
echo "runs:    $runs each, alternating; medians"
printf "babeltrace2 -c sink.utils.dummy: wall %6.3f s  cpu %6.3f s\n" "$fw" "$fc"
printf "schedlab-cli info:               wall %6.3f s  cpu %6.3f s\n" "$iw" "$ic"
awk -v iw="$iw" -v fw="$fw" -v ic="$ic" -v fc="$fc" \
  'BEGIN { printf "ratio (import / floor): wall %.2fx  cpu %.2fx  (budget 1.30x)\n", iw / fw, ic / fc }'
