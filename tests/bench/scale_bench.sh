#!/usr/bin/env bash
# Big traces (issue 17): memory and time to open a SYNTHETIC trace of EVENTS
# events (default 50M) at 2 and at 128 CPUs, written by synth_trace_gen (made-up
# workloads, labelled as such in the files; no machine here can record 50M
# events of 128 CPUs).
#
# For each trace and format:
#   model B/event     `schedlab-cli info --bench`: model_bytes / events
#                     (goals: <= 24 at 2 CPUs, <= 32 at 128 CPUs)
#   CLI import        wall time of `schedlab-cli info FILE`, and its peak RSS
#   GUI first paint   `schedlab --timing`: first paint after open, and the
#                     peak RSS at that moment (goal: <= 1.2x the CLI import,
#                     <= 40 B/event); also the peak RSS once the statistics and
#                     every tab are loaded
# CLI and GUI runs alternate RUNS times (medians), so both see the same load.
#
# usage: tests/bench/scale_bench.sh [EVENTS] [DIR] [RUNS] [FORMATS]
#   EVENTS   default 50000000
#   DIR      where the traces are written and kept, default /tmp/schedlab-scale
#   RUNS     default 3
#   FORMATS  any of "dat perfdata ftrace perfscript", default "dat" (text at
#            50M events is about 7 GB per file, perf.data about 6 GB)
# Needs the dev build (build/dev): schedlab-cli, schedlab, synth_trace_gen.
# Exit status: 0 when every goal holds, 1 when one does not, 2 on setup errors.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
events=${1:-50000000}
dir=${2:-/tmp/schedlab-scale}
runs=${3:-3}
formats=${4:-dat}
build=${SCHEDLAB_BUILD:-$root/build/dev}
cli=$build/app/cli/schedlab-cli
gui=$build/app/gui/schedlab
gen=$build/tests/bench/synth_trace_gen
for b in "$cli" "$gen"; do
  [ -x "$b" ] || { echo "$b not built (cmake --build $build)" >&2; exit 2; }
done
mkdir -p "$dir"

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
json() { sed -n "s/.*\"$1\": *\([0-9.e+-]*\).*/\1/p"; }
med() { printf '%s\n' "$@" | grep . | median; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
ok=1
check() {  # check LABEL VALUE OP GOAL
  local pass
  pass=$(awk -v r="$2" -v g="$4" -v op="$3" 'BEGIN { print (op == ">=" ? r >= g : r <= g) ? "met" : "NOT met" }')
  printf '  %-52s %8s (goal %s %s): %s\n' "$1" "$2" "$3" "$4" "$pass"
  [ "$pass" = met ] || ok=0
}

echo "SYNTHETIC traces (synth_trace_gen), $events events; $runs alternating runs; $(nproc) CPUs; $(uptime | sed 's/.*load/load/')"
for cpus in 2 128; do
  for format in $formats; do
    case $format in
      dat) file=$dir/synth-${cpus}cpu-$events.dat; flag=--dat ;;
      ftrace) file=$dir/synth-${cpus}cpu-$events.ftrace.txt; flag=--ftrace ;;
      perfscript) file=$dir/synth-${cpus}cpu-$events.perf-script.txt; flag=--perf-script ;;
      perfdata) file=$dir/synth-${cpus}cpu-$events.perf.data; flag=--perf-data ;;
      *) echo "unknown format $format" >&2; exit 2 ;;
    esac
    if [ ! -s "$file" ]; then
      echo "writing $file ..."
      "$gen" --events "$events" --cpus "$cpus" "$flag" "$file.tmp" && mv "$file.tmp" "$file"
    fi
    info=$("$cli" info "$file" --bench --repeat 1)
    n=$(echo "$info" | json events)
    model=$(echo "$info" | json model_bytes_per_event)
    declare -a cliWall=() cliRss=() paint=() paintRss=() allRss=()
    for _ in $(seq "$runs"); do
      t=$( { /usr/bin/time -f '%e %M' "$cli" info "$file" >/dev/null; } 2>&1 | tail -1)
      cliWall+=("$(echo "$t" | cut -d' ' -f1)")
      cliRss+=("$(echo "$t" | cut -d' ' -f2)")
      if [ -x "$gui" ]; then
        log=$(QT_QPA_PLATFORM=offscreen "$gui" --timing --screenshot "$dir/shot-${cpus}cpu-$format.png" "$file" 2>&1 || true)
        paint+=("$(echo "$log" | sed -n 's/.*first paint \([0-9.]*\) ms after open, peak RSS \([0-9.]*\) MiB.*/\1/p' | head -1)")
        paintRss+=("$(echo "$log" | sed -n 's/.*first paint [0-9.]* ms after open, peak RSS \([0-9.]*\) MiB.*/\1/p' | head -1)")
        allRss+=("$(echo "$log" | sed -n 's/.*everything loaded .* peak RSS \([0-9.]*\) MiB.*/\1/p' | head -1)")
      fi
    done

    cw=$(med "${cliWall[@]}")
    cr=$(med "${cliRss[@]}")
    echo "$cpus CPUs, $format: $file ($n events)"
    printf '  CLI import: wall %s s (runs: %s), peak RSS %.1f B/event\n' "$cw" "${cliWall[*]}" "$(awk -v k="$cr" -v n="$n" 'BEGIN { print k * 1024 / n }')"
    check "model bytes/event" "$(printf '%.1f' "$model")" "<=" "$([ "$cpus" = 2 ] && echo 24 || echo 32)"
    if [ -x "$gui" ] && [ -n "${paint[0]:-}" ]; then
      pm=$(med "${paint[@]}")
      pr=$(med "${paintRss[@]}")
      ar=$(med "${allRss[@]}")
      printf '  GUI first paint %.2f s after open (runs, ms: %s)\n' "$(awk -v p="$pm" 'BEGIN { print p / 1000 }')" "${paint[*]}"
      check "GUI first paint / CLI import" "$(ratio "$(awk -v p="$pm" 'BEGIN { print p / 1000 }')" "$cw")" "<=" 1.2
      check "GUI peak RSS at first paint, B/event" "$(awk -v m="$pr" -v n="$n" 'BEGIN { printf "%.1f", m * 1048576 / n }')" "<=" 40
      check "GUI peak RSS with statistics and tabs, B/event" "$(awk -v m="$ar" -v n="$n" 'BEGIN { printf "%.1f", m * 1048576 / n }')" "<=" 40
    fi
  done
done
[ "$ok" = 1 ]
