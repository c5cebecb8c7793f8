#!/usr/bin/env python3
"""The goals of the benchmarks (docs/performance.md) beside this run's figures, read from the parts' outputs.

  goals.py OUT [FAILED_PART ...]

OUT is a `run-all.sh` output folder (each part's table in OUT/<part>.txt). Prints one line a goal: the figure of this
run, the goal, and whether this run met it. A part named as failed is shown as such. A figure missing from a part that
did not fail means its table changed without this summary: that exits 1, so the smoke run in the test command catches
it as it catches a broken script.
"""

import re
import sys
from pathlib import Path


class Missing(Exception):
    """A figure this summary reads is not in a part's output."""


def figures(out, part, pattern):
    """The groups of the matches of `pattern` in OUT/<part>.txt, in order (at least one, else `Missing`)."""
    try:
        text = (out / f"{part}.txt").read_text()
    except OSError:
        raise Missing(f"{part}.txt is not there")
    found = re.findall(pattern, text, re.MULTILINE)
    if not found:
        raise Missing(f"{part}.txt has no line matching {pattern!r}")
    return found


def number(text):
    """A figure as printed (`1,234.5` → 1234.5)."""
    return float(text.replace(",", ""))


# MARK: the goals: each reader returns (the figure as shown, whether this run met the goal, or None where one run
# cannot tell)


def full_verification(out):
    """Full verification with the chain cached, against three signature checks of the same notification, 1 core."""
    ratio = number(figures(out, "verification", r"^full verification, chain cache warm, 1 core\s+\d+\s+([\d.]+)")[0])
    return f"{ratio:.2f}", ratio >= 0.85


def end_to_end(out):
    """Notifications committed per second, per 1,000 P-256 verifications a second of the same run."""
    sustained = number(figures(out, "e2e", r"^end to end sustained: .*?\s([\d,]+) notifications/s")[0])
    p256 = number(figures(out, "verification", r"^P-256 verify of a SHA-256 digest.*?\s(\d+)\s+baseline")[0])
    per_thousand = sustained / p256 * 1000
    return f"{per_thousand:.1f} ({sustained:,.0f}/s at {p256:,.0f} P-256/s)", per_thousand >= 40


def accept_to_committed(out):
    """The p99 at the highest rate offered; its goal compares it with the commit before this issue's changes."""
    rate, p99 = figures(out, "e2e", r"^accept → entitlement committed at ([\d,]+)/s, p50 / p99\s+\d+ / (\d+) ms")[-1]
    return f"{p99} ms at {rate}/s", None


def ingest(out):
    """Ingest against the produce-only limit, tracing off and sampled: both must meet the goal."""
    ratios = [
        figures(out, part, r"^ingest: verify outer JWS.*?\s\d+\s+([\d.]+) of the produce-only limit")[0]
        for part in ("pipeline", "pipeline-traced")
    ]
    return " · ".join(ratios), all(number(ratio) >= 0.65 for ratio in ratios)


def chain_verifier(out):
    """The chain-verifier against full verification at the same moments, the broker on a CPU of its own (R / V)."""
    ratios = [figures(out, part, r"R / V = ([\d.]+)")[-1] for part in ("pipeline", "pipeline-traced")]
    return " · ".join(ratios), all(number(ratio) >= 0.75 for ratio in ratios)


def updater(out):
    """Notifications the updater applies in its batched transactions, against bare single-row INSERT transactions."""
    ratio = figures(out, "entitlements", r"\(the updater\)\s+\d+\s+([\d.]+) of bare transactions")[0]
    return ratio, number(ratio) >= 1.3


def relay(out):
    """Events the outbox relay publishes against direct produce."""
    ratio = figures(out, "entitlements", r"^events published from the outbox.*?\s\d+\s+([\d.]+) of direct produce")[0]
    return ratio, number(ratio) >= 0.8


def retention(out):
    """Retention-messaging's p99 at the rate offered, tracing off and sampled: both must be under 5 ms."""
    readings = []
    for part in ("retention", "retention-traced"):
        rate = figures(out, part, r"^Retention benchmark: (\d+) signed real-time requests/s offered")[0]
        readings.append((rate, figures(out, part, r"^retention-messaging p99 ([\d.]+) ms")[0]))
    text = " · ".join(f"{p99} ms" for _, p99 in readings) + f" at {readings[0][0]}/s"
    return text, all(number(p99) < 5 for _, p99 in readings)


def webhooks(out):
    """The first rate of the webhook table (500/s in the full run): deliveries against events, and the p99."""
    row = r"^\| (\d+)/s \| \d+ \| \d+ \| ([\d.]+) \| [\d.]+ ms \| ([\d.]+) ms \|$"
    rate, ratio, p99 = figures(out, "webhooks", row)[0]
    return f"{ratio}, p99 {p99} ms at {rate}/s", number(ratio) >= 0.9 and number(p99) < 250


GOALS = [
    ("full verification / crypto limit, 1 core", ["verification"], full_verification, "≥ 0.85"),
    ("end to end, per 1,000 P-256 verifications/s", ["e2e", "verification"], end_to_end, "≥ 40"),
    (
        "accept → committed p99, highest rate offered",
        ["e2e"],
        accept_to_committed,
        "≤ 1.1× the commit before, run beside it",
    ),
    ("ingest / produce-only limit, tracing off · sampled", ["pipeline", "pipeline-traced"], ingest, "≥ 0.65"),
    (
        "chain-verifier / its probe (R / V), off · sampled",
        ["pipeline", "pipeline-traced"],
        chain_verifier,
        "≥ 0.75",
    ),
    ("updater / bare INSERT transactions", ["entitlements"], updater, "≥ 1.3"),
    ("outbox relay / direct produce", ["entitlements"], relay, "≥ 0.8"),
    ("retention p99, tracing off · sampled", ["retention", "retention-traced"], retention, "< 5 ms (at 1,000/s)"),
    ("webhooks: delivered / offered, p99", ["webhooks"], webhooks, "≥ 0.9, < 250 ms (at 500/s)"),
]


def main(argv):
    """Prints the table; exits 1 when a part that ran lacks a figure, 2 on a wrong argument."""
    if len(argv) < 2 or not Path(argv[1]).is_dir():
        print("usage: goals.py OUT [FAILED_PART ...]", file=sys.stderr)
        return 2
    out, failed = Path(argv[1]), set(argv[2:])
    rows, missing = [], []
    for name, parts, read, goal in GOALS:
        if failed & set(parts):
            rows.append((name, "–", goal, "its part failed"))
            continue
        try:
            figure, met = read(out)
        except Missing as error:
            missing.append(f"{name}: {error}")
            rows.append((name, "missing", goal, "?"))
            continue
        rows.append((name, figure, goal, "–" if met is None else ("met" if met else "not met")))
    width = [max(len(row[column]) for row in rows) for column in range(3)]
    print(f"{'goal'.ljust(width[0])}  {'this run'.ljust(width[1])}  {'goal'.ljust(width[2])}  verdict")
    for name, figure, goal, verdict in rows:
        print(f"{name.ljust(width[0])}  {figure.ljust(width[1])}  {goal.ljust(width[2])}  {verdict}")
    for line in missing:
        print(f"goals.py: {line} (did its table change?)", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
