#!/usr/bin/env python3
"""How close a recording's blocks came to not happening.

A replay keeps a recorded block on a task's wakeup only while the waker is
still behind the point of its own work where it woke the sleeper (README
"Replay fidelity", docs/fidelity.md). This measures, for every block of a task of COMM that a
task of COMM woke, how much CPU time the waker ran between the sleeper's
switch-out and its wakeup (the slack: how far the two tasks' progress could
drift apart before the block would not have happened), and whether the waker
was running on another CPU when the sleeper blocked.

  tools/experiments/block-slack.py TRACE [--comm hackbench]

TRACE is a trace.dat (read with `trace-cmd report`) or ftrace text such as
`schedlab-cli replay ... --out FILE` writes.
"""
import argparse
import bisect
import collections
import re
import sys

from sched_text import LINE, SWITCH_REPORT, SWITCH_TEXT, lines

WAKING = re.compile(r"comm=(.+?) pid=(\d+)")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--comm", default="hackbench")
    args = ap.parse_args()

    running = {}  # cpu -> (tid, since)
    runs = collections.defaultdict(list)  # tid -> [(start, end)], in time order
    asleep = {}  # tid -> block time
    blocks = []  # (blocked at, woken at, waker)
    for line in lines(args.trace):
        m = LINE.match(line)
        if not m:
            continue
        comm, pid, cpu, ts, event, rest = m.groups()
        t = float(ts) * 1e6
        if event == "sched_switch":
            s = SWITCH_REPORT.match(rest) or SWITCH_TEXT.search(rest)
            if not s:
                continue
            prev_comm, prev, state, _, nxt = s.groups()
            if cpu in running:
                tid, since = running[cpu]
                runs[tid].append((since, t))
            running[cpu] = (int(nxt), t)
            if not state.startswith("R") and prev_comm == args.comm:
                asleep[int(prev)] = t
        elif event == "sched_waking" and comm == args.comm:
            w = WAKING.match(rest)
            if w and int(w.group(2)) in asleep:
                blocks.append((asleep.pop(int(w.group(2))), t, int(pid)))
    if not blocks:
        sys.exit(f"{args.trace}: no block of a {args.comm} task woken by another")

    starts = {tid: [a for a, _ in r] for tid, r in runs.items()}

    def ran(tid, a, b):
        r, i = runs[tid], max(0, bisect.bisect_right(starts[tid], a) - 1)
        total = 0.0
        while i < len(r) and r[i][0] < b:
            total += max(0.0, min(b, r[i][1]) - max(a, r[i][0]))
            i += 1
        return total

    def on_cpu(tid, t):
        r, i = runs[tid], bisect.bisect_right(starts[tid], t) - 1
        return i >= 0 and r[i][0] <= t < r[i][1]

    slack = sorted(ran(w, a, b) for a, b, w in blocks)
    gaps = sorted(b - a for a, b, _ in blocks)
    n = len(blocks)
    q = lambda v, p: v[min(n - 1, int(p * n))]
    print(f"{n} blocks of {args.comm} tasks woken by another")
    print(f"waker running on another CPU when the sleeper blocked: {sum(on_cpu(w, a) for a, _, w in blocks) / n:.0%}")
    print("waker's CPU time from the block to its wakeup (us): " +
          "  ".join(f"p{int(p * 100)} {q(slack, p):.0f}" for p in (0.1, 0.25, 0.5, 0.75, 0.9)))
    print("wall time from the block to its wakeup (us):        " +
          "  ".join(f"p{int(p * 100)} {q(gaps, p):.0f}" for p in (0.1, 0.25, 0.5, 0.75, 0.9)))


if __name__ == "__main__":
    main()
