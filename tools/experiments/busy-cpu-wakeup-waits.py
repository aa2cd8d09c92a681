#!/usr/bin/env python3
"""How long tasks woken onto a busy CPU wait, and which of them are vfork parents.

A wakeup latency p99 of a few hundred wakeups is decided by a handful of long
waits (docs/models.md 8.3, builds' wakeup latency). This counts the
wakeups (sched_wakeup) whose target CPU was running another task, by whether
the waker ran on the target CPU (local) or another (remote) and by how long
the wakee waited for its switch-in: under 100 us, under 1 ms, or longer. It
counts apart the wakeups of a parent by a child it forked (a vfork parent
woken at its child's exec), and prints each wait of 1 ms or more.

  tools/experiments/busy-cpu-wakeup-waits.py TRACE
  tools/experiments/busy-cpu-wakeup-waits.py --by-parent-runtime TRACE

With --by-parent-runtime it counts instead the first wakeup of each forking
parent by its child (a vfork parent woken at the child's exec), by the CPU time
the parent had run since it was forked itself (to the nearest of the spins of
tools/experiments/vfork-wakeup.c, plus 60 us for its fork), and whether the
parent ran within 100 us.

TRACE is a trace.dat (read with `trace-cmd report`) or ftrace text such as
`schedlab-cli replay ... --out FILE` writes.
"""
import collections
import re
import sys

from sched_text import LINE, SWITCH_REPORT, SWITCH_TEXT, lines

WAKEUP_REPORT = re.compile(r"(.+?):(\d+) \[-?\d+\] CPU:(\d+)")
WAKEUP_TEXT = re.compile(r"comm=(.+?) pid=(\d+) prio=-?\d+ target_cpu=(\d+)")
FORK = re.compile(r"pid=(\d+) child_comm=.* child_pid=(\d+)")


SPINS = [0, 100, 300, 500, 650, 800, 1000, 1300, 2000]


def events(path):
    """The forks, wakeups and switches of a trace, in order, parsed."""
    for line in lines(path):
        m = LINE.match(line)
        if not m:
            continue
        comm, pid, cpu, ts, event, rest = m.groups()
        pid, cpu, ts = int(pid), int(cpu), float(ts)
        if event == "sched_process_fork":
            f = FORK.search(rest)
            if f:
                yield "fork", ts, int(f.group(1)), int(f.group(2))
        elif event == "sched_wakeup":
            w = WAKEUP_REPORT.match(rest) or WAKEUP_TEXT.search(rest)
            if w:
                # waker tid, its comm, its CPU; wakee tid, its comm, the target CPU
                yield "wakeup", ts, (pid, comm, cpu), (int(w.group(2)), w.group(1), int(w.group(3)))
        elif event == "sched_switch":
            s = SWITCH_REPORT.match(rest) or SWITCH_TEXT.search(rest)
            if s:
                # CPU; prev tid, comm, state; next tid, comm
                yield "switch", ts, cpu, (int(s.group(2)), s.group(1), s.group(3)), (int(s.group(5)), s.group(4))


def bucket(wait_us):
    return "<100us" if wait_us < 100 else "<1ms" if wait_us < 1000 else ">=1ms"


def by_parent_runtime(path):
    born = set()
    runtime = collections.defaultdict(float)
    running_since = {}
    awaiting = {}  # parent -> the child whose first wakeup of it is awaited
    pending = {}  # parent -> (woken at, its runtime then)
    counts = collections.defaultdict(lambda: [0, 0])
    for kind, ts, *args in events(path):
        if kind == "fork":
            parent, child = args
            born.add(child)
            awaiting[parent] = child
        elif kind == "wakeup":
            (waker, _, _), (wakee, _, _) = args
            if awaiting.get(wakee) == waker:
                del awaiting[wakee]
                if wakee in born:
                    pending[wakee] = (ts, runtime[wakee])
        else:
            _, (prev, _, _), (nxt, _) = args
            if prev in running_since:
                runtime[prev] += ts - running_since.pop(prev)
            running_since[nxt] = ts
            if nxt in pending:
                woken, ran = pending.pop(nxt)
                spin = min(SPINS, key=lambda x: abs(x - (ran * 1e6 - 60)))
                counts[spin][0 if (ts - woken) * 1e6 < 100 else 1] += 1
    for spin in sorted(counts):
        quick, waited = counts[spin]
        print(f"parent ran about {spin:4d} us: {quick + waited:3d} wakeups by its child, {quick:3d} ran within 100 us, "
              f"{waited:3d} waited")


def busy_cpu_waits(path):
    running = {}  # cpu -> (tid, comm)
    parent_of = {}
    pending = {}  # wakee tid -> (ts, locality, vfork parent, wakee comm, running comm, waker comm)
    counts = collections.Counter()
    long_waits = []
    for kind, ts, *args in events(path):
        if kind == "fork":
            parent, child = args
            parent_of[child] = parent
        elif kind == "wakeup":
            (waker, waker_comm, waker_cpu), (wakee, wakee_comm, target) = args
            current = running.get(target, (0, "idle"))
            if current[0] not in (0, wakee):
                pending[wakee] = (ts, "local" if waker_cpu == target else "remote", parent_of.get(waker) == wakee,
                                  wakee_comm, current[1], waker_comm)
        else:
            cpu, (_, prev_comm, prev_state), (nxt, next_comm) = args
            running[cpu] = (nxt, next_comm)
            if nxt in pending:
                woken, locality, vfork, wakee_comm, running_comm, waker = pending.pop(nxt)
                wait_us = (ts - woken) * 1e6
                counts[("all", locality, bucket(wait_us))] += 1
                if vfork:
                    counts[("vfork parent", locality, bucket(wait_us))] += 1
                if wait_us >= 1000:
                    long_waits.append(f"{woken:.6f} {wait_us:8.0f} us  {wakee_comm} ({locality}, woken by {waker}) "
                                      f"behind {running_comm}; in when {prev_comm} left ({prev_state})")
    for key in sorted(counts):
        print(f"{key[0]:13s} {key[1]:7s} {key[2]:7s} {counts[key]}")
    for w in long_waits:
        print(w)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--by-parent-runtime":
        by_parent_runtime(sys.argv[2])
    elif len(sys.argv) == 2:
        busy_cpu_waits(sys.argv[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
