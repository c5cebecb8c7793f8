#!/usr/bin/env bash
# End-to-end benchmark (release build), everything co-located on this machine: broker, PostgreSQL, the five
# services and appstore-sim. Three phases, each on a fresh broker and database:
#   0. baseline: appstore-sim posting the same scenario to its own /sim/sink (the load generator's ceiling);
#   1. throughput: CUSTOMERS customers' notifications (shuffled, 10% twice) as fast as 32 connections allow,
#      sustained rate = notifications committed ÷ (first HTTP accept → last commit);
#   2. latency, once per offered rate: LATENCY_CUSTOMERS (500) customers at RATE posts/s; p50/p99 from HTTP accept (ingest's
#      received-at) to entitlement committed (its transaction's commit time, track_commit_timestamp) and to
#      downstream event published (the publisher's relay).
# Before each phase's posts, one warm-up notification goes through (every consumer group has joined); only what the sim
# posts after it is counted. Accept → committed second by second goes to stderr.
# Memory: each process's RSS after phase 1 (now / peak). Prints a table; the last line is JSON for scripts.
# The sim posts with its light HTTP client (`--plain-http-client`): with AsyncHTTPClient it took ~0.39 ms of CPU per
# notification from the two cores the pipeline runs on, which Apple's servers never do; BENCHMARK_SIM_CLIENT=standard
# posts with AsyncHTTPClient (a build from before the option).
# Usage: [BENCHMARK_BIN=DIR] [BENCHMARK_SIM_CLIENT=standard] Benchmarks/run-end-to-end.sh [CUSTOMERS] [RATES]
#   [LATENCY_CUSTOMERS]   (default 2000, 100,250,500, 500)
set -euo pipefail
cd "$(dirname "$0")/.."
customers=${1:-2000}
rates=${2:-100,250,500}
latency_customers=${3:-500}
IFS=, read -r -a rate_list <<< "$rates"
sim_client=(--plain-http-client)
# Apple's five retries of a notification that failed, compressed to seconds (Apple: 1, 12, 24, 48 and 72 hours). Without
# them one post refused under load (ingest's 503 when the broker does not acknowledge in time) was lost for good, and
# the phase waited for a convergence that could not come, as if the pipeline had lost a notification.
apple_retries=1000,2000,4000,8000,16000
[[ ${BENCHMARK_SIM_CLIENT:-plain} == standard ]] && sim_client=()
source Benchmarks/binaries.sh
source deploy/local/pipeline.sh
benchmark_binaries "${pipeline_services[@]}" appstore-sim iapctl
work=$(mktemp -d)
pids=()
stop_phase() { pids_stop; stack_stop "$1"; }
trap 'stop_phase "$work/phase"; rm -rf "$work"' EXIT
export LOG_LEVEL=error
export POSTGRES_OPTIONS="-c track_commit_timestamp=on"

# MARK: phases

# sim_report LOG: "posts/s p50 p99" of the sim's delivery line.
sim_report() {
    sed -nE 's/.*= ([0-9]+)\/s; latency ms p50 ([0-9.]+) p90 [0-9.]+ p99 ([0-9.]+).*/\1 \2 \3/p' "$1" | tail -n 1
}

# warm_up DIR: posts the real Apple notification of Tests/Fixtures (another app than the sim's, so no expected
# entitlement changes) and waits until the entitlement-updater logged it. Only then has every consumer group its
# partitions: a phase that posted at once measured the groups' join (~0.5 s) in its first notifications' latency.
warm_up() {
    python3 -c 'import json, sys; print(json.dumps({"signedPayload": open(sys.argv[1]).read().strip()}))' \
        Tests/Fixtures/real-sandbox/signedPayload_DID_RENEW > "$1/warm-up.json"
    curl -fsS -o /dev/null -H 'Content-Type: application/json' --data-binary @"$1/warm-up.json" \
        "http://127.0.0.1:${service_port[ingest]}/notifications"
    for _ in $(seq 1 300); do
        [[ $(psql "$DATABASE_URL" -Atc "SELECT count(*) FROM notification_log") -ge 1 ]] && return 0
        sleep 0.1
    done
    echo "the warm-up notification was not logged within 30 s" >&2
    return 1
}

