# Sourced by the benchmarks that read the shared perf.data (perf_import_bench.sh,
# stats_bench.sh): records it when it is missing, with the same command, so
# that their figures are taken on the same kind of trace.
#   ensure_perf_trace FILE ROOT   (ROOT: the checkout, for tools/record-sched-trace)
ensure_perf_trace() {
  local file=$1 root=$2 recorder
  [ -f "$file" ] && return 0
  recorder=${RECORDER:-$root/tools/record-sched-trace}
  [ -x "$recorder" ] || { echo "$file missing and no recorder at $recorder" >&2; exit 2; }
  echo "recording $file (hackbench -g 8 -l 4000) ..." >&2
  "$recorder" "$(dirname "$file")" perf -- hackbench -g 8 -l 4000 >/dev/null
}
