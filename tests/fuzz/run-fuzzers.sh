#!/usr/bin/env bash
# Runs every libFuzzer target built in BUILD_DIR for SECONDS each (default 60;
# `make test` gives each 45), from its committed corpus tests/fuzz/corpus/<name>/
# (small minimised inputs) with the format's dictionary tests/fuzz/dict/<name>.dict
# and a -max_len suited to the format (below). Any crash, sanitizer report
# (ASan, UBSan with halt_on_error), leak outside the third-party allocations of
# tests/sanitizers/lsan.supp, hang (-timeout: one input taking longer than
# TIMEOUT s) or memory blow-up (-rss_limit_mb / -malloc_limit_mb) fails the run;
# the input that did it is kept in BUILD_DIR/fuzz-artifacts/ and its log tail
# printed (for ctf, leaks are checked after the search: leaks_checked_after
# below). So does a fuzzer that executes fewer inputs than it should
# (min_execs_of below: 20,000 per 45 s of a core, in proportion to SECONDS and
# to the CPU time it had where the machine is shared; FUZZ_MIN_EXECS
# overrides): one that slow explores little, and a drop in its pace is a
# regression of the code's speed on small inputs or of the corpus. The
# fuzzers run FUZZ_JOBS at a time (default: one per CPU).
#
#   tests/fuzz/run-fuzzers.sh build/fuzz 45          # what `make test` runs
#   FUZZ_SECONDS=600 FUZZ_GROW=1 make test-fuzz      # the longer local run
#   tests/fuzz/run-fuzzers.sh build/fuzz 600 perfdata   # one fuzzer only
# FUZZ_GROW=1 rewrites tests/fuzz/corpus/<name>/ as the minimal merge of it
# and what the run found (libFuzzer -merge=1 -use_counters=0: the smallest
# inputs that together reach every edge either reached, so the corpus grows in
# coverage, not in bytes); commit the result. The run itself works on a copy,
# so CI never writes into the checkout.
# Reproduce a kept input: build/fuzz/tests/fuzz/<name>_fuzzer ARTIFACT
# (with the same *SAN_OPTIONS as below).
set -euo pipefail
build=${1:-build/fuzz}
seconds=${2:-60}
only=${3:-}
here=$(cd "$(dirname "$0")/../.." && pwd)
artifacts="$build/fuzz-artifacts"
mkdir -p "$artifacts"
timeout_s=${FUZZ_TIMEOUT:-20}
rss_mb=${FUZZ_RSS_MB:-2048}

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:allocator_may_return_null=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
export LSAN_OPTIONS="suppressions=$here/tests/sanitizers/lsan.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"

# The largest input a mutation may grow to: enough for a few events past each
# format's fixed header, small enough that each run is quick.
#   ftrace, perfscript: a header and a dozen event lines.
#   perfdata: the pipe fixture's header, attrs and tracing data (event formats)
#     take ~20 KB before the first sample.
#   tracedat: the zstd fixture, whole (16 KB).
#   perfetto: the tiny fixture, whole (30 KB).
#   ctf: a selector byte and one 4 KB packet.
#   rtapp: a workload of a few tasks; replay_text: a model, a topology, a few parameters.
max_len_of() {
  case $1 in
    ftrace | perfscript) echo 2048 ;;
    perfdata) echo 24576 ;;
    tracedat) echo 16384 ;;
    perfetto) echo 32768 ;;
    ctf) echo 4097 ;;
    rtapp) echo 2048 ;;
    replay_text) echo 512 ;;
    *) echo 4096 ;;
  esac
}

# The executions a fuzzer must reach in SECONDS: 20,000 per 45 s, except
# ctf: every input builds babeltrace2 graphs (source and sink; ~4-8 ms of CPU for
# a one-packet stream under ASan), so 45 s hold 3,600-5,400 (2026-12-02, on a
# host 1.7x slower than the month before). On 2026-12-05's new host, whose page
# faults cost more, `make test` saw 1,600 while the importer still found (and
# dlopen()ed) babeltrace2's plugins for every input; found once per process,
# 5,778 with the fuzzer alone.
min_execs_of() {
  if [ -n "${FUZZ_MIN_EXECS:-}" ]; then echo "$FUZZ_MIN_EXECS"; return; fi
  case $1 in
    ctf) echo $((2000 * seconds / 45)) ;;
    *) echo $((20000 * seconds / 45)) ;;
  esac
}

# Fuzzers whose leak suppressions need ASan's slow unwinder: babeltrace2's
# plugins have no frame pointers, so only DWARF unwinding reaches the frames
# lsan.supp names (ctf_fuzzer.cpp). That unwinder makes every allocation and
# free ~16x dearer (ctf_fuzzer -runs=0 over its corpus: 5.7 s of CPU against
# 0.34 s with fast stacks) and left the search a few hundred inputs. So the
# search runs with fast stacks and no leak checks, and then every input it
# kept (the seeds and what it found, each reaching code the others do not)
# runs once more with full stacks and libFuzzer's per-input leak check.
leaks_checked_after() {
  case $1 in
    ctf) return 0 ;;
    *) return 1 ;;
  esac
}

