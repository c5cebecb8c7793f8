#!/usr/bin/env bash
# Runs the whole pipeline on this machine, on loopback: installs what is missing, builds, starts a
# Kafka-protocol broker (Tansu) and PostgreSQL, migrates, creates the topics, starts the services
# (ingest, chain-verifier, entitlement-updater, refund-resolver, event-publisher, customer-api, retention-messaging,
# webhook-dispatcher, with a local webhook receiver) and `appstore-sim`, which
# delivers a scenario of a few hundred customers (shuffled, with duplicates) and answers the refund
# resolver's App Store Server API calls; the app of some customers posts their purchases to customer-api, and some
# renewal notifications are lost for good. The real Apple-signed notification, a tampered copy and a
# malformed body go to ingest too. Then it prints the summary (deploy/local/summary.py).
#   deploy/local/run.sh [--keep-running] [--customers N] [--seed S] [--rate POSTS_PER_SECOND] [--refunds-without-status]
# --keep-running leaves the stack up until Ctrl-C. Every process it started is stopped on exit or Ctrl-C.
# --refunds-without-status makes the sim send subscription REFUNDs without data.status (Apple always carries it), so
# every one of them is refund-resolver's to settle.
set -euo pipefail
cd "$(dirname "$0")/../.."
keep_running=false customers=300 seed=7 rate=300 refund_mode=()
while [[ $# -gt 0 ]]; do
    case "$1" in
        --keep-running) keep_running=true ;;
        --customers) customers=$2; shift ;;
        --seed) seed=$2; shift ;;
        --rate) rate=$2; shift ;;
        --refunds-without-status) refund_mode=(--refunds-without-status) ;;
        *) echo "usage: $0 [--keep-running] [--customers N] [--seed S] [--rate R] [--refunds-without-status]" >&2; exit 2 ;;
    esac
    shift
done
deploy/local/prerequisites.sh
source deploy/local/env.sh
source deploy/local/pipeline.sh
products=(iapctl ingest chain-verifier entitlement-updater refund-resolver event-publisher customer-api retention-messaging
    webhook-dispatcher appstore-sim)
echo "== building (debug): ${products[*]} (a first build takes about 10 minutes on 2 cores)"
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
    pids_stop
    stack_stop "$work"
    rm -rf "$work"
}
trap stop_all EXIT
trap 'exit 130' INT TERM

# MARK: the real Apple notification, offline
sample=Tests/Fixtures/real-sandbox/signedPayload_DID_RENEW
echo "== iapctl verify: the real Apple-signed DID_RENEW notification (Sandbox)"
"$bin/iapctl" verify --bundle-id "${real_app%%:*}" --app-apple-id "${real_app##*:}" --environment Sandbox "$sample" \
    | python3 -c 'import json, sys; n = json.load(sys.stdin); t = n["data"]["transactionInfo"]
print("  valid:", n["notificationType"], n["notificationUUID"], "transaction", t["transactionId"], t["productId"])'

# MARK: components and services
# Every service exports its spans (OTLP/HTTP JSON) to a local receiver; the summary prints one notification's trace.
trace_port=$(deploy/local/free-port.sh)
python3 deploy/local/trace-collector.py serve "$trace_port" "$work/spans.jsonl" &
pids+=($!)
export OTEL_TRACES_EXPORTER=otlp OTEL_EXPORTER_OTLP_PROTOCOL=http/json OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$trace_port" \
    OTEL_BSP_SCHEDULE_DELAY=500
