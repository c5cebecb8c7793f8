#!/usr/bin/env bash
# Runs the whole pipeline on this machine, on loopback: installs what is missing, builds, starts a
# Kafka-protocol broker (Tansu) and PostgreSQL, migrates, creates the topics, starts the five services
# (ingest, chain-verifier, entitlement-updater, refund-resolver, event-publisher) and `appstore-sim`, which
# delivers a scenario of a few hundred customers (shuffled, with duplicates) and answers the refund
# resolver's App Store Server API calls. The real Apple-signed notification, a tampered copy and a
# malformed body go to ingest too. Then it prints the summary (deploy/local/summary.py).
#   deploy/local/run.sh [--keep-running] [--customers N] [--seed S] [--rate POSTS_PER_SECOND]
# --keep-running leaves the stack up until Ctrl-C. Every process it started is stopped on exit or Ctrl-C.
set -euo pipefail
cd "$(dirname "$0")/../.."
keep_running=false customers=300 seed=7 rate=300
while [[ $# -gt 0 ]]; do
    case "$1" in
        --keep-running) keep_running=true ;;
        --customers) customers=$2; shift ;;
        --seed) seed=$2; shift ;;
        --rate) rate=$2; shift ;;
        *) echo "usage: $0 [--keep-running] [--customers N] [--seed S] [--rate R]" >&2; exit 2 ;;
    esac
    shift
done
deploy/local/prerequisites.sh
source deploy/local/env.sh
products=(iapctl ingest chain-verifier entitlement-updater refund-resolver event-publisher appstore-sim)
echo "== building (debug): ${products[*]}"
for product in "${products[@]}"; do
    swift build --product "$product" 2>&1 | grep -E "error:|Build of|Build complete" | tail -n 1 | sed 's/^/  /'
done
bin=$(swift build --show-bin-path)

# MARK: cleanup
work=$(mktemp -d)
pids=()
stop_all() {
    trap - EXIT INT TERM
    echo "== stopping"
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    deploy/local/broker.sh stop "$work/kafka" || true
    deploy/local/postgres.sh stop "$work/postgres" || true
    rm -rf "$work"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# MARK: the real Apple notification, offline
sample=Tests/Fixtures/real-sandbox/signedPayload_DID_RENEW
real_app="com.loki-project.loki-messenger:1470168868"
echo "== iapctl verify: the real Apple-signed DID_RENEW notification (Sandbox)"
"$bin/iapctl" verify --bundle-id "${real_app%%:*}" --app-apple-id "${real_app##*:}" --environment Sandbox "$sample" \
    | python3 -c 'import json, sys; n = json.load(sys.stdin); t = n["data"]["transactionInfo"]
print("  valid:", n["notificationType"], n["notificationUUID"], "transaction", t["transactionId"], t["productId"])'

# MARK: components and services
echo "== starting the broker, PostgreSQL, topics, appstore-sim's keys and the five services"
bootstrap=$(deploy/local/broker.sh start "$work/kafka")
export DATABASE_URL=$(deploy/local/postgres.sh start "$work/postgres")
"$bin/iapctl" migrate | sed 's/^/  /'
"$bin/iapctl" topics --bootstrap-servers "$bootstrap" --partitions 4 | sed 's/^/  /'
sim_app="com.example.subscriptions:1234567890"
"$bin/appstore-sim" init --dir "$work/sim" > "$work/sim.env"
sim_port=$(deploy/local/free-port.sh)
export KAFKA_BOOTSTRAP_SERVERS="$bootstrap" HTTP_HOST=127.0.0.1 LOG_LEVEL=${LOG_LEVEL:-warning} KAFKA_SESSION_TIMEOUT_MS=6000
export APPSTORE_APPS="$sim_app,$real_app" APPSTORE_ENVIRONMENTS=Production,Sandbox
export APPSTORE_ROOT_CERTIFICATES="$PWD/Tests/Fixtures/real-sandbox/AppleRootCA-G3.der,$work/sim/root.der"
export APPSTORE_API_KEY_FILE="$work/sim/api-key.p8" APPSTORE_API_KEY_ID=SIMKEY0001
export APPSTORE_API_ISSUER_ID=57246542-96fe-1a63-e053-0824d011072a APPSTORE_API_BUNDLE_ID="${sim_app%%:*}"
export APPSTORE_API_URL_PRODUCTION="http://127.0.0.1:$sim_port" APPSTORE_API_URL_SANDBOX="http://127.0.0.1:$sim_port"
export RESOLVER_RATE_PER_SECOND=50 RECONCILE_INTERVAL_SECONDS=60
declare -A port
for service in ingest chain-verifier entitlement-updater refund-resolver event-publisher; do
    port[$service]=$(deploy/local/free-port.sh)
    HTTP_PORT=${port[$service]} "$bin/$service" 2>>"$work/$service.log" & pids+=($!)
done
for service in "${!port[@]}"; do
    for _ in $(seq 1 300); do curl -fs "http://127.0.0.1:${port[$service]}/ready" >/dev/null && break; sleep 0.1; done
    curl -fs "http://127.0.0.1:${port[$service]}/ready" >/dev/null || { echo "$service did not become ready:"; tail "$work/$service.log"; exit 1; }
done
ingest="http://127.0.0.1:${port[ingest]}/notifications"
echo "  all five services ready; ingest at $ingest, the App Store Server API (appstore-sim) at http://127.0.0.1:$sim_port"

# MARK: bad input next to the real notification
echo "== posting the real notification, a tampered copy and a malformed body to ingest"
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
        --data-binary "@$work/$name.json" "$ingest/sandbox")
    echo "  $name: HTTP $status $(cat "$work/answer.json")"
done

# MARK: the scenario
echo "== appstore-sim: $customers customers (seed $seed), shuffled, 10% delivered twice, offered $rate posts/s"
"$bin/appstore-sim" run --dir "$work/sim" --port "$sim_port" --ingest-url "$ingest" --customers "$customers" --seed "$seed" \
    --rate "$rate" --retry-delays-ms 1000,2000 --expected-out "$work/expected.json" --keep-serving 2>"$work/appstore-sim.log" &
pids+=($!)
shown=0
until grep -q "undelivered" "$work/appstore-sim.log" 2>/dev/null; do
    sleep 0.5
    total=$(wc -l < "$work/appstore-sim.log")
    [[ $total -gt $shown ]] && sed -n "$((shown + 1)),${total}p" "$work/appstore-sim.log" | sed 's/^/  /' && shown=$total
    kill -0 "${pids[-1]}" 2>/dev/null || { echo "appstore-sim stopped"; exit 1; }
done
sed -n "$((shown + 1)),\$p" "$work/appstore-sim.log" | sed 's/^/  /'

echo "== waiting until the pipeline has applied and published everything (at most 180 s)"
services=()
for service in "${!port[@]}"; do services+=(--service "$service=http://127.0.0.1:${port[$service]}"); done
status=0
"$APPSTORE_TOOLS_PYTHON" deploy/local/summary.py --bootstrap "$bootstrap" --database-url "$DATABASE_URL" \
    --expected "$work/expected.json" "${services[@]}" --wait 180 &
pids+=($!)
wait $! || status=$?
echo "  broker: $bootstrap   database: $DATABASE_URL   logs: $work"
echo "  try: $bin/iapctl entitlements <customer>   (DATABASE_URL as above)"

if $keep_running; then
    echo "== the stack is up; Ctrl-C stops everything"
    while true; do sleep 1; done
fi
exit $status
