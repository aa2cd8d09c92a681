#!/usr/bin/env bash
# Runs every libFuzzer target built in BUILD_DIR for SECONDS each, seeded from
# the fixtures in tests/data/<format>/ and, when present, the real traces in
# ../shared/traces. A crash, leak, hang (-timeout) or sanitizer report fails.
# Locally, run longer: tests/fuzz/run-fuzzers.sh build/fuzz 3600
set -euo pipefail
build=${1:-build/fuzz}
seconds=${2:-60}
here=$(cd "$(dirname "$0")/../.." && pwd)
shared="$here/../shared/traces"
status=0
for fuzzer in "$build"/tests/fuzz/*_fuzzer; do
  [ -x "$fuzzer" ] || continue
  name=$(basename "$fuzzer" _fuzzer)
  corpus=$(mktemp -d)
  # Seeds: this format's fixtures, then real traces of the same kind (<= 1 MiB each).
  case $name in perfdata) data=perf ;; *) data=$name ;; esac
  find "$here/tests/data/$data" -type f -size -1024k -exec cp -t "$corpus" {} + 2>/dev/null || true
  if [ -d "$shared" ]; then
    case $name in
      ftrace) find "$shared" -type f \( -name 'trace.txt' -o -name 'atrace*' -o -name '*.txt' \) -size -1024k ;;
      perfscript) find "$shared" -type f -name 'perf-script.txt' -size -1024k ;;
      tracedat) find "$shared" -type f -name '*.dat' -size -1024k ;;
      perfdata) find "$shared" -type f -name 'perf.data*' -size -1024k ;;
      *) true ;;
    esac | head -20 | while read -r f; do cp "$f" "$corpus/$(echo "$f" | md5sum | cut -c1-12)"; done
  fi
  echo "fuzz: $name for ${seconds}s ($(ls "$corpus" | wc -l) seeds)"
  if ! "$fuzzer" -max_total_time="$seconds" -max_len=1048576 -timeout=20 -rss_limit_mb=4096 \
       -print_final_stats=0 "$corpus" > "$corpus.log" 2>&1; then
    echo "fuzz: $name FAILED"; tail -60 "$corpus.log"; status=1
  else
    grep -E '^#[0-9]+.*DONE' "$corpus.log" | tail -1 || true
  fi
  rm -rf "$corpus" "$corpus.log"
done
exit $status
