"""Copying /sys/kernel/debug/sched/debug while a command runs, for the scripts
of this folder (root and debugfs needed)."""
import argparse
import subprocess
import sys
import time

DEBUG = "/sys/kernel/debug/sched/debug"


def command_line(doc, default_ms):
    """(args, COMMAND) from `[--period MS] -- COMMAND ARGS...`."""
    ap = argparse.ArgumentParser(description=doc.splitlines()[0])
    ap.add_argument("--period", type=float, default=default_ms, help=f"ms between copies (default {default_ms:g})")
    ap.add_argument("command", nargs=argparse.REMAINDER)
    args = ap.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        ap.error("a COMMAND to run is needed")
    return args, command


def copies_while(name, command, period_ms, own_session=False):
    """Runs COMMAND (in a session of its own: an autogroup of its own) and
    yields (child, text of the file) every PERIOD ms until it exits."""
    try:
        with open(DEBUG) as f:
            f.read()
    except OSError as e:
        sys.exit(f"{name}: cannot read {DEBUG}: {e.strerror} (root and debugfs needed)")
    child = subprocess.Popen(command, stdout=subprocess.DEVNULL, start_new_session=own_session)
    while child.poll() is None:
        with open(DEBUG) as f:
            yield child, f.read()
        time.sleep(period_ms / 1000)
    if child.returncode != 0:
        print(f"{name}: the command exited with {child.returncode}", file=sys.stderr)
