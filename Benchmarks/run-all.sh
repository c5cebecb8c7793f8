#!/usr/bin/env bash
# Every benchmark, release build, one after another on this machine; prints each table (the figures in the
# README come from this script). Usage: Benchmarks/run-all.sh
#   1. end to end (run-end-to-end.sh): sustained notifications/s, accept → committed / published latency,
#      memory per service;
#   2. verification (run-verification.sh): signature checks per second against the raw crypto limit;
#   3. pipeline stages (run-pipeline.sh): ingest against bare Hummingbird, chain-verifier against raw verification;
#   4. entitlements (run-entitlements.sh): applied/s against bare transactions, outbox relay against direct produce;
#   5. customer-api look-ups (run-lookup.sh): latency at 1,000 GETs/s offered against a bare Hummingbird GET;
#   6. where the time goes end to end (run-profile.sh): perf's CPU share and CPU per notification of each process.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
Benchmarks/run-end-to-end.sh 2000 100,250,500 > "$out/e2e.txt" 2> "$out/e2e.log"
Benchmarks/run-verification.sh --seconds 3 > "$out/verification.txt" 2> "$out/verification.log"
Benchmarks/run-pipeline.sh 8 > "$out/pipeline.txt" 2> "$out/pipeline.log"
Benchmarks/run-entitlements.sh 2000 8 > "$out/entitlements.txt" 2> "$out/entitlements.log"
Benchmarks/run-lookup.sh 1000 10 2000 > "$out/lookup.txt" 2> "$out/lookup.log"
Benchmarks/run-profile.sh 8 2000 > "$out/profile.txt" 2> "$out/profile.log"
echo "# 1. End to end"
grep -v '^{' "$out/e2e.txt"
echo; echo "# 2. Verification"
grep -vE "^(Building|Build|\[|Compiling|Write|Planning)" "$out/verification.txt"
echo; echo "# 3. Pipeline stages"
grep -vE "^(Building|Build|\[|Compiling)" "$out/pipeline.txt"
echo; echo "# 4. Entitlements"
grep -vE "^(Building|Build|\[|Compiling)" "$out/entitlements.txt"
echo; echo "# 5. customer-api look-ups"
grep -vE "^(Building|Build|\[|Compiling)" "$out/lookup.txt"
echo; echo "# 6. Where the time goes end to end"
cat "$out/profile.txt"
