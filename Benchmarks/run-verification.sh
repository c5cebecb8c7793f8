#!/usr/bin/env bash
# The verification benchmark (release build): signature checks per second against the raw crypto limit. Arguments go
# to the benchmark (--seconds S, --notification FILE, --root FILE, --cores N). Usage: [BENCHMARK_BIN=DIR] Benchmarks/run-verification.sh
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/binaries.sh
benchmark_binaries verification-benchmark
"$bin/verification-benchmark" "$@"
