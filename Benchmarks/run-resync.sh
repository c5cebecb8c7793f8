#!/usr/bin/env bash
# Onboarding at size: `iapctl resync` of existing subscribers (default: a scenario with at least 100,000 Production
# subscriptions) against appstore-sim, with the broker, PostgreSQL and the pipeline's services applying what it
# imports. The sim enforces Apple's limits (RATE calls a second per endpoint for Get Transaction History and Get All
# Subscription Statuses, Apple's 50 in Production by default) and iapctl paces itself at the same RATE. The run is
# interrupted halfway (SIGTERM, as an orchestrator stops a job; Ctrl-C is the same) and run again: it resumes from its
# journal.
# Prints the time against the baseline the limit allows (SUBSCRIPTIONS / RATE seconds: one history and one status
# call per subscription, each endpoint its own budget), the 429s met, whether any subscription was asked twice, and
# what the updater stored; then the same limits met by an unpaced client on a slice, for comparison.
# Debug build: the run is bound by Apple's rate, not by CPU.
# Usage: Benchmarks/run-resync.sh [SUBSCRIPTIONS] [RATE] [UNPACED_SLICE] [CONCURRENCY]
set -euo pipefail
cd "$(dirname "$0")/.."
source Benchmarks/binaries.sh
source deploy/local/pipeline.sh
wanted=${1:-100000} rate=${2:-50} slice=${3:-2000} concurrency=${4:-16}
# A debug build unless BENCHMARK_BIN names other binaries: the run is bound by Apple's rate, not by CPU.
if [[ -z ${BENCHMARK_BIN:-} ]]; then
    deploy/local/prerequisites.sh
    source deploy/local/env.sh
    swift build 2>&1 | grep -E "error:" || true
    export BENCHMARK_BIN; BENCHMARK_BIN=$(swift build --show-bin-path)
fi
benchmark_binaries iapctl "${pipeline_services[@]}" appstore-sim
work=$(mktemp -d)
pids=()
cleanup() { pids_stop; stack_stop "$work"; rm -rf "$work"; }
trap cleanup EXIT
echo "== stack and services"
stack_start "$work" "$bin"
sim_port=$(deploy/local/free-port.sh)
pipeline_start "$bin" "$work" "$sim_port"
sim="http://127.0.0.1:$sim_port"

# About 0.8 Production auto-renewable subscriptions per customer in the sim's scenarios.
customers=$((wanted * 13 / 10 + 100))
echo "== appstore-sim: $customers customers (their notifications are never sent: the pipeline meets them by resync)"
started=$(date +%s)
"$bin/appstore-sim" run --dir "$work/sim" --port "$sim_port" --customers "$customers" --keep-serving \
    --subscriptions-out "$work/subscriptions.txt" 2> "$work/sim.log" &
pids+=($!)
until curl -fs "$sim/sim/stats" > /dev/null; do
    sleep 1
    kill -0 "${pids[-1]}" 2>/dev/null || { cat "$work/sim.log"; exit 1; }
done
subscriptions=$(wc -l < "$work/subscriptions.txt")
echo "  $subscriptions subscriptions in $(($(date +%s) - started)) s"
limits() {
    curl -fs -X POST "$sim/sim/faults" -H 'Content-Type: application/json' \
        -d "{\"serverErrors\":0,\"rateLimited\":0,\"statusRatePerSecond\":$1,\"historyRatePerSecond\":$1}" > /dev/null
}
stats() { curl -fs "$sim/sim/stats"; }
limits "$rate"

echo "== iapctl resync --rate $rate --concurrency $concurrency, interrupted (SIGTERM) halfway and run again"
resync=("$bin/iapctl" resync --file "$work/subscriptions.txt" --rate "$rate" --concurrency "$concurrency")
first_start=$(date +%s.%N)
"${resync[@]}" > "$work/first.out" 2> "$work/first.err" &
resync_pid=$!
until [[ -f "$work/subscriptions.txt.done" ]] && (($(wc -l < "$work/subscriptions.txt.done") > subscriptions / 2)); do
    sleep 0.2
    kill -0 "$resync_pid" 2>/dev/null || break