# run_phase NAME CUSTOMERS SIM_ARGS...: a fresh stack, the scenario, the figures (JSON) in $work/NAME.json.
run_phase() {
    local name=$1 count=$2; shift 2
    local dir="$work/phase"
    rm -rf "$dir"; mkdir -p "$dir"
    echo "== phase $name: $count customers $*" >&2
    stack_start "$dir" "$bin" >/dev/null
    local sim_port; sim_port=$(deploy/local/free-port.sh)
    pipeline_start "$bin" "$dir" "$sim_port"
    warm_up "$dir"
    local since; since=$(date +%s%3N)
    "$bin/appstore-sim" run --dir "$dir/sim" --port "$sim_port" --customers "$count" --seed 11 "${sim_client[@]}" \
        --ingest-url "http://127.0.0.1:${service_port[ingest]}/notifications" --expected-out "$dir/expected.json" \
        --retry-delays-ms "$apple_retries" --keep-serving "$@" 2>"$dir/sim.log" &
    local sim_pid=$!
    pids+=($sim_pid)
    sim_follow "$dir/sim.log" "$sim_pid" >&2
    local undelivered
    undelivered=$(sim_undelivered "$dir/sim.log")
    if [[ "$undelivered" != 0 ]]; then
        echo "appstore-sim could not deliver $undelivered notifications after Apple's retries ($apple_retries ms):" \
            "ingest refused them or did not answer in time every time, so the phase cannot converge;" \
            "the sim's lines above count each pass's failed posts" >&2
        return 1
    fi
    local memory=()
    for service in "${pipeline_services[@]}"; do memory+=("$service=${service_pid[$service]}"); done
    memory+=("appstore-sim=$sim_pid" "tansu=$(cat "$dir/kafka/tansu.pid")")
    "$APPSTORE_TOOLS_PYTHON" Benchmarks/end_to_end.py --database-url "$DATABASE_URL" --expected "$dir/expected.json" \
        --bootstrap "$bootstrap" --since-ms "$since" --pids "${memory[@]}" | tail -n 1 > "$work/$name.json"
    sim_report "$dir/sim.log" > "$work/$name.sim"
    stop_phase "$dir"
}

# The baseline: the sim alone, posting to its own sink.
dir="$work/phase"; mkdir -p "$dir"
"$bin/appstore-sim" init --dir "$dir/sim" >/dev/null
sink_port=$(deploy/local/free-port.sh)
echo "== phase 0: appstore-sim posting to its own sink" >&2
"$bin/appstore-sim" run --dir "$dir/sim" --port "$sink_port" --customers "$customers" --seed 11 --concurrency 32 "${sim_client[@]}" \
    --ingest-url "http://127.0.0.1:$sink_port/sim/sink" 2>"$work/sink.log"
"$bin/appstore-sim" run --dir "$dir/sim" --port "$sink_port" --customers "$latency_customers" --seed 11 --rate "${rate_list[-1]}" "${sim_client[@]}" \
    --ingest-url "http://127.0.0.1:$sink_port/sim/sink" 2>"$work/sink-rate.log"
read -r sink_rate _ _ < <(sim_report "$work/sink.log")
read -r _ sink_p50 sink_p99 < <(sim_report "$work/sink-rate.log")
rm -rf "$dir"

run_phase throughput "$customers" --concurrency 32
for rate in "${rate_list[@]}"; do run_phase "latency-$rate" "$latency_customers" --rate "$rate" --concurrency 16; done

# MARK: the table
"$APPSTORE_TOOLS_PYTHON" - "$work" "$sink_rate" "$sink_p50" "$sink_p99" "$customers" "$rates" <<'PY'
import json, sys
work, sink_rate, sink_p50, sink_p99, customers, rates = sys.argv[1:]
rates = rates.split(",")
t = json.load(open(f"{work}/throughput.json"))
t_posts, _, _ = open(f"{work}/throughput.sim").read().split()
rows = [
    ("appstore-sim → its own /sim/sink, 32 connections", f"{float(sink_rate):,.0f} posts/s", "baseline (load generator ceiling)"),
    (f"end to end, {customers} customers: posts accepted by ingest", f"{float(t_posts):,.0f} posts/s",
     f"{float(t_posts) / float(sink_rate):.2f} of the baseline"),
    ("end to end sustained: notifications committed (accept → last commit)", f"{t['rate']:,.0f} notifications/s",
     f"{t['notifications']} notifications in {t['seconds']:.1f} s; {'converged' if t['converged'] else 'NOT CONVERGED'}"),
]
curve = {}
for rate in rates:
    l = json.load(open(f"{work}/latency-{rate}.json"))
    _, i50, i99 = open(f"{work}/latency-{rate}.sim").read().split()
    curve[rate] = l
    rows += [
        (f"HTTP answer at {rate}/s offered, p50 / p99 (sim's view)", f"{float(i50):.1f} / {float(i99):.1f} ms",
         f"baseline sink at {rates[-1]}/s {float(sink_p50):.1f} / {float(sink_p99):.1f} ms" if rate == rates[-1] else ""),
        (f"accept → entitlement committed at {rate}/s, p50 / p99", f"{l['committed_p50_ms']:.0f} / {l['committed_p99_ms']:.0f} ms",
         f"{l['notifications']} notifications"),
        (f"accept → downstream event published at {rate}/s, p50 / p99", f"{l['published_p50_ms']:.0f} / {l['published_p99_ms']:.0f} ms",
         f"{l['events']} events"),
    ]
for name, (now, peak) in t["memory_mib"].items():
    rows.append((f"memory after the throughput phase: {name}", f"{now} MiB", f"peak {peak} MiB"))
print(f"\n{'measurement (release, 2 cores, everything co-located)':<72} {'value':>22}  compared with")
for row in rows:
    print(f"{row[0]:<72} {row[1]:>22}  {row[2]}")
print(json.dumps({"throughput": t, "latency": curve, "sink_rate": float(sink_rate)}))
PY
