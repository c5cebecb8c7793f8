#!/usr/bin/env bash
# Entitlement stage benchmark (release build): notifications applied per second into a local PostgreSQL
# next to bare single-row transactions, and events published from the outbox next to producing them
# directly to a local Tansu broker. Usage: Benchmarks/run-entitlements.sh [SUBSCRIPTIONS] [LANES] [TRANSACTION_SIZE]
# (default 2000 subscriptions of ~9 notifications, 8 lanes, 50 notifications per transaction as the updater)
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/binaries.sh
benchmark_binaries entitlements-benchmark
work=$(mktemp -d)
cleanup() { deploy/local/broker.sh stop "$work/kafka"; deploy/local/postgres.sh stop "$work/postgres"; rm -rf "$work"; }
trap cleanup EXIT
bootstrap=$(deploy/local/broker.sh start "$work/kafka")
database=$(deploy/local/postgres.sh start "$work/postgres")
"$APPSTORE_TOOLS_PYTHON" - "$bootstrap" <<'PY'
import sys
from confluent_kafka.admin import AdminClient, NewTopic
admin = AdminClient({"bootstrap.servers": sys.argv[1]})
for future in admin.create_topics([NewTopic(t, num_partitions=4, replication_factor=1)
        for t in ("entitlements.changes", "entitlements.family", "entitlements.revocations")]).values():
    future.result()
PY
"$bin/entitlements-benchmark" "$database" "$bootstrap" "${1:-2000}" "${2:-8}" "${3:-50}" | tee "$work/table.txt"
# The direct baseline and the relay each produced every outbox event twice (two rounds in turn): the broker holds four
# times as many, or the baseline counted acknowledgements of messages it never stored.
events=$(sed -nE 's/.* ([0-9]+) events,.*/\1/p' "$work/table.txt")
"$APPSTORE_TOOLS_PYTHON" Benchmarks/plausible.py broker-holds "$bootstrap" $((4 * events)) \
    "direct produce and the outbox relay" entitlements.changes entitlements.family entitlements.revocations
