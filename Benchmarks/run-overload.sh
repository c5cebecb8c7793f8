#!/usr/bin/env bash
# Ingest under overload (release): 1,000 concurrent connections posting the real 18.6 KB Apple notification
# for 15 s (keep-alive, one request after the other) against ingest with the edge verification and a local
# Tansu broker; then a stalled body and a body announced above the limit. Prints requests/s, the answers by
# HTTP status (only 200 and 503 are allowed), hangs, how often /ready said ready, and ingest's peak memory.
# Usage: Benchmarks/run-overload.sh [CONNECTIONS] [SECONDS]   (default 1000, 15)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/binaries.sh
benchmark_binaries ingest iapctl
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    deploy/local/broker.sh stop "$work/kafka"
    rm -rf "$work"
}
trap cleanup EXIT
bootstrap=$(deploy/local/broker.sh start "$work/kafka")
"$bin/iapctl" topics --bootstrap-servers "$bootstrap" --partitions 4 --replication-factor 1 >/dev/null
python3 -c 'import json; print(json.dumps({"signedPayload": open("Tests/Fixtures/real-sandbox/signedPayload_DID_RENEW").read().strip()}))' > "$work/body.json"
port=$(deploy/local/free-port.sh)
operations_port=$(deploy/local/free-port.sh)
ulimit -n 65536 2>/dev/null || true
APPSTORE_APPS="com.loki-project.loki-messenger:1470168868" APPSTORE_ENVIRONMENTS=Sandbox LOG_LEVEL=error \
    KAFKA_BOOTSTRAP_SERVERS="$bootstrap" HTTP_HOST=127.0.0.1 HTTP_PORT=$port OPERATIONS_PORT=$operations_port "$bin/ingest" 2>"$work/ingest.log" & pids+=($!)
for _ in $(seq 1 200); do curl -fs "http://127.0.0.1:$port/ready" >/dev/null && break; sleep 0.1; done
"$APPSTORE_TOOLS_PYTHON" Benchmarks/overload.py "http://127.0.0.1:$port/notifications" "$work/body.json" \
    --connections "${1:-1000}" --seconds "${2:-15}" --pid "${pids[-1]}" --report \
    --ready-url "http://127.0.0.1:$operations_port/ready"
