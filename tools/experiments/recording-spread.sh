#!/usr/bin/env bash
# How much do recordings of one command differ from each other? Records
# COMMAND RUNS times with record-sched-trace (trace.dat, the scheduler
# settings beside each) and, for the metrics the fidelity bounds judge
# (README "Replay fidelity"), prints each run's value, their spread, and the
# share of ordered pairs of runs (A as the "recording", B as the "replay")
# whose ratio B/A is outside the bound. A replay, however faithful, is one
# more run of the workload: where two runs of it fail a bound against each
# other, the bound judges the workload's own spread as much as the model.
#
#   sudo tools/experiments/recording-spread.sh OUT_DIR RUNS -- COMMAND [ARGS...]
# Needs root and tracefs, record-sched-trace beside this checkout
# (../shared/tools) or RECORD_SCHED_TRACE, and SCHEDLAB_CLI (default: this
# checkout's release build, else its dev build, else any build* folder's).
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
record=${RECORD_SCHED_TRACE:-$here/../shared/tools/record-sched-trace}
cli=${SCHEDLAB_CLI:-}
for c in "$here"/build/release "$here"/build/dev "$here"/build*; do
  [ -z "$cli" ] && [ -x "$c/app/cli/schedlab-cli" ] && cli=$c/app/cli/schedlab-cli
done
[ -n "$cli" ] || { echo "no schedlab-cli: build it or set SCHEDLAB_CLI" >&2; exit 2; }
out=${1:?usage: recording-spread.sh OUT_DIR RUNS -- COMMAND [ARGS...]}
runs=${2:?usage: recording-spread.sh OUT_DIR RUNS -- COMMAND [ARGS...]}
shift 2
[ "${1:-}" = "--" ] && shift
[ $# -gt 0 ] || { echo "no COMMAND" >&2; exit 2; }
mkdir -p "$out"
for i in $(seq 1 "$runs"); do
  BUFFER_KB=65536 "$record" "$out/run$i" tracedat -- "$@" >/dev/null
  sysctl -a 2>/dev/null | grep '^kernel\.sched_' > "$out/run$i/trace.dat.sched" || true
  "$cli" stats "$out/run$i/trace.dat" --json > "$out/run$i/stats.json"
done
python3 - "$out" "$runs" <<'PY'
import json, statistics, sys
out, runs = sys.argv[1], int(sys.argv[2])
totals = [json.load(open(f"{out}/run{i}/stats.json"))["totals"] for i in range(1, runs + 1)]
# (label, value, bound): the bound says whether replayed value b passes against recorded a.
metrics = [
    ("voluntary switches", lambda t: t["switches_voluntary"], lambda a, b: abs(b - a) <= 0.15 * a),
    ("involuntary switches", lambda t: t["switches_involuntary"], lambda a, b: abs(b - a) <= 0.30 * a),
    ("migrations", lambda t: t["migrations"], lambda a, b: a / 2 <= b <= 2 * a if a else b == 0),
    ("wakeup latency p50 (us)", lambda t: t["wakeup_latency_ns"]["p50"] / 1e3,
     lambda a, b: abs(b - a) <= max(0.30 * a, 2.0)),
    ("wakeup latency p99 (us)", lambda t: t["wakeup_latency_ns"]["p99"] / 1e3, lambda a, b: a / 2 <= b <= 2 * a),
    ("scheduling delay p50 (us)", lambda t: t["sched_delay_ns"]["p50"] / 1e3,
     lambda a, b: abs(b - a) <= max(0.30 * a, 2.0)),
    ("scheduling delay p99 (us)", lambda t: t["sched_delay_ns"]["p99"] / 1e3, lambda a, b: a / 2 <= b <= 2 * a),
]
print(f"| metric | runs 1-{runs} | median | max/min | pairs outside the bound |")
print("|---|---|---|---|---|")
for label, value, within in metrics:
    v = [value(t) for t in totals]
    pairs = [(a, b) for i, a in enumerate(v) for j, b in enumerate(v) if i != j]
    outside = sum(not within(a, b) for a, b in pairs)
    spread = max(v) / min(v) if min(v) > 0 else float("inf")
    shown = " ".join(f"{x:.0f}" if x >= 100 else f"{x:.1f}" for x in v)
    print(f"| {label} | {shown} | {statistics.median(v):.1f} | {spread:.2f} | {outside} of {len(pairs)} |")
PY
