#!/usr/bin/env python3
"""The weight the kernel gives a session's autogroup entity on each CPU.

Runs COMMAND in a session of its own (so in an autogroup of its own)
and, until it exits, copies /sys/kernel/debug/sched/debug every PERIOD ms
(root), reading the group entity of that autogroup on each CPU:
`.se->load.weight` (calc_group_shares(): the group's 1024 split by PELT
load averages), while its queue holds a task. Prints each CPU's quantiles and
a histogram in steps of 64, and of the copies at 960 or more, how many had
the group queued on no other CPU, where SchedLab's model, which splits the
weight by the weights queued now (docs/models.md 5.6), gives 1024 too.

  sudo tools/experiments/autogroup-weights.py [--period MS] -- COMMAND ARGS...
"""
import collections
import re

from sched_debug import command_line, copies_while


def main():
    args, command = command_line(__doc__, 2.0)
    group = None
    weights = collections.defaultdict(list)  # cpu -> weights while queued
    full_alone = full_beside = 0  # copies at 960 or more: no other CPU had the group queued, or one had
    for child, text in copies_while("autogroup-weights", command, args.period, own_session=True):
        if group is None:
            try:
                with open(f"/proc/{child.pid}/autogroup") as f:
                    group = f.read().split()[0]  # "/autogroup-N"
            except OSError:
                continue
        copy = {}  # cpu -> (queued, weight)
        for m in re.finditer(r"cfs_rq\[(\d+)\]:%s\n(.*?)\n\n" % re.escape(group), text, re.S):
            queued = re.search(r"\.nr_queued\s*:\s*(\d+)", m.group(2))
            weight = re.search(r"\.se->load\.weight\s*:\s*(\d+)", m.group(2))
            if queued and weight:
                copy[int(m.group(1))] = (int(queued.group(1)), int(weight.group(1)) // 1024)  # scale_load_down()
        for cpu, (queued, weight) in copy.items():
            if queued == 0:
                continue
            weights[cpu].append(weight)
            if weight >= 960:
                if any(q > 0 for c, (q, _) in copy.items() if c != cpu):
                    full_beside += 1
                else:
                    full_alone += 1

    print(f"{' '.join(command)}: {group or 'no autogroup seen'}")
    for cpu in sorted(weights):
        w = sorted(weights[cpu])
        q = " ".join(f"p{int(p * 100)} {w[min(len(w) - 1, int(len(w) * p))]}" for p in (0.1, 0.25, 0.5, 0.75, 0.9))
        histogram = collections.Counter(min(1024, v // 64 * 64) for v in w)
        print(f"  CPU {cpu}: {len(w)} copies with the group queued; weight {q}")
        print("    " + ", ".join(f"{k}-{k + 63}: {n}" for k, n in sorted(histogram.items())))
    print(f"  at 960 or more: {full_alone} copies with the group queued on no other CPU, {full_beside} beside it")


if __name__ == "__main__":
    main()
