#!/usr/bin/env bash
# Perfetto import speed against trace.dat's, on the same recording: a hackbench
# trace.dat of about 3M events and its Perfetto export (`schedlab-cli export`),
# each imported with `schedlab-cli info FILE --bench --repeat 1`, alternately
# (RUNS times each) so both see the same machine load; the medians are
# compared. Goal: the Perfetto import takes at most 1.5x the trace.dat import.
# Records the trace first when it is missing:
#   BUFFER_KB=524288 record-sched-trace DIR tracedat -- hackbench -g 8 -l 15000
#
# usage: tests/bench/perfetto_import_bench.sh [TRACE_DAT] [SCHEDLAB_CLI] [RUNS]
#   TRACE_DAT     default /tmp/bench-tracedat/trace.dat (its export is written beside it)
#   SCHEDLAB_CLI  default: the first build*/app/cli/schedlab-cli of this checkout
#   RUNS          default 5
# Exit status: 0 when the ratio is <= 1.5, 1 when not, 2 on setup errors.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
file=${1:-/tmp/bench-tracedat/trace.dat}
cli=${2:-}
runs=${3:-5}
goal=1.5

if [ -z "$cli" ]; then
  for c in "$root"/build*/app/cli/schedlab-cli; do
    if [ -x "$c" ]; then cli=$c; break; fi
  done
fi
[ -n "$cli" ] && [ -x "$cli" ] || { echo "schedlab-cli not found; build it or pass it as the second argument" >&2; exit 2; }

if [ ! -f "$file" ]; then
  recorder=${RECORDER:-$root/tools/record-sched-trace}
  [ -x "$recorder" ] || { echo "$file missing and no recorder at $recorder" >&2; exit 2; }
  echo "recording $file (hackbench -g 8 -l 15000) ..." >&2
  BUFFER_KB=${BUFFER_KB:-524288} "$recorder" "$(dirname "$file")" tracedat -- hackbench -g 8 -l 15000 >/dev/null
fi
exported="${file%.dat}.perfetto-trace"
"$cli" export "$file" -o "$exported" >/dev/null || { echo "export of $file failed" >&2; exit 2; }

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
json() { sed -n "s/.*\"$1\": *\([0-9.e+-]*\).*/\1/p"; }

dat_times=""
pf_times=""
for i in $(seq "$runs"); do
  dat_times="$dat_times $("$cli" info "$file" --bench --repeat 1 | json import_s_median)"
  pf_times="$pf_times $("$cli" info "$exported" --bench --repeat 1 | json import_s_median)"
done
dat_median=$(echo "$dat_times" | tr ' ' '\n' | grep . | median)
pf_median=$(echo "$pf_times" | tr ' ' '\n' | grep . | median)
ratio=$(awk -v d="$dat_median" -v p="$pf_median" 'BEGIN { printf "%.2f", p / d }')

echo "trace.dat:      $file ($(stat -c %s "$file") bytes), median ${dat_median} s  (runs:${dat_times})"
echo "perfetto:       $exported ($(stat -c %s "$exported") bytes), median ${pf_median} s  (runs:${pf_times})"
echo "ratio:          ${ratio}x (goal <= ${goal}x)"
awk -v r="$ratio" -v g="$goal" 'BEGIN { exit !(r <= g) }'
