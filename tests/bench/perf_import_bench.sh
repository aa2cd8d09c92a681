#!/usr/bin/env bash
# perf.data import speed against the reference reader: `perf script -i FILE >
# /dev/null` versus `schedlab-cli info FILE --bench`, on one recording of at
# least 1M sched events. The importer must be at least 25x faster (issue 17). The two are
# run alternately (RUNS times each) so both see the same machine load; the
# medians are compared. Records the benchmark trace first when it is missing:
#   record-sched-trace DIR perf -- hackbench -g 8 -l 4000
#
# usage: tests/bench/perf_import_bench.sh [PERF_DATA] [SCHEDLAB_CLI] [RUNS]
#   PERF_DATA     default /tmp/bench-perf/perf.data
#   SCHEDLAB_CLI  default: the first build*/app/cli/schedlab-cli of this checkout
#   RUNS          default 5
# Exit status: 0 when the ratio is >= 25, 1 when it is not, 2 on setup errors.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
file=${1:-/tmp/bench-perf/perf.data}
cli=${2:-}
runs=${3:-5}
goal=25

if [ -z "$cli" ]; then
  for c in "$root"/build*/app/cli/schedlab-cli; do
    if [ -x "$c" ]; then cli=$c; break; fi
  done
fi
[ -n "$cli" ] && [ -x "$cli" ] || { echo "schedlab-cli not found; build it or pass it as the second argument" >&2; exit 2; }
command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 2; }

# shellcheck source=tests/bench/bench_perf_trace.sh
. "$here/bench_perf_trace.sh"
ensure_perf_trace "$file" "$root"

now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
json() { sed -n "s/.*\"$1\": *\([0-9.e+-]*\).*/\1/p"; }

events=$("$cli" info "$file" --bench --repeat 1 | json events)
if [ "${events:-0}" -lt 1000000 ]; then
  echo "warning: $file has only $events events; the goal is stated for >= 1M" >&2
fi

perf_times=""
our_times=""
for i in $(seq "$runs"); do
  t0=$(now)
  perf script -i "$file" > /dev/null 2>&1
  t1=$(now)
  perf_times="$perf_times $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')"
  our_times="$our_times $("$cli" info "$file" --bench --repeat 1 | json import_s_median)"
done

perf_median=$(echo "$perf_times" | tr ' ' '\n' | grep . | median)
our_median=$(echo "$our_times" | tr ' ' '\n' | grep . | median)
ratio=$(awk -v p="$perf_median" -v o="$our_median" 'BEGIN { printf "%.1f", p / o }')

echo "file:           $file ($events events)"
echo "perf script:    median ${perf_median} s  (runs:${perf_times})"
echo "schedlab-cli:   median ${our_median} s  (runs:${our_times})"
echo "ratio:          ${ratio}x (goal >= ${goal}x)"
awk -v r="$ratio" -v g="$goal" 'BEGIN { exit !(r >= g) }'