echo "== starting the broker, PostgreSQL, topics, appstore-sim's keys and the seven services"
stack_start "$work" "$bin"
sim_port=$(deploy/local/free-port.sh)
# The renewal-time sweep looks every 2 s for subscriptions past their end (production default: every 60 s, 1 h after).
export RENEWAL_SWEEP_INTERVAL_MS=2000 RENEWAL_SWEEP_MARGIN_MS=0
# Consumption requests are answered (decline, no sample content) when the customer consented; requests past their
# 12-hour window are reported, not answered.
export CONSUMPTION_POLICY="refundPreference=DECLINE,sampleContentProvided=false" CONSUMPTION_WATCH_INTERVAL_MS=5000
pipeline_start "$bin" "$work" "$sim_port"
ingest="http://127.0.0.1:${service_port[ingest]}/notifications"
echo "  all seven services ready; ingest at $ingest, customer-api at http://127.0.0.1:${service_port[customer-api]}, the App Store Server API (appstore-sim) at http://127.0.0.1:$sim_port"

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
customer_api="http://127.0.0.1:${service_port[customer-api]}"
api_key=$("$bin/iapctl" api-keys create --bundle-id "${sim_app%%:*}" --label local-run --rate 2000 \
    | "$APPSTORE_TOOLS_PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["token"])')
admin_key=$("$bin/iapctl" api-keys create --bundle-id "${sim_app%%:*}" --label local-run-support --role admin --rate 200 \
    | "$APPSTORE_TOOLS_PYTHON" -c 'import json, sys; print(json.load(sys.stdin)["token"])')
# customer-api reads its keys every CUSTOMER_API_KEY_REFRESH_MS (2 s): wait until the new ones work.
for key in "$api_key" "$admin_key"; do
    for _ in $(seq 1 100); do
        status=$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $key" \
            "$customer_api/v1/apps/${sim_app%%:*}/customers/key-check")
        [ "$status" != 401 ] && break
        sleep 0.1
    done
done
echo "== a webhook endpoint for the sim's app (iapctl webhooks create): a local receiver that verifies every delivery"
echo "   with the standardwebhooks package and answers 500 to 10% of them (docs/webhooks.md)"
webhook_port=$(deploy/local/free-port.sh)
echo '{}' > "$work/webhook-secrets.json"
"$APPSTORE_TOOLS_PYTHON" Tests/Contract/webhook_receiver.py "$webhook_port" "$work/webhook-secrets.json" "$work/webhooks.jsonl" \
    --fail-share 0.1 --slow-share 0 > "$work/webhook-receiver.log" 2>&1 &
pids+=($!)
webhooks() { "$bin/iapctl" webhooks "$@" --api-url "http://127.0.0.1:$customer_api_admin_port" --key "$admin_key" --app "${sim_app%%:*}"; }
webhooks create --url "http://127.0.0.1:$webhook_port/ok" --rate-per-second 1000 --concurrency 8 > "$work/webhook.json"
"$APPSTORE_TOOLS_PYTHON" -c 'import json,sys; answer = json.load(open(sys.argv[1])); json.dump({"/ok": [answer["secret"]]}, open(sys.argv[2], "w")); print("  registered", answer["endpoint"]["id"], answer["endpoint"]["url"])' \
    "$work/webhook.json" "$work/webhook-secrets.json"
echo "== appstore-sim: $customers customers (seed $seed), shuffled, 10% delivered twice, offered $rate posts/s;"
if ((${#refund_mode[@]})); then
    echo "   subscription REFUNDs without data.status (--refunds-without-status): refund-resolver settles every one;"
else
    echo "   every subscription notification carries data.status, REFUNDs included, as Apple sends them;"
fi
echo "   the app of 25% of the customers without an appAccountToken posts its purchase to customer-api first (half instead of"
echo "   the notification), and 10% of DID_RENEW/EXPIRED notifications are lost for good (the renewal-time sweep makes up for them);"
echo "   20% of the purchases have a refund request open now (CONSUMPTION_REQUEST), 70% of those customers consented through customer-api;"
echo "   half of the app's lapsed subscribers come back with a promotional offer customer-api signs (StoreKit checks it)"
"$bin/appstore-sim" run --dir "$work/sim" --port "$sim_port" --ingest-url "$ingest" --customers "$customers" --seed "$seed" \
    --rate "$rate" --retry-delays-ms 1000,2000 --expected-out "$work/expected.json" --facts-out "$work/facts.json" \
    --app-post-share 0.25 --lost-share 0.1 --customer-api-url "$customer_api" --customer-api-key "$api_key" \
    --open-refund-requests 0.2 --consent-share 0.7 --offer-purchase-share 0.5 ${refund_mode[@]+"${refund_mode[@]}"} \
    --keep-serving 2>"$work/appstore-sim.log" &
pids+=($!)
sim_follow "$work/appstore-sim.log" "${pids[-1]}"

echo "== waiting until the pipeline has applied and published everything (at most 180 s)"
services=()
for service in "${pipeline_services[@]}"; do services+=(--service "$service=http://127.0.0.1:${operations_port[$service]}"); done
status=0
"$APPSTORE_TOOLS_PYTHON" deploy/local/summary.py --customer-api "$customer_api" --api-key "$api_key" --admin-key "$admin_key" \
    --customer-api-admin "http://127.0.0.1:$customer_api_admin_port" \
    --bootstrap "$bootstrap" --database-url "$DATABASE_URL" \
    --expected "$work/expected.json" --facts "$work/facts.json" "${services[@]}" --wait 180 &
pids+=($!)
wait $! || status=$?
echo "== webhooks: every event of the sim's app in Production delivered, verified, in sequence per subject"
webhook_id=$("$APPSTORE_TOOLS_PYTHON" -c 'import json,sys; print(json.load(open(sys.argv[1]))["endpoint"]["id"])' "$work/webhook.json")
for _ in $(seq 1 120); do
    pending=$(webhooks list | "$APPSTORE_TOOLS_PYTHON" -c 'import json,sys; print(sum(e["pending"] for e in json.load(sys.stdin)["endpoints"]))')
    [ "$pending" = 0 ] && break
    sleep 0.5
done
"$APPSTORE_TOOLS_PYTHON" - "$work/webhooks.jsonl" "$pending" <<'PY' || status=1
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
accepted, last, wrong = {}, {}, 0
for row in rows:
    if row["answer"] != 200 or row["id"] in accepted:
        continue
    event = json.loads(row["body"])
    accepted[row["id"]] = event
    subject, number = event.get("subject"), event.get("sequence")
    if number is not None:
        wrong += number != last.get(subject, 0) + 1
        last[subject] = number
unverified = sum(not row["verified"] for row in rows)
print(f"  {len(rows)} requests, {len(accepted)} events accepted, {sum(r['answer'] == 500 for r in rows)} answered 500 "
      f"and retried, {unverified} not verified, {wrong} out of sequence, {sys.argv[2]} still pending")
sys.exit(1 if unverified or wrong or sys.argv[2] != "0" else 0)
PY
webhooks deliveries "$webhook_id" --limit 1 | sed 's/^/  newest delivery: /' | cut -c1-240
echo "== Retention Messaging: Apple's side set up with iapctl retention, Apple's performance test, then real-time requests"
retention_url="http://127.0.0.1:${service_port[retention-messaging]}/retention-message"
retention() { "$bin/iapctl" retention "$@" --app "${sim_app%%:*}" 2>&1 | sed 's/^/  /'; }
for n in 1 2 3 4; do
    for environment in Sandbox Production; do
        retention messages upload --environment $environment --id "6f1d9c1e-0d0e-4e55-8a55-0b6a1c2d3e0$n" \
            --header "Before you go" --body "Message $n of the example rules" > /dev/null
    done
done
sleep 1.5   # the sim's App Review: PENDING for a second, then APPROVED
retention messages list --environment Sandbox
for environment in Sandbox Production; do
    retention default --environment $environment --product com.example.pro.weekly --locale en-US --set 6f1d9c1e-0d0e-4e55-8a55-0b6a1c2d3e01
done
retention url --environment Sandbox --set "$retention_url"
sandbox_subscription=$("$APPSTORE_TOOLS_PYTHON" -c 'import json,sys; print(next(e["originalTransactionId"] for e in json.load(open(sys.argv[1])) if e["environment"] == "Sandbox" and e["productId"] == "com.example.pro.weekly"))' "$work/expected.json")
retention performance-test --environment Sandbox --original-transaction-id "$sandbox_subscription" --timeout 120 || status=1
retention url --environment Production --set "$retention_url"
"$APPSTORE_TOOLS_PYTHON" - "http://127.0.0.1:$sim_port/sim/retention/requests" "$work/expected.json" <<'PY' || status=1
import collections, json, sys, urllib.request
url, expected = sys.argv[1], json.load(open(sys.argv[2]))
subscriptions = sorted({e["originalTransactionId"] for e in expected
                        if e["environment"] == "Production" and e["productId"] == "com.example.pro.weekly"})[:60]
kinds, slowest = collections.Counter(), 0.0
for n, original in enumerate(subscriptions):
    body = {"environment": "Production", "originalTransactionId": original, "productId": "com.example.pro.weekly",
            "userLocale": ["en-US", "fr-FR", "de-DE"][n % 3]}
    request = urllib.request.Request(url, json.dumps(body).encode(), {"Content-Type": "application/json"})
    outcome = json.load(urllib.request.urlopen(request))
    answer = outcome.get("answer") or {}
    kinds[next((k for k in ("promotionalOffer", "alternateProduct", "message") if k in answer), "none")] += 1
    slowest = max(slowest, outcome["milliseconds"])
    if outcome["result"] != "SUCCESS" or not outcome.get("messageApproved"):
        print(f"  {original}: {outcome}"); sys.exit(1)
print(f"  {len(subscriptions)} real-time requests answered by rule: " + ", ".join(f"{k} {v}" for k, v in sorted(kinds.items()))
      + f" (slowest {slowest:.1f} ms)")
PY
echo "== one notification's trace (W3C traceparent through Kafka headers and the outbox; spans exported over OTLP)"
sleep 1
python3 deploy/local/trace-collector.py show "$work/spans.jsonl" | sed 's/^/  /'
echo "  broker: $bootstrap   database: $DATABASE_URL   logs: $work"
echo "  try: $bin/iapctl entitlements <customer>   (DATABASE_URL as above)"

if $keep_running; then
    echo "== the stack is up; Ctrl-C stops everything"
    while true; do sleep 1; done
fi
exit $status
