#!/usr/bin/env bash
# The seed-000 experiment (Alfred Chen's kernel build at 50-300% load,
# docs/models.md §6.2): a parallel C build at 50/100/150/300% load
# (make -j N/2, N, 1.5N, 3N on this machine's N CPUs), recorded with
# tools/record-sched-trace, then replayed through the
# BFS-family models (bfs, gc, vrq) and the baseline (cfs, eevdf) on the
# recorded topology. Prints the makespans, each load's time relative to 100%,
# and the spread between bfs, gc and vrq.
#
# usage: replay/seed000-experiment.sh [--rerecord]
#   SCHEDLAB_CLI  schedlab-cli to use (default: the first built one found)
#   OUT           where traces and the generated project live (default /tmp/seed000)
#   FORMAT        ftrace (default) or tracedat
#   FILES         source files in the generated project (default 32)
#   TASKS         tree:make (default): replay only make and its descendants, so other
#                 load on the recording machine does not count; all: everything traced
# Recording needs root and tracefs (record-sched-trace); existing traces are
# reused unless --rerecord is given.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
recorder=${RECORDER:-$root/tools/record-sched-trace}
OUT=${OUT:-/tmp/seed000}
FORMAT=${FORMAT:-ftrace}
FILES=${FILES:-32}
TASKS=${TASKS:-tree:make}
rerecord=0
[ "${1:-}" = "--rerecord" ] && rerecord=1

cli=${SCHEDLAB_CLI:-}
if [ -z "$cli" ]; then
  for c in "$root"/build/app/cli/schedlab-cli "$root"/build-*/app/cli/schedlab-cli; do
    [ -x "$c" ] && { cli=$c; break; }
  done
fi
[ -x "${cli:-}" ] || { echo "seed000: no schedlab-cli found; set SCHEDLAB_CLI" >&2; exit 1; }
command -v jq >/dev/null || { echo "seed000: needs jq" >&2; exit 1; }

ncpu=$(nproc)
half=$(( ncpu / 2 > 0 ? ncpu / 2 : 1 ))
jobs=("$half" "$ncpu" "$(( ncpu * 3 / 2 ))" "$(( ncpu * 3 ))")
loads=(50 100 150 300)
trace_name=trace.txt
[ "$FORMAT" = tracedat ] && trace_name=trace.dat

# A generated C project: FILES translation units that each keep cc1 busy for a
# fraction of a second, and a link step, so make -jN has real parallel work.
project=$OUT/project
if [ ! -f "$project/Makefile" ]; then
  mkdir -p "$project/src"
  for i in $(seq 1 "$FILES"); do
    {
      echo "/* generated for the seed-000 experiment */"
      for f in $(seq 1 60); do
        echo "static double f${f}(double x, int n) {"
        echo "  double s = 0; for (int k = 0; k < n; ++k) { s += (x * k + ${f}) / (k + 1.0);"
        echo "    if (s > 1e9) s -= 1e9; for (int j = 0; j < ${f} % 7 + 2; ++j) s = s * 0.5 + j; }"
        echo "  return s; }"
      done
      echo "double unit${i}(int n) { double s = 0;"
      for f in $(seq 1 60); do echo "  s += f${f}(s + ${i}, n);"; done
      echo "  return s; }"
    } > "$project/src/u$i.c"
  done
  {
    echo "SRCS := \$(wildcard src/*.c)"
    echo "OBJS := \$(SRCS:.c=.o)"
    echo "prog: \$(OBJS) main.o"
    echo "	\$(CC) -o \$@ \$^"
    echo "%.o: %.c"
    echo "	\$(CC) -O2 -c \$< -o \$@"
    echo "clean:"
    echo "	rm -f \$(OBJS) main.o prog"
  } > "$project/Makefile"
  {
    echo "#include <stdio.h>"
    for i in $(seq 1 "$FILES"); do echo "double unit$i(int n);"; done
    echo "int main(void) { double s = 0;"
    for i in $(seq 1 "$FILES"); do echo "  s += unit$i(10);"; done
    echo "  printf(\"%f\\n\", s); return 0; }"
  } > "$project/main.c"
fi

for idx in 0 1 2 3; do
  j=${jobs[$idx]}
  dir=$OUT/j$j
  if [ $rerecord = 1 ] || [ ! -s "$dir/$trace_name" ]; then
    make -s -C "$project" clean >/dev/null
    sync
    echo "seed000: recording make -j$j ..." >&2
    "$recorder" "$dir" "$FORMAT" -- make -s -C "$project" -j"$j" >/dev/null
  fi
done

makespan() {  # FILE MODEL -> makespan in ms (replay), or recorded with MODEL=recorded
  local json
  json=$("$cli" replay "$1" --model "${2/recorded/cfs}" --tasks "$TASKS" --json 2>/dev/null) || { echo "nan"; return; }
  if [ "$2" = recorded ]; then
    echo "$json" | jq '.validation.makespan_recorded_ns / 1e6'
  else
    echo "$json" | jq '.validation.makespan_replay_ns / 1e6'
  fi
}

models=(recorded bfs gc vrq cfs eevdf)
declare -A ms
for idx in 0 1 2 3; do
  j=${jobs[$idx]}
  for m in "${models[@]}"; do ms[$j,$m]=$(makespan "$OUT/j$j/$trace_name" "$m"); done
done

echo "Seed-000 experiment on $ncpu CPUs ($(uname -r)), $FILES-file C build, traces in $OUT ($FORMAT), replayed tasks: $TASKS"
echo "Makespan of the build (ms) and, in brackets, relative to the same model at 100% load:"
printf "%-6s %-6s" "load" "make"
for m in "${models[@]}"; do printf " %17s" "$m"; done
printf " %12s\n" "bfs/gc/vrq"
ref=${jobs[1]}
for idx in 0 1 2 3; do
  j=${jobs[$idx]}
  printf "%-6s %-6s" "${loads[$idx]}%" "-j$j"
  for m in "${models[@]}"; do
    printf " %9.1f [%4.2fx]" "${ms[$j,$m]}" "$(echo "${ms[$j,$m]} / ${ms[$ref,$m]}" | bc -l)"
  done
  # Spread between the three BFS-family models: (max - min) / min.
  spread=$(printf "%s\n" "${ms[$j,bfs]}" "${ms[$j,gc]}" "${ms[$j,vrq]}" | sort -g | awk 'NR==1{lo=$1} {hi=$1} END{printf "%.2f%%", 100*(hi-lo)/lo}')
  printf " %12s\n" "$spread"
done
