#!/usr/bin/env bash
# Runs the pipeline on this machine, on loopback: installs what is missing, starts a Kafka-protocol broker
# (Tansu) and PostgreSQL, migrates, creates the topics, starts `ingest`, `chain-verifier`,
# `entitlement-updater` and `event-publisher`, and runs a demo: the real Apple-signed Sandbox notification
# is verified by `iapctl`, then posted to ingest together with a tampered copy and a malformed body; the
# script then shows what each topic holds and the entitlement the real one produced.
#   deploy/local/run.sh                 run the demo, then stop everything
#   deploy/local/run.sh --keep-running  leave the stack up until Ctrl-C
# Later issues add the refund resolver and the App Store stand-in.
set -euo pipefail
cd "$(dirname "$0")/../.."
keep_running=false
[[ "${1:-}" == "--keep-running" ]] && keep_running=true
deploy/local/prerequisites.sh
source deploy/local/env.sh
echo "== building (debug)"
swift build --product iapctl 2>&1 | grep -E "error|Compiling|Build of" | tail -n 1
swift build --product ingest 2>&1 | grep -E "error|Build of" | tail -n 1
swift build --product chain-verifier 2>&1 | grep -E "error|Build of" | tail -n 1
swift build --product entitlement-updater 2>&1 | grep -E "error|Build of" | tail -n 1
swift build --product event-publisher 2>&1 | grep -E "error|Build of" | tail -n 1
bin=$(swift build --show-bin-path)
work=$(mktemp -d)
pids=()
stop_all() {
    trap - EXIT INT TERM
    echo "== stopping"
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    deploy/local/broker.sh stop "$work/kafka"
    deploy/local/postgres.sh stop "$work/postgres"
    rm -rf "$work"
}
trap stop_all EXIT INT TERM
sample=Tests/Fixtures/real-sandbox/signedPayload_DID_RENEW
app="com.loki-project.loki-messenger"

echo "== iapctl verify: the real Apple-signed DID_RENEW notification (Sandbox)"
"$bin/iapctl" verify --bundle-id "$app" --app-apple-id 1470168868 --environment Sandbox "$sample" > "$work/verified.json"
python3 - "$work/verified.json" <<'PY'
import json, sys
n = json.load(open(sys.argv[1]))
t, r = n["data"]["transactionInfo"], n["data"]["renewalInfo"]
print(f'  valid: {n["notificationType"]} {n["notificationUUID"]} status={n["data"]["status"]}')
print(f'  transaction {t["transactionId"]} of {t["originalTransactionId"]}: {t["productId"]} '
      f'{t["transactionReason"]} {t["price"]/1000:.2f} {t["currency"]}')
print(f'  renewal info: autoRenewStatus={r["autoRenewStatus"]} renews to {r["autoRenewProductId"]}')
PY

echo "== starting the broker, PostgreSQL, topics and the four services"
bootstrap=$(deploy/local/broker.sh start "$work/kafka")
export DATABASE_URL=$(deploy/local/postgres.sh start "$work/postgres")
"$bin/iapctl" migrate | sed 's/^/  /'
"$bin/iapctl" topics --bootstrap-servers "$bootstrap" --partitions 4 | sed 's/^/  /'
ingest_port=$(deploy/local/free-port.sh)
verifier_port=$(deploy/local/free-port.sh)
updater_port=$(deploy/local/free-port.sh)
publisher_port=$(deploy/local/free-port.sh)
export APPSTORE_APPS="$app:1470168868" APPSTORE_ENVIRONMENTS=Sandbox KAFKA_BOOTSTRAP_SERVERS="$bootstrap"
export HTTP_HOST=127.0.0.1 LOG_LEVEL=${LOG_LEVEL:-warning} KAFKA_SESSION_TIMEOUT_MS=6000
HTTP_PORT=$ingest_port "$bin/ingest" 2>>"$work/ingest.log" & pids+=($!)
HTTP_PORT=$verifier_port "$bin/chain-verifier" 2>>"$work/chain-verifier.log" & pids+=($!)
HTTP_PORT=$updater_port "$bin/entitlement-updater" 2>>"$work/entitlement-updater.log" & pids+=($!)
HTTP_PORT=$publisher_port "$bin/event-publisher" 2>>"$work/event-publisher.log" & pids+=($!)
for port in $ingest_port $verifier_port $updater_port $publisher_port; do
    for _ in $(seq 1 300); do curl -fs "http://127.0.0.1:$port/ready" >/dev/null && break; sleep 0.1; done
done
echo "  ingest:              http://127.0.0.1:$ingest_port/notifications   (every service: /metrics, /health, /ready)"
echo "  chain-verifier:      http://127.0.0.1:$verifier_port/metrics"
echo "  entitlement-updater: http://127.0.0.1:$updater_port/metrics"
echo "  event-publisher:     http://127.0.0.1:$publisher_port/metrics"
echo "  broker:              $bootstrap"
echo "  database:            $DATABASE_URL"

echo "== posting to ingest"
python3 - "$sample" "$work" <<'PY'
import json, sys
jws = open(sys.argv[1]).read().strip()
i = jws.rindex(".") + 20
tampered = jws[:i] + ("A" if jws[i] != "A" else "B") + jws[i + 1:]
json.dump({"signedPayload": jws}, open(sys.argv[2] + "/real.json", "w"))
json.dump({"signedPayload": tampered}, open(sys.argv[2] + "/tampered.json", "w"))
open(sys.argv[2] + "/malformed.json", "w").write('{"signedPayload": "not.a-jws"}')
PY
for name in real tampered malformed; do
    status=$(curl -s -o "$work/answer.json" -w '%{http_code}' -H 'Content-Type: application/json' \
        --data-binary "@$work/$name.json" "http://127.0.0.1:$ingest_port/notifications/sandbox")
    echo "  $name: HTTP $status $(cat "$work/answer.json")"
done

echo "== what the topics hold"
"$APPSTORE_TOOLS_PYTHON" deploy/local/show-topics.py "$bootstrap" \
    appstore.notifications.raw appstore.notifications.verified appstore.notifications.rejected \
    entitlements.changes entitlements.family entitlements.revocations
echo "== iapctl entitlements 2000001024993299 (the real notification's subscription)"
"$bin/iapctl" entitlements 2000001024993299 | sed 's/^/  /' 
echo "== counters"
curl -fs "http://127.0.0.1:$ingest_port/metrics" | grep -E '^ingest_requests_total' | sed 's/^/  /'
curl -fs "http://127.0.0.1:$verifier_port/metrics" | grep -E '^chain_verifier_(verified|rejected)_total' | sed 's/^/  /'
curl -fs "http://127.0.0.1:$updater_port/metrics" | grep -E '^entitlement_updater_notifications_total' | sed 's/^/  /'
curl -fs "http://127.0.0.1:$publisher_port/metrics" | grep -E '^event_publisher_published_total' | sed 's/^/  /'

if $keep_running; then
    echo "== the stack is up (logs in $work); Ctrl-C stops everything"
    while true; do sleep 3600; done
fi
