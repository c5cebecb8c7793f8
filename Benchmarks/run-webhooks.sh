#!/usr/bin/env bash
# Webhook benchmark (release build): events produced to entitlements.changes as event-publisher produces them, open
# loop, delivered by webhook-dispatcher (its own PostgreSQL backlog, a local broker) to a receiver that checks every
# signature: deliveries per second against events published per second at RATE and twice RATE, event → delivery
# p50/p99; then one endpoint dead while BACKLOG events queue for it, with the dispatcher's memory as they grow.
# Usage: [BENCHMARK_BIN=DIR] Benchmarks/run-webhooks.sh [RATE] [SECONDS] [BACKLOG]   (default 500/s, 10 s, 100000)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/binaries.sh
benchmark_binaries webhook-dispatcher webhook-benchmark iapctl
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; done
    deploy/local/postgres.sh stop "$work/postgres"
    deploy/local/broker.sh stop "$work/kafka" || true
    rm -rf "$work"
}
trap cleanup EXIT
database=$(deploy/local/postgres.sh start "$work/postgres")
bootstrap=$(deploy/local/broker.sh start "$work/kafka")
"$bin/iapctl" topics --bootstrap-servers "$bootstrap" --partitions 4 --replication-factor 1 > /dev/null
# The dispatcher connects with its own role, as deployed.
password=$(head -c 16 /dev/urandom | od -An -tx1 | tr -d ' \n')
DATABASE_URL="$database" ROLE_PASSWORD_ENTITLEMENT_UPDATER="$password" ROLE_PASSWORD_CUSTOMER_API="$password" \
    ROLE_PASSWORD_EVENT_PUBLISHER="$password" ROLE_PASSWORD_RETENTION_MESSAGING="$password" \
    ROLE_PASSWORD_WEBHOOK_DISPATCHER="$password" "$bin/iapctl" migrate --roles > /dev/null
dispatcher_url=$(echo "$database" | sed "s#^postgres://[^@]*@#postgres://iap_webhook_dispatcher:$password@#")
port=$(deploy/local/free-port.sh)
DATABASE_URL="$dispatcher_url" HTTP_HOST=127.0.0.1 HTTP_PORT=$port LOG_LEVEL=error KAFKA_BOOTSTRAP_SERVERS="$bootstrap" \
    KAFKA_SESSION_TIMEOUT_MS=6000 WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true WEBHOOK_ENDPOINT_REFRESH_MS=1000 \
    "$bin/webhook-dispatcher" 2>"$work/dispatcher.log" &
dispatcher=$!
pids+=($dispatcher)
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$port/ready" && break; sleep 0.1; done
"$bin/webhook-benchmark" "$bootstrap" "$database" "$dispatcher" "${1:-500}" "${2:-10}" "${3:-100000}" \
    || { tail -20 "$work/dispatcher.log" >&2; exit 1; }
