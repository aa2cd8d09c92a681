#!/usr/bin/env python3
"""How often a CPU going idle pulled a waiting task at once (newidle balance).

When a CPU's last task blocks, sched_balance_newidle() may pull a queued task
from a busier CPU before the CPU idles. Linux 6.18 gates it (avg_idle against
the balance's measured cost; from 6.18.5 NI_RANDOM, a dice weighted by the
balance's recent success rate), so a recording shows the pulls that happened
and the chances that were passed. This counts both:

- pulls: a switch from a task that blocked to a task the same CPU migrated to
  itself within the last 20 us;
- passed: a switch to idle while another CPU, running a task, had a fair task
  queued that was movable by can_migrate_task()'s reading of cache heat (it
  last ran more than migration_cost, 0.5 ms, before; or never) and was not a
  wakeup still in flight (one to an idle CPU, woken less than 20 us before,
  goes by the wakelist); and how long such a task then waited before it ran
  on the idle CPU, when it did.

Beside each count, the CPU's avg_idle at the time, followed as core.c does
(an average with weight 1/8 of each idle's length, from the CPU going idle to
the next wakeup onto it, capped at 1 ms, twice migration_cost): the cost gate
skips the balance while it is below the balance's cost.

  tools/experiments/newidle-chances.py TRACE...

TRACE is a trace.dat (read with `trace-cmd report`) or ftrace text such as
`schedlab-cli replay ... --out FILE` writes. A replay's newidle balance runs
at every chance (docs/models.md 8.3): the few it passes are ones its own
rules refuse.
"""
import re
import statistics
import sys

from sched_text import LINE, SWITCH_REPORT, SWITCH_TEXT, lines

WAKEUP = re.compile(r"(?:comm=)?(.+?)(?::| pid=)(\d+) (?:\[|prio=)(\d+)\]? (?:CPU:|target_cpu=)(\d+)")
MIGRATE = re.compile(r"pid=(\d+) prio=(\d+) orig_cpu=(\d+) dest_cpu=(\d+)")
PRIO = re.compile(r"\[(\d+)\] \S+ ==>|prev_prio=(\d+)")
MIGRATION_COST = 0.0005
IN_FLIGHT = 20e-6
AVG_IDLE_CAP = 2 * MIGRATION_COST


def count(path):
    queued = {}  # cpu -> fair tids runnable and not running there
    on_cpu = {}  # tid -> cpu whose queue holds it
    running = {}  # cpu -> tid (0: idle)
    last_ran = {}  # tid -> when it last left a CPU
    in_flight_until = {}  # tid -> end of its wakeup's wakelist trip (woken onto an idle CPU)
    pulled_in = {}  # cpu -> (tid, when) of the last task it migrated to itself
    waiting_idle = {}  # cpu -> (since, candidates) after a passed chance
    avg_idle = {}  # cpu -> s
    idle_since = {}  # cpu -> when it went idle, until a wakeup onto it
    pull_avg_idle, passed_avg_idle = [], []
    later = []

    def enqueue(tid, cpu):
        dequeue(tid)
        queued.setdefault(cpu, set()).add(tid)
        on_cpu[tid] = cpu

    def dequeue(tid):
        if tid in on_cpu:
            queued[on_cpu.pop(tid)].discard(tid)

    for line in lines(path):
        m = LINE.match(line)
        if not m:
            continue
        _, _, cpu, ts, event, rest = m.groups()
        cpu, ts = int(cpu), float(ts)
        if event in ("sched_wakeup", "sched_wakeup_new"):
            w = WAKEUP.match(rest)
            if w and int(w.group(3)) >= 100:
                tid, target = int(w.group(2)), int(w.group(4))
                if target in idle_since:
                    a = avg_idle.get(target, AVG_IDLE_CAP)
                    avg_idle[target] = min(AVG_IDLE_CAP, a + (ts - idle_since.pop(target) - a) / 8)
                enqueue(tid, target)
                if not running.get(target):
                    in_flight_until[tid] = ts + IN_FLIGHT
        elif event == "sched_migrate_task":
            g = MIGRATE.search(rest)
            tid, dest = int(g.group(1)), int(g.group(4))
            if tid in on_cpu:
                enqueue(tid, dest)
            if dest == cpu:
                pulled_in[cpu] = (tid, ts)
        elif event == "sched_switch":
            s = SWITCH_REPORT.match(rest) or SWITCH_TEXT.match(rest)
            if not s:
                continue
            prev, state, nxt = int(s.group(2)), s.group(3), int(s.group(5))
            p = PRIO.search(rest)
            prev_fair = p is None or int(p.group(1) or p.group(2)) >= 100
            if prev:
                last_ran[prev] = ts
                if state.startswith("R") and prev_fair:
                    enqueue(prev, cpu)
            if cpu in waiting_idle and nxt:
                since, candidates = waiting_idle.pop(cpu)
                if nxt in candidates:
                    later.append(ts - since)
            if nxt and prev and not state.startswith("R") and pulled_in.get(cpu, (None, 0))[0] == nxt \
                    and ts - pulled_in[cpu][1] < IN_FLIGHT:
                pull_avg_idle.append(avg_idle.get(cpu, AVG_IDLE_CAP))
            dequeue(nxt)
            running[cpu] = nxt
            if nxt == 0:
                idle_since[cpu] = ts
                candidates = {t for c, q in queued.items() if c != cpu and running.get(c) for t in q
                              if ts - last_ran.get(t, -1.0) > MIGRATION_COST and ts >= in_flight_until.get(t, 0.0)}
                if candidates:
                    passed_avg_idle.append(avg_idle.get(cpu, AVG_IDLE_CAP))
                    waiting_idle[cpu] = (ts, candidates)
    return pull_avg_idle, passed_avg_idle, later


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)

    def avg_idle_us(values):
        return f" (avg_idle median {statistics.median(values) * 1e6:.0f} us)" if values else ""

    for path in sys.argv[1:]:
        pulls, passed, later = count(path)
        waited = f", {len(later)} of those later ran there after a median {statistics.median(later) * 1e3:.2f} ms" \
            if later else ""
        print(f"{path}: {len(pulls)} pulls at once{avg_idle_us(pulls)}; "
              f"{len(passed)} chances passed{avg_idle_us(passed)}{waited}")


if __name__ == "__main__":
    main()
