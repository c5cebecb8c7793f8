#!/usr/bin/env python3
"""How much of this machine's CPU the hypervisor took (`steal` in /proc/stat) while a benchmark part ran.

On a virtual machine the host may run other guests on "our" cores: that time is neither ours nor idle, and a figure
measured through it (a rate, a p99) reads worse than the code is. run-all.sh prints this line under each part, so a
figure from a noisy minute says so beside itself (docs/performance.md, "Reading a run").

  steal.py watch FILE     writes the cumulative counters (all CPU time and steal, in ticks) to FILE at once, then once
                          a second, and a last time when stopped (SIGTERM)
  steal.py report FILE    one line: the steal share between FILE's first and last samples, and in its worst second;
                          exits 1 when FILE has fewer than two samples on a machine that counts steal (a watch that
                          did not run)
"""

import signal
import sys
import time

NOTICEABLE = 0.02  # above this share over a part (or ten times it in a second), the line says the figures suffered


def counters(path="/proc/stat"):
    """(all CPU ticks, steal ticks) since boot, summed over the CPUs; None where there is no steal column."""
    try:
        with open(path) as stat:
            fields = stat.readline().split()
    except OSError:
        return None
    if len(fields) < 9 or fields[0] != "cpu":
        return None
    ticks = [int(value) for value in fields[1:9]]  # user nice system idle iowait irq softirq steal
    return sum(ticks), ticks[7]


def watch(path):
    """Samples into `path` until SIGTERM, which writes the last sample."""
    with open(path, "w") as out:

        def sample():
            now = counters()
            if now is not None:
                out.write(f"{now[0]} {now[1]}\n")
                out.flush()

        def stop(*_):
            sample()
            sys.exit(0)

        signal.signal(signal.SIGTERM, stop)
        # A parent may have started us with SIGTERM blocked (a Swift test process's thread does): take it anyway.
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM})
        while True:
            sample()
            time.sleep(1)


def shares(samples):
    """(the steal share from the first sample to the last, the largest share between two consecutive samples)."""
    (first_total, first_steal), (last_total, last_steal) = samples[0], samples[-1]
    overall = (last_steal - first_steal) / max(last_total - first_total, 1)
    worst = max((b[1] - a[1]) / max(b[0] - a[0], 1) for a, b in zip(samples, samples[1:]))
    return overall, worst


def report(path):
    """Prints the line run-all.sh shows under a part; returns the exit status."""
    if counters() is None:
        print("hypervisor steal: not measured (this machine has no steal counter in /proc/stat)")
        return 0
    try:
        with open(path) as recorded:
            samples = [tuple(int(value) for value in line.split()) for line in recorded if line.strip()]
    except OSError:
        samples = []
    if len(samples) < 2:
        print(f"hypervisor steal: not measured ({len(samples)} samples in {path}: did the watch run?)")
        return 1
    overall, worst = shares(samples)
    line = f"hypervisor steal: {overall:.1%} of the CPU time over the part, {worst:.1%} in its worst second"
    if overall > NOTICEABLE or worst > 10 * NOTICEABLE:
        line += " (the host took some of these cores: this part's figures read worse than a quiet machine's)"
    print(line)
    return 0


def main(argv):
    if len(argv) != 3 or argv[1] not in ("watch", "report"):
        print("usage: steal.py watch FILE | steal.py report FILE", file=sys.stderr)
        return 2
    if argv[1] == "watch":
        watch(argv[2])
        return 0
    return report(argv[2])


if __name__ == "__main__":
    sys.exit(main(sys.argv))
