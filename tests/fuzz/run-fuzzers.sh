#!/usr/bin/env bash
# Runs every libFuzzer target built in BUILD_DIR for SECONDS each (default 60;
# `make test` gives each 45), seeded from this format's fixtures and
# corrupt-input corpus in tests/data/<format>/ and, when present, the small real
# traces of ../shared/traces. Any crash, sanitizer report (ASan, UBSan with
# halt_on_error), leak outside the libraries of tests/sanitizers/lsan.supp,
# hang (-timeout: one input taking longer than TIMEOUT s) or memory blow-up
# (-rss_limit_mb / -malloc_limit_mb) fails the run; the input that did it is
# kept in BUILD_DIR/fuzz-artifacts/ and its log tail printed.
#
#   tests/fuzz/run-fuzzers.sh build/fuzz 45          # what `make test` runs
#   FUZZ_SECONDS=600 make test-fuzz                  # the longer local run
#   tests/fuzz/run-fuzzers.sh build/fuzz 600 perfdata   # one fuzzer only
# Reproduce a kept input: build/fuzz/tests/fuzz/<name>_fuzzer ARTIFACT
# (with the same *SAN_OPTIONS as below).
set -euo pipefail
build=${1:-build/fuzz}
seconds=${2:-60}
only=${3:-}
here=$(cd "$(dirname "$0")/../.." && pwd)
shared="$here/../shared/traces"
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
timeout_s=${FUZZ_TIMEOUT:-20}
rss_mb=${FUZZ_RSS_MB:-2048}

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:allocator_may_return_null=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$here/tests/sanitizers/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# CTF seeds carry a selector byte in front (tests/fuzz/ctf_fuzzer.cpp): which
# fixture's metadata the rest of the input is a stream of.
ctf_seeds() {
  local corpus=$1 f
  for f in "$here"/tests/data/ctf/perf-sleep/ctf/perf_stream_*; do
    [ -f "$f" ] && { printf '\0'; cat "$f"; } > "$corpus/perf-sleep-$(basename "$f")"
  done
  for f in "$here"/tests/data/ctf/synthetic-lttng/chan_*; do
    [ -f "$f" ] && { printf '\1'; cat "$f"; } > "$corpus/synthetic-$(basename "$f")"
  done
  for f in "$here"/tests/data/ctf/corrupt/seeds/*.stream; do
    [ -f "$f" ] && cp "$f" "$corpus/"
  done
  return 0
}

status=0
ran=0
for fuzzer in "$build"/tests/fuzz/*_fuzzer; do
  [ -x "$fuzzer" ] || continue
  name=$(basename "$fuzzer" _fuzzer)
  [ -z "$only" ] || [ "$only" = "$name" ] || continue
  corpus=$(mktemp -d)
  case $name in
    perfdata) data=perf ;;
    *) data=$name ;;
  esac
  if [ "$name" = ctf ]; then
    ctf_seeds "$corpus"
  else
    # This format's fixtures and corrupt-input corpus (<= 1 MiB each), no scripts or READMEs.
    find "$here/tests/data/$data" -type f -size -1024k ! -name '*.py' ! -name '*.md' \
      -exec cp -t "$corpus" {} + 2>/dev/null || true
    [ "$name" = perfscript ] && find "$here/tests/data/perf" -type f -name '*.txt' -exec cp -t "$corpus" {} +
  fi
  if [ -d "$shared" ]; then
    case $name in
      ftrace) find "$shared" -type f \( -name 'trace.txt' -o -name '*systrace*.txt' -o -name 'ftrace*.txt' \) -size -1024k ;;
      perfscript) find "$shared" -type f -name 'perf-script.txt' -size -1024k ;;
      tracedat) find "$shared" -type f -name '*.dat' -size -1024k ;;
      perfdata) find "$shared" -type f -name 'perf.data*' -size -1024k ;;
      *) true ;;
    esac | head -20 | while read -r f; do cp "$f" "$corpus/shared-$(echo "$f" | md5sum | cut -c1-12)"; done
  fi
  log="$artifacts/$name.log"
  echo "fuzz: $name for ${seconds}s ($(ls "$corpus" | wc -l) seeds)"
  # -max_len: the largest seed decides what mutations may grow to (1 MiB cap).
  if ! "$fuzzer" -max_total_time="$seconds" -max_len=1048576 -timeout="$timeout_s" \
       -rss_limit_mb="$rss_mb" -malloc_limit_mb="$rss_mb" -artifact_prefix="$artifacts/$name-" \
       -print_final_stats=1 "$corpus" > "$log" 2>&1; then
    echo "fuzz: $name FAILED (log: $log; inputs: $artifacts/$name-*)"
    tail -60 "$log"
    status=1
  else
    grep -E '^stat::number_of_executed_units' "$log" | sed "s/^/fuzz: $name /" || true
  fi
  rm -rf "$corpus"
  ran=$((ran + 1))
done
if [ "$ran" -eq 0 ]; then
  echo "fuzz: no fuzzer found in $build/tests/fuzz (build the 'fuzzers' target of the fuzz preset)"
  exit 1
fi
exit $status
