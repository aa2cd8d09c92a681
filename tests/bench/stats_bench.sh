#!/usr/bin/env bash
# The cost of SchedLab's statistics and of a replay, as a user waits for the
# whole command, against anchors run alternately in the same loop (RUNS times
# each, so every command sees the same machine load); medians compared, in
# wall time and in CPU time (user + system of every thread: the anchors are
# single-threaded, so a margin won on the second core alone does not count).
#
#   stats   `schedlab-cli stats FILE` against `perf sched latency -i FILE` and
#           `perf sched timehist -i FILE` on one perf.data of >= 1M events
#           (issue 17): at least 5x and 8x faster. Records the trace first when
#           it is missing: record-sched-trace DIR perf -- hackbench -g 8 -l 4000
#   replay  `schedlab-cli replay FILE --model baseline` against
#           `schedlab-cli info FILE` (the import alone) on a trace of about 3M
#           events (issue 12): at most 3x.
#
# usage: tests/bench/stats_bench.sh stats  [PERF_DATA] [SCHEDLAB_CLI] [RUNS]
#        tests/bench/stats_bench.sh replay TRACE [SCHEDLAB_CLI] [RUNS]
#   PERF_DATA     default /tmp/bench-perf/perf.data
#   SCHEDLAB_CLI  default: the first build*/app/cli or build/*/app/cli schedlab-cli of this checkout
#   RUNS          default 5
#   PAUSE_S (environment) seconds to sleep before each command, default 0: a
#           user reads one command's output before the next, and on a virtual
#           machine the host takes freed memory back in that time (README
#           "Huge pages"), which back-to-back runs never see.
# Exit status: 0 when every goal holds in wall and in CPU time, 1 when one
# does not, 2 on setup errors.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
mode=${1:-}
case "$mode" in
  stats) file=${2:-/tmp/bench-perf/perf.data} ;;
  replay) file=${2:-} ;;
  *) echo "usage: $0 stats [PERF_DATA] [SCHEDLAB_CLI] [RUNS] | replay TRACE [SCHEDLAB_CLI] [RUNS]" >&2; exit 2 ;;
esac
cli=${3:-}
runs=${4:-5}

if [ -z "$cli" ]; then
  for c in "$root"/build*/app/cli/schedlab-cli "$root"/build/*/app/cli/schedlab-cli; do
    if [ -x "$c" ]; then cli=$c; break; fi
  done
fi
[ -n "$cli" ] && [ -x "$cli" ] || { echo "schedlab-cli not found; build it or pass it as the third argument" >&2; exit 2; }

if [ "$mode" = stats ]; then
  command -v perf >/dev/null || { echo "perf is not installed" >&2; exit 2; }
  # shellcheck source=tests/bench/bench_perf_trace.sh
  . "$here/bench_perf_trace.sh"
  ensure_perf_trace "$file" "$root"
else
  [ -n "$file" ] && [ -f "$file" ] || { echo "replay mode needs a trace file (about 3M events)" >&2; exit 2; }
fi

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
json() { sed -n "s/.*\"$1\": *\([0-9.e+-]*\).*/\1/p"; }

# Runs a command once, output discarded; prints "WALL CPU" in seconds.
measure() {
  local TIMEFORMAT='%R %U %S' t
  t=$( { time "$@" >/dev/null 2>&1; } 2>&1 ) || { echo "failed: $*" >&2; exit 2; }
  echo "$t" | awk '{ printf "%.4f %.4f\n", $1, $2 + $3 }'
}

events=$("$cli" info "$file" --bench --repeat 1 | json events)
if [ "$mode" = stats ] && [ "${events:-0}" -lt 1000000 ]; then
  echo "note: $file has $events sched events by SchedLab's count (perf counts its own); the goal is stated for >= 1M" >&2
fi

if [ "$mode" = stats ]; then
  names=("schedlab-cli stats" "perf sched latency" "perf sched timehist")
  cmds=("$cli stats $file" "perf sched latency -i $file" "perf sched timehist -i $file")
else
  names=("schedlab-cli replay --model baseline" "schedlab-cli info")
  cmds=("$cli replay $file --model baseline" "$cli info $file")
fi
declare -a wall cpu
for _ in $(seq "$runs"); do
  for k in "${!cmds[@]}"; do
    sleep "${PAUSE_S:-0}"
    # shellcheck disable=SC2086  # the command lines are word-split on purpose (paths without spaces)
    read -r w c < <(measure ${cmds[$k]})
    wall[k]="${wall[k]:-} $w"
    cpu[k]="${cpu[k]:-} $c"
  done
done

declare -a wallMed cpuMed
echo "file:   $file ($events events), $runs alternating runs, ${PAUSE_S:-0} s pause before each; $(uptime | sed 's/.*load/load/')"
for k in "${!cmds[@]}"; do
  wallMed[$k]=$(echo "${wall[$k]}" | tr ' ' '\n' | grep . | median)
  cpuMed[$k]=$(echo "${cpu[$k]}" | tr ' ' '\n' | grep . | median)
  printf '%-38s wall median %7.3f s  cpu median %7.3f s  (wall:%s)\n' "${names[$k]}:" "${wallMed[$k]}" "${cpuMed[$k]}" "${wall[$k]}"
done

ok=1
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
check() {  # check LABEL RATIO OP GOAL
  local pass
  pass=$(awk -v r="$2" -v g="$4" -v op="$3" 'BEGIN { print (op == ">=" ? r >= g : r <= g) ? "met" : "NOT met" }')
  printf '%-58s %6sx (goal %s %sx): %s\n' "$1" "$2" "$3" "$4" "$pass"
  [ "$pass" = met ] || ok=0
}
if [ "$mode" = stats ]; then
  check "perf sched latency / schedlab-cli stats, wall" "$(ratio "${wallMed[1]}" "${wallMed[0]}")" ">=" 5
  check "perf sched latency / schedlab-cli stats, cpu" "$(ratio "${cpuMed[1]}" "${cpuMed[0]}")" ">=" 5
  check "perf sched timehist / schedlab-cli stats, wall" "$(ratio "${wallMed[2]}" "${wallMed[0]}")" ">=" 8
  check "perf sched timehist / schedlab-cli stats, cpu" "$(ratio "${cpuMed[2]}" "${cpuMed[0]}")" ">=" 8
else
  check "replay --model baseline / info, wall" "$(ratio "${wallMed[0]}" "${wallMed[1]}")" "<=" 3
  check "replay --model baseline / info, cpu" "$(ratio "${cpuMed[0]}" "${cpuMed[1]}")" "<=" 3
fi
[ "$ok" = 1 ]
