#!/usr/bin/env bash
# Retention soak (release build): a month of daily renewals for a steady customer base at compressed time against a
# local PostgreSQL, pruning with the production windows after each simulated day; prints each day's table sizes.
# Usage: Benchmarks/run-soak.sh [CUSTOMERS] [DAYS] [SECONDS_PER_DAY]   (default 5000 customers, 30 days, 4 s a day)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/binaries.sh
benchmark_binaries entitlements-benchmark
work=$(mktemp -d)
cleanup() { deploy/local/postgres.sh stop "$work/postgres"; rm -rf "$work"; }
trap cleanup EXIT
database=$(deploy/local/postgres.sh start "$work/postgres")
"$bin/entitlements-benchmark" soak "$database" "${1:-5000}" "${2:-30}" "${3:-4}"
