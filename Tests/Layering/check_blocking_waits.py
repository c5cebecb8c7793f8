#!/usr/bin/env python3
"""Checks that no test blocks a thread of Swift's cooperative pool while it waits (run by deploy/local/test.sh).

Every test of the package runs in one process, whose cooperative pool has as many threads as the machine has cores
(two here) and also serves the sim, the HTTP clients and the other tests running at the same time. A test that waits
for a process with `waitUntilExit()` holds one of them for as long as the process takes to stop; two such waits, or
one beside a long stretch of work, left the sim's performance test timing answers given in milliseconds at 10 s.
Waits are asynchronous instead: `ServiceProcess.exitStatus(of:)`, `ServiceProcess.stop(_:)`, `Program.run`, and
`Task.sleep` rather than `usleep` or a semaphore.

Exit 0 when no test source calls a blocking wait, else 1 with one line per call (comments are not calls).
"""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
# A blocking wait, and what to use instead.
FORBIDDEN = {
    r"\.waitUntilExit\(\)": "ServiceProcess.exitStatus(of:) or ServiceProcess.stop(_:)",
    r"\busleep\(": "Task.sleep(for:)",
    r"\bDispatchSemaphore\b": "a continuation resumed by the callback",
    r"\.readDataToEndOfFile\(\)": "Program.run (output to a file) or an async read",
}


def code(line: str) -> str:
    """The line without its `//` comment (good enough for these patterns, which never occur in strings here)."""
    return line.split("//", 1)[0]


def main() -> int:
    problems = []
    for path in sorted((ROOT / "Tests").rglob("*.swift")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            for pattern, instead in FORBIDDEN.items():
                if re.search(pattern, code(line)):
                    problems.append(f"{path.relative_to(ROOT)}:{number}: blocks a cooperative thread; use {instead}")
    for problem in problems:
        print(problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
