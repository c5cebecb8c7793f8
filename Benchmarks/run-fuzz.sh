#!/usr/bin/env bash
# The ingest fuzz test for longer than the test suite's 8 s: structure-aware mutations of a genuine notification
# (truncations, bit flips per JWS segment, huge and nested JSON, bad base64, wrong types under a valid signature)
# posted to ingest with a real broker; fails on a crash, a 5xx other than 503, or anything on the raw topic that
# does not verify in full. Usage: Benchmarks/run-fuzz.sh [SECONDS] [SEED]   (default 300 s, the suite's seed)
set -euo pipefail
cd "$(dirname "$0")/.."
deploy/local/prerequisites.sh
source deploy/local/env.sh
swift build --build-tests 2>&1 | grep -E "error:|Build complete" | tail -n 1
INGEST_FUZZ_SECONDS=${1:-300} INGEST_FUZZ_SEED=${2:-20261123} swift test --skip-build --filter IngestFuzzTests 2>&1 \
    | grep -E "ingest fuzz|✔|✘|recorded"
