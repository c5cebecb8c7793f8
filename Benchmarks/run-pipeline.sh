#!/usr/bin/env bash
# Stage benchmarks of the running pipeline, each next to its baseline measured in the same run (release):
#   1. ingest requests/s (outer JWS verified, acks=all into a local Tansu broker) vs a bare Hummingbird 200-OK
#      endpoint, vs ingest without the edge verification (same wrk load, real 18.6 KB Apple notification), and vs
#      the right limit: the same bodies produced to the same broker with acks=all as fast as librdkafka goes,
#      without HTTP (produce-baseline);
#   2. chain-verifier notifications/s over what ingest stored vs verification-benchmark's all-core rate.
# Usage: Benchmarks/run-pipeline.sh [SECONDS]   (default 10 s of load per HTTP figure)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
deploy/local/prerequisites.sh
command -v wrk >/dev/null || { DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends wrk >/dev/null; }
source deploy/local/env.sh
for product in ingest chain-verifier http-baseline produce-baseline verification-benchmark iapctl; do
    swift build -c release --product "$product" 2>&1 | grep -E "error|warning: unre" || true
done
bin=$(swift build -c release --show-bin-path)
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    deploy/local/broker.sh stop "$work/kafka"
    rm -rf "$work"
}
trap cleanup EXIT

wait_ready() { for _ in $(seq 1 200); do curl -fs "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "not ready: $1" >&2; exit 1; }
metric() { curl -fs "$1/metrics" | awk -v name="$2" '$1 == name { print $2 }'; }
wrk_rate() { wrk -t1 -c32 -d"${seconds}s" -s "$work/post.lua" "$1/notifications" | tee "$work/wrk.txt" | awk '/Requests\/sec/ { print $2 }'; }

bootstrap=$(deploy/local/broker.sh start "$work/kafka")
"$bin/iapctl" topics --bootstrap-servers "$bootstrap" --partitions 4 >/dev/null
python3 - "$work" <<'PY'
import json, sys
jws = open("Tests/Fixtures/real-sandbox/signedPayload_DID_RENEW").read().strip()
body = json.dumps({"signedPayload": jws})
open(sys.argv[1] + "/body.json", "w").write(body)
open(sys.argv[1] + "/post.lua", "w").write(
    'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ' + json.dumps(body) + "\n")
PY

export APPSTORE_APPS="com.loki-project.loki-messenger:1470168868" APPSTORE_ENVIRONMENTS=Sandbox LOG_LEVEL=error
export KAFKA_BOOTSTRAP_SERVERS="$bootstrap" HTTP_HOST=127.0.0.1

baseline_port=$(deploy/local/free-port.sh)
"$bin/http-baseline" "$baseline_port" >/dev/null 2>&1 & pids+=($!)
sleep 1
baseline=$(wrk_rate "http://127.0.0.1:$baseline_port")
kill "${pids[-1]}"

# The produce-only limit: the same bodies, the same broker, a topic like the raw one (4 partitions) that the
# chain-verifier does not read, acks=all, 256 in flight, no HTTP.
"$bin/iapctl" topics --bootstrap-servers "$bootstrap" --topic produce.baseline:4 >/dev/null
produce_line=$("$bin/produce-baseline" "$bootstrap" "$work/body.json" "$seconds" 256 produce.baseline)
produced=${produce_line%% *}

# ingest without the edge verification first (what it was before: structural checks only), for the ratio.
ingest_port=$(deploy/local/free-port.sh)
INGEST_VERIFY=false HTTP_PORT=$ingest_port "$bin/ingest" 2>"$work/ingest-unverified.log" & pids+=($!)
wait_ready "http://127.0.0.1:$ingest_port/ready"
ingest_unverified=$(wrk_rate "http://127.0.0.1:$ingest_port")
kill "${pids[-1]}"

ingest_port=$(deploy/local/free-port.sh)
HTTP_PORT=$ingest_port "$bin/ingest" 2>"$work/ingest.log" & pids+=($!)
wait_ready "http://127.0.0.1:$ingest_port/ready"
ingest=$(wrk_rate "http://127.0.0.1:$ingest_port")
non2xx=$(awk '/Non-2xx/ { print $5 }' "$work/wrk.txt")
accepted=$(metric "http://127.0.0.1:$ingest_port" 'ingest_requests_total{outcome="accepted"}')
kill "${pids[-1]}"

verify_line=$("$bin/verification-benchmark" --seconds 3 | grep "cores" | tail -n 1)
raw_rate=$(echo "$verify_line" | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+$/ && $(i+1) == "compared") print $i }')
[[ -n "$raw_rate" ]] || raw_rate=$(echo "$verify_line" | grep -oE '[0-9]{3,}' | head -n 1)

verifier_port=$(deploy/local/free-port.sh)
HTTP_PORT=$verifier_port KAFKA_SESSION_TIMEOUT_MS=6000 "$bin/chain-verifier" 2>"$work/verifier.log" & pids+=($!)
wait_ready "http://127.0.0.1:$verifier_port/health"
# Steady-state rate: from 10% to 90% of the stored notifications (skips the group join and the tail).
low=$((accepted / 10)); high=$((accepted * 9 / 10)); t_low=""; t_high=""
for _ in $(seq 1 6000); do
    count=$(metric "http://127.0.0.1:$verifier_port" chain_verifier_verified_total); count=${count:-0}
    now=$(date +%s.%N)
    [[ -z "$t_low" && "$count" -ge "$low" ]] && { t_low=$now; c_low=$count; }
    if [[ "$count" -ge "$high" ]]; then t_high=$now; c_high=$count; break; fi
    sleep 0.05
done
verifier=$(python3 -c "print(round(($c_high - $c_low) / ($t_high - $t_low)))")

printf '\n%-62s %12s  %s\n' "measurement (2 cores, broker and load generator co-located)" "per second" "compared with"
printf '%-62s %12.0f  %s\n' "bare Hummingbird 200 OK (same body, wrk -c32)" "$baseline" "baseline"
printf '%-62s %12.0f  %s\n' "ingest without edge verification (INGEST_VERIFY=false)" "$ingest_unverified" \
    "$(python3 -c "print(f'{$ingest_unverified / $baseline:.2f} of the bare endpoint')")"
printf '%-62s %12.0f  %s\n' "produce-only limit (same bodies, acks=all, no HTTP)" "$produced" "baseline"
printf '%-62s %12.0f  %s\n' "ingest: verify outer JWS, produce acks=all + wait, then 200" "$ingest" \
    "$(python3 -c "print(f'{$ingest / $baseline:.2f} of the bare endpoint, {$ingest / $ingest_unverified:.2f} of unverified ingest, {$ingest / $produced:.2f} of the produce-only limit')")"
printf '%-62s %12s  %s\n' "  accepted into the raw topic / non-2xx answers" "${accepted}" "non-2xx: ${non2xx:-0}"
printf '%-62s %12s  %s\n' "raw verification (verification-benchmark, all cores)" "$raw_rate" "baseline"
printf '%-62s %12s  %s\n' "chain-verifier: consume, verify, produce verified, store offsets" "$verifier" \
    "$(python3 -c "print(f'{$verifier / $raw_rate:.2f} of raw verification')")"
