#!/usr/bin/env bash
# CTF import speed against babeltrace2's own decoding floor: the same trace read
# by `babeltrace2 DIR -c sink.utils.dummy` (src.ctf.fs -> muxer -> a sink that
# drops every message) and imported by `schedlab-cli info DIR` (the same source,
# its streams merged by SchedLab's sink instead of the muxer, plus building the
# model on a second thread). Goal (issue 17): at most 1.15x the floor.
# Runs alternate (floor, import, floor, import...) so both see the same machine
# load; prints the medians of wall time and of CPU time (user + sys: steadier
# on a shared machine, and what the import costs when no core is free) and the
# ratios, then `schedlab-cli info --bench` (in-process import, no start-up) for
# reference. Records the trace first when it is missing:
#   record-sched-trace /tmp/bench-ctf perf -- hackbench -g 8 -l 4000
#
# usage: tests/bench/ctf_import_bench.sh [CTF_DIR] [SCHEDLAB_CLI] [RUNS]
#   CTF_DIR       default /tmp/bench-ctf/ctf
#   SCHEDLAB_CLI  default: build-ctf, build-release, then the first build*/ of this checkout
#   RUNS          default 5
# Exit status: 0 when the wall-time ratio is within the goal, 1 when not, 2 on setup errors.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${1:-/tmp/bench-ctf/ctf}
cli=${2:-}
runs=${3:-5}
goal=1.15

if [ -z "$cli" ]; then
  for c in "$root"/build-ctf/app/cli/schedlab-cli "$root"/build-release/app/cli/schedlab-cli \
           "$root"/build*/app/cli/schedlab-cli "$root"/build/*/app/cli/schedlab-cli; do
    if [ -x "$c" ]; then cli=$c; break; fi
  done
fi
[ -n "$cli" ] && [ -x "$cli" ] || { echo "schedlab-cli not found; build it or pass it as the second argument" >&2; exit 2; }
command -v babeltrace2 >/dev/null || { echo "the babeltrace2 CLI is not installed" >&2; exit 2; }
if [ ! -f "$dir/metadata" ] && [ "$dir" = /tmp/bench-ctf/ctf ]; then
  tool="$root/tools/record-sched-trace"
  [ -x "$tool" ] || { echo "$dir missing and $tool not found" >&2; exit 2; }
  echo "recording $dir (hackbench -g 8 -l 4000, about a minute)..." >&2
  "$tool" /tmp/bench-ctf perf -- hackbench -g 8 -l 4000 >/dev/null
fi
[ -f "$dir/metadata" ] || { echo "$dir is not a CTF trace folder (no metadata)" >&2; exit 2; }

tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
measure() {  # label, command... -> appends "wall cpu" to $tmp/label
  local label=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$@" >/dev/null 2>"$tmp/err" || { cat "$tmp/err" >&2; exit 2; }
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
inproc=$("$cli" info "$dir" --bench --repeat "$runs" | awk -F': ' '/"import_s_median"/ { gsub(",", "", $2); print $2 }')
echo "trace:   $dir ($events events, $(du -sh "$dir" | cut -f1)); load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "runs:    $runs each, alternating; medians"
printf "babeltrace2 -c sink.utils.dummy: wall %6.3f s  cpu %6.3f s\n" "$fw" "$fc"
printf "schedlab-cli info:               wall %6.3f s  cpu %6.3f s\n" "$iw" "$ic"
printf "schedlab-cli info --bench (in-process import only): %6.3f s\n" "$inproc"
awk -v iw="$iw" -v fw="$fw" -v ic="$ic" -v fc="$fc" -v ip="$inproc" -v goal="$goal" 'BEGIN {
  printf "ratio (import / floor): wall %.2fx  cpu %.2fx  in-process %.2fx  (goal <= %.2fx wall)\n",
         iw / fw, ic / fc, ip / fw, goal
  exit (iw / fw <= goal) ? 0 : 1 }'