done
kill -TERM "$resync_pid" 2>/dev/null || true
status=0
wait "$resync_pid" || status=$?
first_end=$(date +%s.%N)
tail -n 1 "$work/first.err" | tr '\r' '\n' | tail -n 1 | sed 's/^/  /'
sed 's/^/  /' "$work/first.out"
echo "  exit status $status (130: interrupted)"
second_start=$(date +%s.%N)
"${resync[@]}" > "$work/second.out" 2> "$work/second.err" || true
second_end=$(date +%s.%N)
head -n 1 "$work/second.err" | sed 's/^/  /'
sed 's/^/  /' "$work/second.out"
paced=$(stats)

echo "== the pipeline applies what was imported"
for _ in $(seq 1 1800); do
    lag=$(psql "$DATABASE_URL" -Atc "SELECT count(*) FROM outbox_pending")
    snapshots=$(psql "$DATABASE_URL" -Atc "SELECT count(*) FROM notification_log WHERE notification_type = 'STATUS_SNAPSHOT'")
    [[ $snapshots -ge $subscriptions && $lag -eq 0 ]] && break
    sleep 2
done
stored=$(psql "$DATABASE_URL" -Atc "SELECT (SELECT count(*) FROM transactions) || ' transactions, ' || (SELECT count(*) FROM entitlements) || ' entitlements, ' || (SELECT count(*) FROM notification_log WHERE notification_type = 'STATUS_SNAPSHOT') || ' status snapshots applied'")

echo "== unpaced: the first $slice subscriptions again with --rate 10000 against the same limits"
head -n "$slice" "$work/subscriptions.txt" > "$work/slice.txt"
slice_start=$(date +%s.%N)
"$bin/iapctl" resync --file "$work/slice.txt" --journal "$work/slice.done" --rate 10000 --concurrency "$concurrency" \
    > "$work/slice.out" 2> /dev/null || true
sed 's/^/  /' "$work/slice.out"
slice_end=$(date +%s.%N)
unpaced=$(stats)

"$APPSTORE_TOOLS_PYTHON" - "$subscriptions" "$rate" "$slice" "$first_start" "$first_end" "$second_start" "$second_end" \
    "$slice_start" "$slice_end" "$paced" "$unpaced" "$stored" <<'PY'
import json, sys
subscriptions, rate, slice_ = int(sys.argv[1]), float(sys.argv[2]), int(sys.argv[3])
first = float(sys.argv[5]) - float(sys.argv[4])
second = float(sys.argv[7]) - float(sys.argv[6])
unpaced_seconds = float(sys.argv[9]) - float(sys.argv[8])
paced, unpaced = json.loads(sys.argv[10]), json.loads(sys.argv[11])
def refused(stats): return stats.get("answersByStatus", {}).get("429", 0)
seconds = first + second
baseline = subscriptions / rate
print("== resync figures")
print(f"  subscriptions: {subscriptions}; time {seconds:.0f} s ({first:.0f} s, interrupted, + {second:.0f} s resumed)")
print(f"  {subscriptions / seconds:.1f} subscriptions/s against the {rate:g}/s Apple's limit allows: "
      f"{baseline / seconds:.2f} of the baseline ({baseline:.0f} s)")
print(f"  status calls answered {paced['statusCallsAnswered']} (one per subscription: nothing repeated after the "
      f"interrupt), history calls answered {paced['historyCallsAnswered']}; 429s met paced: {refused(paced)}")
print(f"  stored by the updater: {sys.argv[12]}")
extra = refused(unpaced) - refused(paced)
print(f"  unpaced slice: {slice_} subscriptions in {unpaced_seconds:.0f} s, {extra} 429s met "
      f"(each answered by waiting for Retry-After)")
PY
