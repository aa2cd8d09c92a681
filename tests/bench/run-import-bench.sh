#!/usr/bin/env bash
# trace.dat import speed and memory against KernelShark's loader (libkshark:
# kshark_open + kshark_load_entries) on one recording of at least 3M events.
# Goals (issue 17): at least 8x as fast, at most a quarter of its peak RSS.
#
# Each reader runs in its own process (kshark_load_anchor, and
# tracedat_import_benchmark --once, which is importers::importTrace: probe,
# read, finalize), RUNS times, alternately, so both see the same machine load;
# each reports its import wall time and its peak RSS (getrusage). The medians
# and their ratios are printed; `schedlab-cli info --bench` runs once for
# reference when it is built. Records the trace first when it is missing:
#   BUFFER_KB=524288 record-sched-trace DIR tracedat -- hackbench -g 8 -l 15000
#
# usage: tests/bench/run-import-bench.sh [TRACE_DAT] [BUILD_DIR] [RUNS]
#   TRACE_DAT  default /tmp/bench-tracedat/trace.dat
#   BUILD_DIR  default: the first build*/ of this checkout with both programs
#              built (ninja tracedat_import_benchmark kshark_load_anchor)
#   RUNS       default 5
# Exit status: 0 when both goals are met, 1 when not, 2 on setup errors.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
file=${1:-/tmp/bench-tracedat/trace.dat}
build=${2:-}
runs=${3:-5}
speed_goal=8
rss_goal=4

if [ -z "$build" ]; then
  for b in "$root"/build*/; do
    if [ -x "$b/tests/bench/tracedat_import_benchmark" ] && [ -x "$b/tests/bench/kshark_load_anchor" ]; then
      build=$b
      break
    fi
  done
fi
ours=$build/tests/bench/tracedat_import_benchmark
anchor=$build/tests/bench/kshark_load_anchor
[ -n "$build" ] && [ -x "$ours" ] && [ -x "$anchor" ] || {
  echo "build tracedat_import_benchmark and kshark_load_anchor first, or pass the build folder" >&2
  exit 2
}

if [ ! -f "$file" ]; then
  recorder=${RECORDER:-$root/tools/record-sched-trace}
  [ -x "$recorder" ] || { echo "$file missing and no recorder at $recorder" >&2; exit 2; }
  echo "recording $file (hackbench -g 8 -l 15000, 512 MB per-CPU buffer) ..." >&2
  BUFFER_KB=524288 "$recorder" "$(dirname "$file")" tracedat -- hackbench -g 8 -l 15000 >/dev/null
fi

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
json() { sed -n "s/.*\"$1\": *\([0-9.e+-]*\).*/\1/p"; }

first=$("$ours" --once "$file")
events=$(echo "$first" | json events)
echo "trace: $file ($(du -h "$file" | cut -f1), $events events)"
if [ "${events:-0}" -lt 3000000 ]; then
  echo "warning: only $events events; the goals are stated for >= 3M (record with a larger -l)" >&2
fi

k_t="" k_m="" o_t="" o_m=""
for i in $(seq "$runs"); do
  k=$("$anchor" "$file")
  o=$("$ours" --once "$file")
  k_t="$k_t $(echo "$k" | json seconds)"
  k_m="$k_m $(echo "$k" | json peak_rss_kb)"
  o_t="$o_t $(echo "$o" | json seconds)"
  o_m="$o_m $(echo "$o" | json peak_rss_kb)"
  printf 'run %d: kshark %6.3f s %7d KB   schedlab %6.3f s %7d KB\n' "$i" \
    "$(echo "$k" | json seconds)" "$(echo "$k" | json peak_rss_kb)" \
    "$(echo "$o" | json seconds)" "$(echo "$o" | json peak_rss_kb)"
done

med() { echo "$1" | tr ' ' '\n' | grep . | median; }
kt=$(med "$k_t") km=$(med "$k_m") ot=$(med "$o_t") om=$(med "$o_m")
speed=$(awk -v k="$kt" -v o="$ot" 'BEGIN { printf "%.2f", k / o }')
rss=$(awk -v k="$km" -v o="$om" 'BEGIN { printf "%.3f", o / k }')
echo "median of $runs: kshark $kt s, $km KB peak RSS; schedlab $ot s, $om KB peak RSS"
echo "speed ratio (kshark / schedlab): ${speed}x (goal >= ${speed_goal}x)"
echo "RSS ratio (schedlab / kshark):   $rss (goal <= 1/${rss_goal})"

cli=$build/app/cli/schedlab-cli
if [ -x "$cli" ]; then
  echo "for reference, schedlab-cli info --bench (one process, Qt linked): $("$cli" info "$file" --bench --repeat 3)"
fi

ok=$(awk -v s="$speed" -v r="$rss" -v sg="$speed_goal" -v rg="$rss_goal" 'BEGIN { print (s >= sg && r <= 1 / rg) ? 1 : 0 }')
[ "$ok" = 1 ] && { echo "goals met"; exit 0; }
echo "goals NOT met"
exit 1
