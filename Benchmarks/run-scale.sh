#!/usr/bin/env bash
# Scale benchmark (release build): fills a local PostgreSQL with a large app's year (default 1,000,000 customers with a
# purchase and 9 renewals each: 10 million notifications' rows) and measures the hot work at that size against the same
# work on a nearly empty database in the same run; prints sizes, the table and the hot statements' plans.
# Usage: Benchmarks/run-scale.sh [CUSTOMERS] [RENEWALS]   (needs ~15 GB of disk at the default size)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/binaries.sh
benchmark_binaries entitlements-benchmark
work=$(mktemp -d)
cleanup() { deploy/local/postgres.sh stop "$work/postgres"; rm -rf "$work"; }
trap cleanup EXIT
database=$(deploy/local/postgres.sh start "$work/postgres")
"$bin/entitlements-benchmark" scale "$database" "${1:-1000000}" "${2:-9}"
