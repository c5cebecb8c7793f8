#!/usr/bin/env bash
# Retention Messaging benchmark (release build): Apple-format signed real-time requests at a fixed offered rate, open
# loop, against retention-messaging (verifying each request, reading PostgreSQL, signing a promotional offer for every
# answer, publishing retention.offered to a local broker), next to a bare Hummingbird POST measured in the same run;
# then offer signatures per second against raw P-256 signing.
# Usage: [BENCHMARK_BIN=DIR] [BENCHMARK_TRACING=sampled] Benchmarks/run-retention.sh [RATE] [SECONDS] [CUSTOMERS] [WARMUP]
#        (default 1000/s, 10 s, 2000 subscriptions, 1 uncounted second of warm-up before the measured ones)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/binaries.sh
benchmark_binaries retention-messaging http-baseline retention-benchmark appstore-sim iapctl
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    deploy/local/postgres.sh stop "$work/postgres"
    deploy/local/broker.sh stop "$work/kafka" || true
    rm -rf "$work"
}
trap cleanup EXIT
benchmark_tracing "$work"
[[ -z $tracing_pid ]] || pids+=("$tracing_pid")
database=$(deploy/local/postgres.sh start "$work/postgres")
bootstrap=$(deploy/local/broker.sh start "$work/kafka")
"$bin/iapctl" topics --bootstrap-servers "$bootstrap" --partitions 4 --replication-factor 1 > /dev/null
"$bin/appstore-sim" init --dir "$work/sim" > /dev/null
retention_port=$(deploy/local/free-port.sh)
baseline_port=$(deploy/local/free-port.sh)
DATABASE_URL="$database" MIGRATE_ON_START=false HTTP_HOST=127.0.0.1 HTTP_PORT=$retention_port LOG_LEVEL=error \
    KAFKA_BOOTSTRAP_SERVERS="$bootstrap" APPSTORE_APPS=com.example.app:1234567890 APPSTORE_ENVIRONMENTS=Sandbox \
    APPSTORE_ROOT_CERTIFICATES="$work/sim/root.der" RETENTION_RULES_FILE="$PWD/Benchmarks/retention-rules.json" \
    APPSTORE_OFFER_KEY_FILE="$work/sim/offer-key.p8" APPSTORE_OFFER_KEY_ID=SIMOFFER01 APPSTORE_OFFER_ISSUER_ID=issuer \
    "$bin/retention-messaging" 2>"$work/retention.log" &
pids+=($!)
"${untraced[@]}" "$bin/http-baseline" "$baseline_port" 2>"$work/baseline.log" &
pids+=($!)
for port in "$retention_port" "$baseline_port"; do
    for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.1; done
done
"$bin/retention-benchmark" "$database" "$work/sim" "http://127.0.0.1:$retention_port/retention-message" \
    "http://127.0.0.1:$baseline_port/retention-message" "${1:-1000}" "${2:-10}" "${3:-2000}" "${4:-1}"
benchmark_tracing_report "$work"
