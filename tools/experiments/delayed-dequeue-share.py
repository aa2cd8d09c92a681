#!/usr/bin/env python3
"""How much DELAY_DEQUEUE holds on the running kernel while a command runs.

The trace carries no trace of a delayed dequeue (no tracepoint fires), but
from Linux 6.13 /sys/kernel/debug/sched/debug shows each CPU's root cfs_rq
with h_nr_queued (entities queued, delayed ones included) and h_nr_runnable
(without them): the difference is the sleepers DELAY_DEQUEUE keeps queued.
This samples that file every PERIOD ms while COMMAND runs and prints, over the
samples where a CPU had work queued, the share with a delayed entity and their
mean number while there was one - what `schedlab-cli replay` prints on its
"Model:" line for a replay of a recording of the same command (busy time
there, busy samples here). The sampler's own thread is left out of the CPU it
runs on. Needs root (debugfs).

  sudo tools/experiments/delayed-dequeue-share.py [--period MS] -- COMMAND...

Each read of the file costs about a millisecond on a small machine: at the
default 5 ms the sampler takes a fifth of a CPU from the command.
"""
import os
import re
import sys

from sched_debug import command_line, copies_while

FIELD = re.compile(r"^cpu#(\d+)|^cfs_rq\[(\d+)\]:(\S+)|^\s+\.(h_nr_queued|h_nr_runnable|curr->pid)\s+:\s+(\d+)", re.M)


def sample(text):
    """{cpu: (queued, runnable, curr_pid)} for each CPU's root cfs_rq."""
    cpus, cpu, group = {}, None, None
    for m in FIELD.finditer(text):
        if m.group(1) is not None:
            cpu, group = int(m.group(1)), None
            cpus[cpu] = [0, 0, -1]
        elif m.group(2) is not None:
            group = m.group(3)
        elif cpu is not None:
            key, value = m.group(4), int(m.group(5))
            if key == "curr->pid":
                cpus[cpu][2] = value
            elif group == "/":
                cpus[cpu][0 if key == "h_nr_queued" else 1] = value
    return cpus


def main():
    args, command = command_line(__doc__, 5.0)
    me = os.getpid()
    busy = held = delayed_sum = samples = 0
    for _, text in copies_while("delayed-dequeue-share", command, args.period):
        cpus = sample(text)
        if not cpus or any(v[0] < v[1] for v in cpus.values()):
            continue  # a read torn by a concurrent change: h_nr_runnable never exceeds h_nr_queued
        samples += 1
        for queued, runnable, curr in cpus.values():
            if curr == me:  # the sampler itself, running here, is queued and runnable
                queued, runnable = queued - 1, runnable - 1
            if queued <= 0:
                continue
            busy += 1
            if queued > runnable:
                held += 1
                delayed_sum += queued - runnable
    if busy == 0:
        sys.exit("delayed-dequeue-share: no sample found a CPU with work queued")
    print(f"{samples} samples, {busy} of a CPU with work queued: one with a delayed entity in {held} "
          f"({100 * held / busy:.1f}%), {delayed_sum / held if held else 0:.2f} delayed on average while held")


if __name__ == "__main__":
    main()
