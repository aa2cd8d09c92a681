"""Reading sched events as text, for the scripts of this folder.

A trace.dat goes through `trace-cmd report`; any other file is read as ftrace
text, such as `schedlab-cli replay ... --out FILE` writes. The patterns match
both renderings of sched_switch.
"""
import re
import subprocess

LINE = re.compile(r"^\s*(.+?)-(\d+)\s+\[(\d+)\]\s+(?:\S+\s+)?([\d.]+):\s+(\w+):\s+(.*)$")
SWITCH_REPORT = re.compile(r"(.+?):(\d+) \[-?\d+\] (\S+) ==> (.+?):(\d+) \[")
SWITCH_TEXT = re.compile(r"prev_comm=(.+?) prev_pid=(\d+) .*prev_state=(\S+) ==> next_comm=(.+?) next_pid=(\d+)")


def lines(path):
    if path.endswith(".dat"):
        out = subprocess.run(["trace-cmd", "report", "-i", path], capture_output=True, text=True, check=True)
        return out.stdout.splitlines()
    with open(path) as f:
        return f.read().splitlines()
