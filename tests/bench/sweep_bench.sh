#!/usr/bin/env bash
# Local sweep throughput: a sweep of every recording of ../shared/traces/recorded
# (trace.txt and trace.dat) x cfs, eevdf, bfs x 4 seeds (104 replays) with the
# local runner at its default worker count, into a fresh results folder.
# Goal (issue 20): wall time at most 1.2 x the jobs' summed CPU time divided by
# the workers. Prints the runner's --bench line: wall_over_cpu_per_worker is
# that ratio; worker_occupancy (the jobs' summed wall time over wall x workers)
# says whether the runner kept every worker going, which is what it controls;
# on a machine others are loading, the first misses the goal while the second
# stays near 1, and loadavg_before/after tell which case a run was.
#
# usage: tests/bench/sweep_bench.sh [BUILD_DIR] [TRACES_DIR]
#   BUILD_DIR   default build/dev of this checkout
#   TRACES_DIR  default ../shared/traces/recorded beside the checkout
# Exit status: 0 when the goal is met, 1 when not, 2 on setup errors.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-$root/build/dev}
traces=${2:-$root/../shared/traces/recorded}
goal=1.2
cli=$build/app/cli/schedlab-cli
[ -x "$cli" ] || { echo "sweep_bench: no $cli (build it first)"; exit 2; }
compgen -G "$traces/*/trace.dat" >/dev/null || { echo "sweep_bench: no recordings in $traces"; exit 2; }

out=$(mktemp -d /tmp/sweep-bench.XXXXXX)
trap 'rm -rf "$out"' EXIT
line=$("$cli" sweep -o "$out/results" --trace "$traces/*/trace.txt" --trace "$traces/*/trace.dat" \
  --model cfs --model eevdf --model bfs --param seed=1,2,3,4 --bench 2>/dev/null | tail -1)
echo "$line"
ratio=$(sed -n 's/.*"wall_over_cpu_per_worker":\([0-9.]*\).*/\1/p' <<<"$line")
[ -n "$ratio" ] || { echo "sweep_bench: no --bench line"; exit 2; }
if awk -v r="$ratio" -v g="$goal" 'BEGIN { exit !(r <= g) }'; then
  echo "sweep_bench: wall / (CPU / workers) = $ratio <= $goal: goal met"
else
  echo "sweep_bench: wall / (CPU / workers) = $ratio > $goal: goal missed"
  exit 1
fi
