#!/usr/bin/env bash
# Records the workloads of README "Replay fidelity" with
# ../shared/tools/record-sched-trace (trace.dat and perf.data of each), and
# writes the small ones as this folder's Perfetto fixtures. Needs root, tracefs,
# perf, hackbench and cyclictest (rt-tests), g++ and make.
#   SCHEDLAB_CLI=build/dev/app/cli/schedlab-cli tests/data/fidelity/record.sh OUT_DIR
# then: schedlab-cli fidelity OUT_DIR --formats dat,perf
# AUTOGROUP=0 (or 1) sets kernel.sched_autogroup_enabled while it records and
# puts it back after (docs/fidelity.md: the flat model has no groups).
# SCHEDLAB_CLI=true leaves the committed fixtures as they are.
# SET=variants records the same kinds of workload with other parameters (more
# or fewer groups, threads and loops, -j3, other nice levels), as a check of the
# model on recordings it was not tuned on; it writes no fixtures.
# RECORDER=schedlab-cli records each trace.dat with `schedlab-cli record`
# (SCHEDLAB_CLI must then be a real one), which also saves each task's
# autogroup beside it (README "Recording").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
record=${RECORD_SCHED_TRACE:-$here/../../../../shared/tools/record-sched-trace}
cli=${SCHEDLAB_CLI:-schedlab-cli}
out=$(mkdir -p "${1:?usage: record.sh OUT_DIR}" && cd "$1" && pwd)
if [ -n "${AUTOGROUP:-}" ]; then
  knob=/proc/sys/kernel/sched_autogroup_enabled
  was=$(cat "$knob")
  trap 'echo "$was" > "$knob"' EXIT
  echo "$AUTOGROUP" > "$knob"
fi

# The build: eight small C++ files, each a few hundred ms of g++ -O2.
build=$out/buildproj
mkdir -p "$build"
for i in 1 2 3 4 5 6 7 8; do
  cat > "$build/f$i.cpp" <<CPP
#include <algorithm>
#include <map>
#include <regex>
#include <string>
#include <vector>
int f$i(const std::string& s) {
  std::regex r("([a-z]+)$i([0-9]*)");
  std::smatch m; std::map<std::string, int> mp; std::vector<std::string> v{s};
  std::sort(v.begin(), v.end());
  return std::regex_search(s, m, r) ? int(m.size() + mp.size()) : 1;
}
CPP
done
printf 'OBJS=f1.o f2.o f3.o f4.o f5.o f6.o f7.o f8.o\nall: $(OBJS)\n%%.o: %%.cpp\n\tg++ -O2 -c $< -o $@\nclean:\n\trm -f *.o\n' > "$build/Makefile"

rec() {
  local name=$1; shift
  for fmt in tracedat perf; do
    if [ "$fmt" = tracedat ] && [ "${RECORDER:-}" = schedlab-cli ]; then
      mkdir -p "$out/$name"
      "$cli" record -o "$out/$name/trace.dat" --buffer-kb 65536 -- "$@" >/dev/null
    else
      BUFFER_KB=65536 "$record" "$out/$name" "$fmt" -- "$@" >/dev/null
    fi
  done
  # The scheduler's settings beside each trace, as schedlab-cli record saves them
  # (autogroup, vCPU packing: docs/fidelity.md); a CTF folder's go
  # beside the folder (ctf.sched), where the import looks for them.
  for f in trace.dat perf.data ctf; do
    [ -e "$out/$name/$f" ] || continue
    sysctl -a 2>/dev/null | grep '^kernel\.sched_' > "$out/$name/$f.sched" || true
  done
  echo "$name recorded"
}
hog='while :; do :; done'
if [ "${SET:-main}" = variants ]; then
  rec pipe-proc-50k perf bench sched pipe -l 50000
  rec pipe-threads-50k perf bench sched pipe -T -l 50000
  rec hackbench-proc-g2 hackbench -g 2 -l 300
  rec hackbench-threads-g6 hackbench -T -g 6 -l 60
  rec make-j3 sh -c "make -s -C '$build' clean && make -s -C '$build' -j3"
  rec cyclictest-rt-t4 cyclictest -t 4 -p 50 -i 500 -l 4000 -q
  rec cyclictest-fair-t3 cyclictest -t 3 -p 0 -i 1000 -l 2000 -q
  rec interactive-batch-3hogs bash -c "timeout 2.5 sh -c '$hog' & timeout 2.5 sh -c '$hog' & timeout 2.5 sh -c '$hog' & cyclictest -t 1 -p 0 -i 3000 -l 700 -q; wait"
  rec nicemix-wide bash -c "timeout 2 sh -c '$hog' & nice -n 10 timeout 2 sh -c '$hog' & nice -n -5 timeout 2 sh -c '$hog'; wait"
  rm -rf "$build"
  exit 0
fi
rec pipe-proc perf bench sched pipe -l 20000
rec pipe-threads perf bench sched pipe -T -l 20000
rec hackbench-proc hackbench -g 4 -l 100
rec hackbench-threads hackbench -T -g 4 -l 100
for j in 1 2 4; do rec "make-j$j" sh -c "make -s -C '$build' clean && make -s -C '$build' -j$j"; done
rec cyclictest-rt cyclictest -t 2 -p 80 -i 1000 -l 2000 -q
rec cyclictest-fair cyclictest -t 2 -p 0 -i 2000 -l 1000 -q
rec interactive-batch bash -c "timeout 2.5 sh -c '$hog' & timeout 2.5 sh -c '$hog' & cyclictest -t 1 -p 0 -i 5000 -l 400 -q; wait"
rec nicemix bash -c "timeout 2 sh -c '$hog' & timeout 2 sh -c '$hog' & nice -n 5 timeout 2 sh -c '$hog'; wait"
rm -rf "$build"

# The fixtures: Perfetto is the most compact form SchedLab writes (under 100 KB for these).
for name in make-j2 nicemix interactive-batch cyclictest-fair cyclictest-rt; do
  "$cli" export "$out/$name/trace.dat" -o "$here/$name.perfetto-trace"
done
