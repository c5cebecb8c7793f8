#!/usr/bin/env bash
# customer-api look-up benchmark (release build): GETs of a customer's entitlements at a fixed offered rate,
# open loop, against customer-api reading a local PostgreSQL, next to a bare Hummingbird GET measured in the
# same run. Usage: Benchmarks/run-lookup.sh [RATE] [SECONDS] [CUSTOMERS]   (default 1000/s, 10 s, 2000)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/binaries.sh
benchmark_binaries customer-api http-baseline lookup-benchmark
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    deploy/local/postgres.sh stop "$work/postgres"
    rm -rf "$work"
}
trap cleanup EXIT
database=$(deploy/local/postgres.sh start "$work/postgres")
api_port=$(deploy/local/free-port.sh)
baseline_port=$(deploy/local/free-port.sh)
DATABASE_URL="$database" HTTP_HOST=127.0.0.1 HTTP_PORT=$api_port LOG_LEVEL=error "$bin/customer-api" 2>"$work/customer-api.log" &
pids+=($!)
"$bin/http-baseline" "$baseline_port" 2>"$work/baseline.log" &
pids+=($!)
for port in "$api_port" "$baseline_port"; do
    for _ in $(seq 1 100); do curl -s "http://127.0.0.1:$port/" >/dev/null && break; sleep 0.1; done
done
"$bin/lookup-benchmark" "$database" "http://127.0.0.1:$api_port" "http://127.0.0.1:$baseline_port" "${1:-1000}" "${2:-10}" "${3:-2000}"
