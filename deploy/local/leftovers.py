#!/usr/bin/env python3
"""Finds the processes a test run left behind, ends them, and fails the run if there were any.

deploy/local/test.sh exports APPSTORE_TEST_RUN=<id> before `swift test`; every process a test starts (services,
PostgreSQL through pg_ctl, Tansu, the TLS proxy, the trace collector, Python tools) inherits it. Once the tests are
over, a process whose environment still carries that marker was started by a test and outlived it. Such a process
gets 30 s to end on its own (one being stopped as the run ended), then it is listed, killed, and the exit status is 1.

    leftovers.py RUN_ID [--grace-seconds N]     (N: 30 by default)
"""
import os
import signal
import sys
import time


def ancestors():
    """This process and every process above it (the test command's shells carry the marker too)."""
    pids, pid = set(), os.getpid()
    while pid > 1:
        pids.add(pid)
        try:
            with open(f"/proc/{pid}/stat") as stat:
                pid = int(stat.read().rsplit(")", 1)[1].split()[1])
        except OSError:
            break
    return pids


def marked(marker):
    """pid → command line of every other process whose environment holds `marker`."""
    found, mine = {}, ancestors()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) in mine:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as environ:
                if marker not in environ.read().split(b"\0"):
                    continue
            with open(f"/proc/{name}/cmdline", "rb") as cmdline:
                found[int(name)] = cmdline.read().replace(b"\0", b" ").decode(errors="replace").strip()
        except OSError:
            continue  # gone meanwhile, a zombie, or not ours to read
    return {pid: command for pid, command in found.items() if command}


def main():
    arguments = sys.argv[1:]
    grace = 30.0
    if len(arguments) == 3 and arguments[1] == "--grace-seconds":
        grace = float(arguments[2])
        arguments = arguments[:1]
    if len(arguments) != 1 or not arguments[0]:
        print(__doc__, file=sys.stderr)
        return 2
    marker = f"APPSTORE_TEST_RUN={arguments[0]}".encode()
    left = marked(marker)
    for _ in range(int(grace * 2)):
        if not left:
            break
        time.sleep(0.5)
        left = marked(marker)
    if not left:
        print("leftovers: no process of the test run outlived it")
        return 0
    print(f"leftovers: {len(left)} process(es) started by the tests outlived them; killing them:")
    for pid, command in sorted(left.items()):
        try:
            output = os.readlink(f"/proc/{pid}/fd/1")  # its log names the test that started it
        except OSError:
            output = "?"
        print(f"  {pid} {command[:300]} (output: {output})")
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    return 1


if __name__ == "__main__":
    sys.exit(main())
