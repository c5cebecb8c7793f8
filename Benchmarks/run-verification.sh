#!/usr/bin/env bash
# The verification benchmark (release build): signature checks per second against the raw crypto limit. Arguments go
# to the benchmark (--seconds S, --notification FILE, --root FILE, --cores N). Usage: [BENCHMARK_BIN=DIR] Benchmarks/run-verification.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/binaries.sh
benchmark_binaries verification-benchmark
# A wrong argument is refused with the usage line and exit 2, not a crash report (checked by every run, smoke too).
refused=$("$bin/verification-benchmark" --seconds none 2>&1 >/dev/null) && status=0 || status=$?
[[ $status == 2 && $refused == "usage: verification-benchmark"* ]] \
    || { echo "verification-benchmark --seconds none: expected its usage and exit 2, got exit $status: $refused" >&2; exit 1; }
"$bin/verification-benchmark" "$@"
