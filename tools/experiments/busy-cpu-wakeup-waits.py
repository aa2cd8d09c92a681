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
  tools/experiments/busy-cpu-wakeup-waits.py --margins TRACE

With --by-parent-runtime it counts instead the first wakeup of each forking
parent by its child (a vfork parent woken at the child's exec), by the CPU time
the parent had run since it was forked itself (to the nearest of the spins of
tools/experiments/vfork-wakeup.c, plus 60 us for its fork), and whether the
parent ran within 100 us.

With --margins (a recording of tools/experiments/vfork-wakeup.c) it puts each
round's entities where EEVDF's vruntimes have them when the child wakes the
parent, from the run times in the trace: the grandparent G ran a us after
placing the parent P (at V) and slept, delayed; P ran b us, placed the child C
at V, ran b2 us more and slept, delayed too; C ran c us and woke P. Equal
weights, vruntimes from P's placement: G = a, P = b + b2, C = (a + b)/2 + c.
It prints which of two rules, with the best threshold for each, separates
the rounds where P preempted C (switched in within 100 us), of those where P
ran less than 650 us (within its first deadline): P - V with G
counted in V (the kernel before 6.18.33), or P - C (G out of the queue, as
the wakeup test dequeues it from 6.18.33: docs/models.md 5.3), and how many
rounds each puts on the wrong side.

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


def vfork_rounds(path):
    """(a, b, b2, c, preempted) per round of vfork-wakeup.c, in us."""
    child_of = {}  # P -> C
    ran_since = {}  # tid -> switch-in time
    state = {}  # P -> the round's times as they come
    for kind, ts, *args in events(path):
        if kind == "fork":
            parent, child = args
            if parent in state and "b" not in state[parent]:
                state[parent]["b"] = ts - ran_since.get(parent, ts)
                state[parent]["cfork"] = ts
                child_of[parent] = child
            else:
                state.setdefault(child, {"pfork": ts, "g": parent})
        elif kind == "wakeup":
            (waker, _, _), (wakee, _, _) = args
            st = state.get(wakee)
            if st and child_of.get(wakee) == waker and "c" not in st and "cin" in st:
                st["c"] = ts - st["cin"]
                st["woken"] = ts
        else:
            _, (prev, _, _), (nxt, _) = args
            ran_since[nxt] = ts
            st = state.get(prev)
            if st and "b" in st and "b2" not in st:
                st["b2"] = ts - st["cfork"]
                st["cin"] = ts
            st = state.get(nxt)
            if st and st["g"] == prev and "a" not in st:
                st["a"] = ts - st["pfork"]
            if st and "woken" in st and "preempted" not in st:
                st["preempted"] = (ts - st["woken"]) * 1e6 < 100
    for st in state.values():
        if all(k in st for k in ("a", "b", "b2", "c", "preempted")):
            yield st["a"] * 1e6, st["b"] * 1e6, st["b2"] * 1e6, st["c"] * 1e6, st["preempted"]


def margins(path):
    # Only the rounds where P ran less than its first deadline (half of the
    # 1.4 ms slice of a two-CPU machine): past it, the fork's update_curr()
    # gives P a new one and reschedules it, which is another story (8.3).
    rounds = [r for r in vfork_rounds(path) if r[1] + r[2] < 650]
    rules = {
        "P - V, G counted in V": lambda a, b, b2, c: (b + b2) - (a + (b + b2) + (a + b) / 2 + c) / 3,
        "P - C, G out of the queue": lambda a, b, b2, c: (b + b2) - ((a + b) / 2 + c),
    }
    print(f"{len(rounds)} rounds where the parent ran under 650 us, {sum(r[4] for r in rounds)} preempted")
    for name, rule in rules.items():
        values = [(rule(a, b, b2, c), preempted) for a, b, b2, c, preempted in rounds]
        wrong, threshold = min((sum((v <= t / 2) != p for v, p in values), t / 2) for t in range(-200, 201))
        print(f"{name:26s}: preempted when <= {threshold:5.1f} us: {wrong} rounds on the wrong side")


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
    elif len(sys.argv) == 3 and sys.argv[1] == "--margins":
        margins(sys.argv[2])
    elif len(sys.argv) == 2:
        busy_cpu_waits(sys.argv[1])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