# One fuzzer: its lines go to stdout, its verdict to the exit status.
run_one() {
  local fuzzer=$1 status=0
  name=$(basename "$fuzzer" _fuzzer)
  seeds="$here/tests/fuzz/corpus/$name"
  dict="$here/tests/fuzz/dict/$name.dict"
  if [ ! -d "$seeds" ] || [ ! -f "$dict" ]; then
    echo "fuzz: $name has no corpus ($seeds) or dictionary ($dict)"
    return 1
  fi
  corpus=$(mktemp -d)
  cp -r "$seeds/." "$corpus/"
  log="$artifacts/$name.log"
  max_len=$(max_len_of "$name")
  min_execs=$(min_execs_of "$name")
  echo "fuzz: $name for ${seconds}s ($(ls "$corpus" | wc -l) seeds, -max_len=$max_len)"
  TIMEFORMAT='%U %S'
  search_asan=$ASAN_OPTIONS
  leak_flag=()
  if leaks_checked_after "$name"; then
    search_asan="$ASAN_OPTIONS:fast_unwind_on_malloc=1:detect_leaks=0"
    leak_flag=(-detect_leaks=0)
  fi
  if ! { time ASAN_OPTIONS=$search_asan "$fuzzer" "${leak_flag[@]}" -max_total_time="$seconds" -max_len="$max_len" -dict="$dict" -timeout="$timeout_s" \
       -rss_limit_mb="$rss_mb" -malloc_limit_mb="$rss_mb" -artifact_prefix="$artifacts/$name-" \
       -print_final_stats=1 "$corpus" > "$log" 2>&1; } 2> "$log.cpu"; then
    echo "fuzz: $name FAILED (log: $log; inputs: $artifacts/$name-*)"
    tail -60 "$log"
    status=1
  else
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    # The minimum is for a core of its own; where other work left the fuzzer
    # less (a shared machine), it is scaled by the CPU time the fuzzer had.
    read -r cpu wanted < <(awk -v t="$(cat "$log.cpu")" -v s="$seconds" -v m="$min_execs" \
      'BEGIN { split(t, a, " "); c = a[1] + a[2]; f = c / s; if (f > 1) f = 1; printf "%.1f %d\n", c, m * f }')
    echo "fuzz: $name ${execs:-?} executions in ${seconds}s, ${cpu}s of CPU (at least $wanted wanted: $min_execs per ${seconds}s of a core)"
    if [ -z "$execs" ] || [ "$execs" -lt "$wanted" ]; then
      echo "fuzz: $name too slow: ${execs:-no} executions (log: $log)"
      status=1
    fi
    if leaks_checked_after "$name"; then
      inputs=$(ls "$corpus" | wc -l)
      if ! "$fuzzer" -runs=0 -timeout="$timeout_s" -rss_limit_mb="$rss_mb" -malloc_limit_mb="$rss_mb" \
           -artifact_prefix="$artifacts/$name-" "$corpus" >> "$log" 2>&1; then
        echo "fuzz: $name FAILED when its $inputs inputs ran again with full stacks and leak checks (log: $log; inputs: $artifacts/$name-*)"
        tail -60 "$log"
        status=1
      else
        echo "fuzz: $name no leak in its $inputs inputs (run again with full stacks)"
      fi
    fi
    if [ "${FUZZ_GROW:-0}" = 1 ]; then
      # Into an empty folder, smallest inputs first: the code the corpus and
      # this run reached, in as few and as small inputs as libFuzzer keeps.
      before=$(ls "$seeds" | wc -l)
      fresh=$(mktemp -d)
      ASAN_OPTIONS=$search_asan "$fuzzer" "${leak_flag[@]}" -merge=1 -use_counters=0 -max_len="$max_len" -timeout="$timeout_s" -rss_limit_mb="$rss_mb" \
        "$fresh" "$seeds" "$corpus" >> "$log" 2>&1 || { echo "fuzz: $name merge failed (log: $log)"; status=1; }
      # libFuzzer names inputs by their SHA-1; other names are regression
      # seeds (what an input once broke, corpus/README.md): they stay.
      if [ -n "$(ls "$fresh")" ]; then
        find "$seeds" -type f -regextype posix-extended -regex '.*/[0-9a-f]{40}' -delete
        cp -n "$fresh"/* "$seeds"/
      fi
      rm -rf "$fresh"
      echo "fuzz: $name corpus $before -> $(ls "$seeds" | wc -l) inputs ($(cat "$seeds"/* | wc -c) bytes)"
    fi
  fi
  rm -rf "$corpus"
  return $status
}

# A fuzzer keeps about one core busy (ctf's importer builds the model on a
# second thread, briefly), so FUZZ_JOBS of them (default: the CPUs) run side
# by side; their minimums already follow the CPU time each had. Their lines
# are printed whole, in order, once all have finished.
jobs_max=${FUZZ_JOBS:-$(nproc)}
names=()
for fuzzer in "$build"/tests/fuzz/*_fuzzer; do
  [ -x "$fuzzer" ] || continue
  name=$(basename "$fuzzer" _fuzzer)
  [ -z "$only" ] || [ "$only" = "$name" ] || continue
  while [ "$(jobs -rp | wc -l)" -ge "$jobs_max" ]; do wait -n || true; done
  ( if run_one "$fuzzer" > "$artifacts/$name.out" 2>&1; then echo 0; else echo 1; fi > "$artifacts/$name.status" ) &
  names+=("$name")
done
wait
status=0
for name in "${names[@]}"; do
  cat "$artifacts/$name.out"
  [ "$(cat "$artifacts/$name.status")" = 0 ] || status=1
done
if [ "${#names[@]}" -eq 0 ]; then
  echo "fuzz: no fuzzer found in $build/tests/fuzz (build the 'fuzzers' target of the fuzz preset)"
  exit 1
fi
exit $status
