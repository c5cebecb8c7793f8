#!/usr/bin/env bash
# Stage benchmarks of the running pipeline, each next to its baseline measured in the same run (release):
#   1. ingest requests/s (outer JWS verified, acks=all into a local Tansu broker) against the right limit: the same
#      bodies produced to the same broker with acks=all as fast as librdkafka goes, without HTTP (produce-baseline),
#      both at 128 in flight, alternating, best of PIPELINE_ROUNDS (3), the baseline timed from its first
#      acknowledgement and refused as implausible below ingest's rate; also ingest's own CPU per request, ingest
#      without the edge verification, with its tasks on Swift's pool, at 32 connections, and a bare Hummingbird
#      200-OK endpoint (real 18.6 KB Apple notification as the body);
#   2. chain-verifier notifications/s over what ingest stored vs verification-benchmark's all-core rate, with the CPU
#      per notification of each and the broker's beside them; then again with the broker on a CPU of its own and the
#      verifier and its baseline on the others (PIPELINE_BROKER_APART=no leaves that out); each time, once 60 % of
#      the backlog is verified, full verification's CPU per notification beside the verifier on the same CPUs
#      (verification-benchmark --cost-probe), so that one ratio has its baseline at the same moments.
# Usage: [BENCHMARK_BIN=DIR] [BENCHMARK_TRACING=sampled] [PIPELINE_ROUNDS=N] [PIPELINE_BROKER_APART=no]
#        Benchmarks/run-pipeline.sh [SECONDS]   (default 10 s of load per HTTP figure)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-10}
source Benchmarks/binaries.sh
benchmark_binaries ingest chain-verifier http-baseline produce-baseline verification-benchmark iapctl
work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    deploy/local/broker.sh stop "$work/kafka"
    rm -rf "$work"
}
trap cleanup EXIT
benchmark_tracing "$work"
[[ -z $tracing_pid ]] || pids+=("$tracing_pid")

wait_ready() { for _ in $(seq 1 200); do curl -fs "$1" >/dev/null 2>&1 && return 0; sleep 0.1; done; echo "not ready: $1" >&2; exit 1; }
# wait_listening URL: until an HTTP server answers at URL, whatever the status (the bare endpoint has no GET route).
wait_listening() {
    for _ in $(seq 1 200); do curl -s -o /dev/null "$1" && return 0; sleep 0.1; done
    echo "not listening: $1" >&2; exit 1
}
metric() { curl -fs "$1/metrics" | awk -v name="$2" '$1 == name { print $2 }'; }
# wrk_rate URL [CONNECTIONS]: POSTs the notification to URL/notifications for $seconds (32 connections unless given);
# prints requests/s and leaves wrk's report in $work/wrk.txt.
wrk_rate() { wrk -t1 -c"${2:-32}" -d"${seconds}s" -s "$work/post.lua" "$1/notifications" | tee "$work/wrk.txt" | awk '/Requests\/sec/ { print $2 }'; }

# fresh_broker [PIN...]: stops the broker of the previous figure and starts an empty one (under PIN, e.g. taskset -c 0)
# with the pipeline's topics. Tansu keeps what it stores in memory and slows as it fills (hundreds of thousands of
# 18.6 KB messages here), so every figure starts from the same empty broker instead of behind the ones measured before.
fresh_broker() {
    deploy/local/broker.sh stop "$work/kafka"
    bootstrap=$("$@" deploy/local/broker.sh start "$work/kafka")
    export KAFKA_BOOTSTRAP_SERVERS="$bootstrap"
    "$bin/iapctl" topics --bootstrap-servers "$bootstrap" --partitions 4 --replication-factor 1 >/dev/null
    "$bin/iapctl" topics --bootstrap-servers "$bootstrap" --replication-factor 1 --topic produce.baseline:4 >/dev/null
}

python3 - "$work" <<'PY'
import json, sys
jws = open("Tests/Fixtures/real-sandbox/signedPayload_DID_RENEW").read().strip()
body = json.dumps({"signedPayload": jws})
open(sys.argv[1] + "/body.json", "w").write(body)
open(sys.argv[1] + "/post.lua", "w").write(
    'wrk.method = "POST"\nwrk.headers["Content-Type"] = "application/json"\nwrk.body = ' + json.dumps(body) + "\n")
PY

export APPSTORE_APPS="com.loki-project.loki-messenger:1470168868" APPSTORE_ENVIRONMENTS=Sandbox LOG_LEVEL=error
export HTTP_HOST=127.0.0.1

baseline_port=$(deploy/local/free-port.sh)
"${untraced[@]}" "$bin/http-baseline" "$baseline_port" >/dev/null 2>&1 & pids+=($!)
# Waited for, not slept on: a fresh CI machine's debug build once took over a second to listen, and wrk's "unable to
# connect" failed the smoke run.
wait_listening "http://127.0.0.1:$baseline_port/"
baseline=$(wrk_rate "http://127.0.0.1:$baseline_port")
# The baseline is checked before it is a figure: a bare endpoint that answered anything but 200 measured nothing.
if grep -q "Non-2xx" "$work/wrk.txt" || [[ -z "$baseline" ]]; then
    echo "implausible baseline: the bare endpoint did not answer every request 200:" >&2; cat "$work/wrk.txt" >&2; exit 1
fi
kill "${pids[-1]}"

# The produce-only limit against ingest, alternating, each figure on a fresh broker: broker and load generator share
# the 2 cores, and one run of either figure moves by up to a fifth from the next, so each is measured $rounds times,
# turn about, and the best of each is compared: three times, since two rounds of ingest in one run read 5,513 and
# 6,323 requests/s (2026-12-01) and the best of two still moved by a tenth from one run to the next. Same concurrency
# on both sides: $in_flight messages in flight for produce-baseline (the same bodies, a topic like the raw one with 4
# partitions, acks=all, no HTTP), $in_flight connections for ingest (below its 256-request shedding limit), as fast as
# each goes.
rounds=${PIPELINE_ROUNDS:-3}
in_flight=128
# ingest_run NAME ENV...: starts ingest with ENV and loads it with wrk -c$in_flight; sets run_rate (requests/s) and
# run_cpu (ingest's own CPU per request, µs) and accepted (what it stored on its fresh broker); adds its non-2xx
# answers to non2xx.
non2xx=0
ingest_run() {
    local name=$1; shift
    fresh_broker
    local port; port=$(deploy/local/free-port.sh)
    env "$@" HTTP_PORT="$port" "$bin/ingest" 2>"$work/ingest-$name.log" & pids+=($!)
    wait_ready "http://127.0.0.1:$port/ready"
    local pid=${pids[-1]} cpu0 cpu1 requests
    cpu0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
    run_rate=$(wrk_rate "http://127.0.0.1:$port" "$in_flight")
    cpu1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
    requests=$(awk '/requests in/ { print $1 }' "$work/wrk.txt")
    non2xx=$((non2xx + $(awk '/Non-2xx/ { print $5 }' "$work/wrk.txt" | grep . || echo 0)))
    accepted=$(metric "http://127.0.0.1:$port" 'ingest_requests_total{outcome="accepted"}')  # what the broker now holds
    kill "$pid"; wait "$pid" 2>/dev/null || true
    run_cpu=$(python3 -c "print(round(($cpu1 - $cpu0) * 1e6 / $(getconf CLK_TCK) / $requests))")
}
produced=0; ingest=0; ingest_cpu=0; rounds_text=""
# The variants first, so that the broker of the last verified round is the one the chain-verifier reads below.
# ingest without the edge verification (structural checks only), and with its tasks on Swift's pool instead of
# the event loops, for the ratios.
ingest_run unverified INGEST_VERIFY=false
ingest_unverified=$run_rate
ingest_run pool SWIFT_TASKS_ON_EVENT_LOOPS=false
ingest_pool=$run_rate; ingest_pool_cpu=$run_cpu
# The same load at 32 connections (the figure of earlier runs; each request waits ~4 ms for the broker's ack there).
in_flight=32
ingest_run c32
ingest_32=$run_rate
in_flight=128
# produce_run: produce-baseline on the current broker (its topic produce.baseline), checked against what the broker
# holds; sets produce_rate and raises produced to it if higher.
produce_run() {
    local line acknowledged
    line=$("${untraced[@]}" "$bin/produce-baseline" "$bootstrap" "$work/body.json" "$seconds" "$in_flight" produce.baseline)
    read -r produce_rate acknowledged _ <<< "$line"
    "$APPSTORE_TOOLS_PYTHON" Benchmarks/plausible.py broker-holds "$bootstrap" "$acknowledged" produce-baseline \
        produce.baseline
    produced=$(python3 -c "print(max($produced, $produce_rate))")
}
for round in $(seq 1 "$rounds"); do
    fresh_broker
    produce_run
    ingest_run "round-$round"
    rounds_text+="${produce_rate%%.*}/${run_rate%%.*} "
    if python3 -c "import sys; sys.exit(0 if $run_rate > $ingest else 1)"; then ingest=$run_rate; ingest_cpu=$run_cpu; fi
done
# The produce-only rate bounds ingest's: the same bodies, idempotent and acks=all, nothing else (lingering 2 ms, as
# fast as it goes, where ingest's producer lingers 10 ms: see produce-baseline). Below ingest's
# it did not measure the limit (a 1-s smoke run once read a seventh of its usual rate: a stall of the machine), so it
# is measured again on the same broker, twice at most; still below, it is an error, not a ratio above 1.
for again in 1 2 3; do
    python3 -c "import sys; sys.exit(0 if $ingest > $produced else 1)" || break
    if ((again == 3)); then
        echo "implausible baseline: produce-only $produced/s, below ingest's $ingest/s (rounds produce/ingest:" \
            "$rounds_text)" >&2
        exit 1
    fi
    echo "the produce-only baseline read $produced/s, below ingest's $ingest/s: measuring it again" >&2
    produce_run
    rounds_text+="again ${produce_rate%%.*} "
done

# raw_verification [PIN...]: verification-benchmark's all-core row ("full verification, chain cache warm, N cores
# RATE …"), run under PIN (e.g. taskset -c 1 … --cores 1); sets raw_rate and raw_cores.
raw_verification() {
    local line
    line=$("$@" | grep -E '^full verification, chain cache warm, [0-9]+ cores ')
    raw_rate=$(echo "$line" | awk '{ for (i = 1; i < NF; i++) if ($i == "cores") { print $(i + 1); exit } }')
    raw_cores=$(echo "$line" | awk '{ for (i = 1; i < NF; i++) if ($(i + 1) == "cores") { print $i; exit } }')
    [[ "$raw_rate" =~ ^[0-9]+$ && "$raw_cores" =~ ^[0-9]+$ ]] || { echo "no all-core verification rate in: $line" >&2; exit 1; }
}

# chain_verifier_run ACCEPTED [PIN...]: starts the chain-verifier (under PIN) on the current broker, whose raw topic
# holds ACCEPTED notifications, and waits until it verified 90 % of them (60 % with probe_seconds, below); sets
# verifier (notifications/s), verifier_cpu (its own CPU per notification, µs) and broker_cpu (the broker's meanwhile,
# µs), then stops it.
# With probe_seconds set, the rate and CPU are taken from 10 % to 60 %, and then verification-benchmark's cost probe
# runs for that long under the same PIN beside the verifier: probe_cpu is full verification's CPU per notification,
# beside_cpu the verifier's own and beside_broker the broker's, over the same seconds ("-" without a probe).
chain_verifier_run() {
    local accepted=$1; shift
    local port; port=$(deploy/local/free-port.sh)
    # chain-verifier signs every verified record as itself: a fresh key of its own for this run (without one it
    # refuses to start, and this script stopped here unnoticed since records are signed).
    RECORD_SIGNING_KEYS="bench:$(head -c 32 /dev/urandom | base64 -w0)" HTTP_PORT=$port KAFKA_SESSION_TIMEOUT_MS=6000 \
        "$@" "$bin/chain-verifier" 2>>"$work/verifier.log" & pids+=($!)
    local pid=${pids[-1]}
    wait_ready "http://127.0.0.1:$port/health"
    # Steady-state rate: from 10% to 90% of the stored notifications (skips the group join and the tail). One Python
    # process reads the counter every 200 ms and interpolates the two crossings: a curl, awk and date every 50 ms
    # took ~5 % of the 2 cores from the process being measured (perf -a), which its baseline did not pay.
    # The same samples give the chain-verifier's own CPU per notification and the broker's (from /proc, between the
    # first sample past 10 % and the last before 90 %): the figure that separates a change in the verifier from the
    # machine's speed, and what the broker on the same cores takes from it.
    local probe=()
    [[ -z ${probe_seconds:-} ]] || probe=("${untraced[@]}" "$@" "$bin/verification-benchmark" --cost-probe "$probe_seconds")
    read -r verifier verifier_cpu broker_cpu probe_cpu beside_cpu beside_broker < <(python3 - "http://127.0.0.1:$port/metrics" \
        "$accepted" "$pid" "$(cat "$work/kafka/tansu.pid")" "$(getconf CLK_TCK)" "${probe[@]}" <<'PY'
import subprocess, sys, time, urllib.request
url, accepted, verifier_pid, broker_pid, ticks = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], int(sys.argv[5])
probe = sys.argv[6:]
low, high = accepted // 10, accepted * (6 if probe else 9) // 10
def verified():
    for line in urllib.request.urlopen(url, timeout=5).read().decode().splitlines():
        if line.startswith("chain_verifier_verified_total "):
            return float(line.split()[1])
    return 0.0
def cpu(pid):
    """User and system CPU seconds of a process so far."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / ticks
def sample():
    return (time.monotonic(), verified(), cpu(verifier_pid), cpu(broker_pid))
def crossing(samples, level):
    """When the counter passed `level`, between the two samples around it."""
    for (t0, c0, *_), (t1, c1, *_) in zip(samples, samples[1:]):
        if c0 < level <= c1:
            return t0 + (t1 - t0) * (level - c0) / (c1 - c0)
    return samples[0][0]  # passed before the first sample
samples = [sample()]
deadline = samples[0][0] + 300
while samples[-1][1] < high and time.monotonic() < deadline:
    time.sleep(0.2)
    samples.append(sample())
if samples[-1][1] < high:
    sys.exit(f"the chain-verifier verified {samples[-1][1]:.0f} of {accepted} in 300 s")
inside = [s for s in samples if low <= s[1] <= high] or samples[-2:]
first, last = inside[0], inside[-1]
done = max(last[1] - first[1], 1)
figures = [round((high - low) / (crossing(samples, high) - crossing(samples, low))),
           round((last[2] - first[2]) * 1e6 / done), round((last[3] - first[3]) * 1e6 / done)]
if probe:
    # Both at the same moments: the probe's CPU per verification, the verifier's own per notification meanwhile.
    # The counter moves a whole batch at a time (up to 500), so each end is sampled just after it moved.
    def sample_after_move():
        moved_from, until = verified(), time.monotonic() + 5
        while (now := sample())[1] == moved_from and time.monotonic() < until:
            time.sleep(0.01)
        return now
    before = sample_after_move()
    words = subprocess.run(probe, check=True, capture_output=True, text=True).stdout.split()
    after = sample_after_move()
    count, probe_cpu = int(words[1]), float(words[2])
    verified_beside = after[1] - before[1]
    figures.append(round(probe_cpu * 1e6 / count))
    figures += [round((after[i] - before[i]) * 1e6 / verified_beside) if verified_beside else "-" for i in (2, 3)]
else:
    figures += ["-", "-", "-"]
print(*figures)
PY
)
    kill "$pid"; wait "$pid" 2>/dev/null || true
}

raw_verification "${untraced[@]}" "$bin/verification-benchmark" --seconds 3
probe_seconds=$(( (seconds + 1) / 2 )) chain_verifier_run "$accepted"
shared_probe=$probe_cpu shared_beside=$beside_cpu shared_beside_broker=$beside_broker

# The same stage with the broker on a CPU of its own, as in a cluster where the broker has machines of its own: a
# fresh broker on the first CPU this script may use, a backlog produced straight into its raw topic (the same
# notification with the environment header ingest sets, and with tracing on a trace header as ingest's), and the
# chain-verifier and its baseline on the other CPUs.
# On shared cores the broker's CPU per notification comes out of the verifier's; here it does not.
# PIPELINE_BROKER_APART=no leaves it out; a machine of one CPU has no such figure.
read -r -a usable_cpus <<< "$(python3 -c "import os; print(*sorted(os.sched_getaffinity(0)))")"
apart_raw=""
if [[ ${PIPELINE_BROKER_APART:-yes} == yes ]] && (( ${#usable_cpus[@]} >= 2 )); then
    shared=("$raw_rate" "$raw_cores" "$verifier" "$verifier_cpu" "$broker_cpu")
    verifier_cpus=$(IFS=,; echo "${usable_cpus[*]:1}")
    pin=(taskset -c "$verifier_cpus")
    fresh_broker taskset -c "${usable_cpus[0]}"
    # Traced, each notification carries a trace of its own, as ingest writes it: one in 1/ratio sampled.
    backlog_trace=()
    [[ -z $tracing_pid ]] || backlog_trace=("traceparent=1/$(python3 -c "print(max(1, round(1 / ${BENCHMARK_TRACE_RATIO:-0.01})))")")
    read -r _ backlog _ <<< "$("$bin/produce-baseline" "$bootstrap" "$work/body.json" "$seconds" "$in_flight" \
        appstore.notifications.raw environment=Sandbox "${backlog_trace[@]}")"
    raw_verification "${untraced[@]}" "${pin[@]}" "$bin/verification-benchmark" --seconds "$(( seconds < 3 ? seconds : 3 ))" \
        --cores $(( ${#usable_cpus[@]} - 1 ))
    probe_seconds=$(( (seconds + 1) / 2 )) chain_verifier_run "$backlog" "${pin[@]}"
    apart_raw=$raw_rate apart_cores=$raw_cores apart_verifier=$verifier apart_cpu=$verifier_cpu apart_broker=$broker_cpu
    apart_probe=$probe_cpu apart_beside=$beside_cpu
    read -r raw_rate raw_cores verifier verifier_cpu broker_cpu <<< "${shared[*]}"
fi

printf '\n%-62s %12s  %s\n' "measurement (2 cores, broker and load generator co-located)" "per second" "compared with"
printf '%-62s %12.0f  %s\n' "bare Hummingbird 200 OK (same body, wrk -c32)" "$baseline" "baseline"
printf '%-62s %12.0f  %s\n' "produce-only limit (same bodies, acks=all, 128 in flight, no HTTP)" "$produced" "baseline (best of $rounds)"
printf '%-62s %12.0f  %s\n' "ingest: verify outer JWS, produce acks=all + wait, 200 (wrk -c128)" "$ingest" \
    "$(python3 -c "print(f'{$ingest / $produced:.2f} of the produce-only limit (best of $rounds; rounds produce/ingest: $rounds_text), {$ingest / $baseline:.2f} of the bare endpoint')")"
printf '%-62s %12s  %s\n' "  ingest's own CPU per request (µs), tasks on the event loops" "$ingest_cpu" "on Swift's pool: $ingest_pool_cpu µs"
printf '%-62s %12.0f  %s\n' "ingest with tasks on Swift's pool (SWIFT_TASKS_ON_EVENT_LOOPS=false)" "$ingest_pool" \
    "$(python3 -c "print(f'{$ingest_pool / $produced:.2f} of the produce-only limit')")"
printf '%-62s %12.0f  %s\n' "ingest without edge verification (INGEST_VERIFY=false)" "$ingest_unverified" \
    "$(python3 -c "print(f'{$ingest / $ingest_unverified:.2f}: verified ingest / unverified')")"
printf '%-62s %12.0f  %s\n' "ingest at 32 connections (latency-bound: ~4 ms broker ack each)" "$ingest_32" \
    "$(python3 -c "print(f'{$ingest_32 / $produced:.2f} of the produce-only limit')")"
printf '%-62s %12s  %s\n' "  accepted into the raw topic (last round) / non-2xx (all runs)" "${accepted}" "non-2xx: ${non2xx:-0}"
printf '%-62s %12s  %s\n' "raw verification (verification-benchmark, all cores)" "$raw_rate" "baseline"
printf '%-62s %12s  %s\n' "chain-verifier: consume, verify, produce verified, store offsets" "$verifier" \
    "$(python3 -c "print(f'{$verifier / $raw_rate:.2f} of raw verification')")"
printf '%-62s %12s  %s\n' "  chain-verifier's own CPU per notification (µs)" "$verifier_cpu" \
    "the broker's meanwhile: $broker_cpu µs"
# What the ratio is made of: raw verification's CPU per notification (R, its cores over its rate) against the
# verifier's own (V) and the broker's beside it (B). On shared cores no verifier passes R / (R + B) of raw
# verification, however little it adds to the verification itself; with the broker elsewhere, R / V.
# cpu_line CORES RATE V [B]: R (CORES over RATE, in µs) and R / V; with B, the ceiling R / (R + B) it sets.
cpu_line() {
    python3 -c "r = $1 * 1e6 / $2; print(f'{r:12.0f}  R / the verifier\'s own: {f\"{r / $3:.2f}\" if $3 else \"(too few samples)\"}' + ('; the broker on the same CPUs caps the ratio at R / (R + broker) = {:.2f}'.format(r / (r + ${4:-0})) if '${4:-}' else ''))"
}
printf '%-62s %s\n' "  raw verification's CPU per notification (µs), R" \
    "$(cpu_line "$raw_cores" "$raw_rate" "$verifier_cpu" "$broker_cpu")"
# beside_line PROBE V [B]: the same costs at the same moments (verification-benchmark's cost probe beside the
# verifier): the machine's speed drifts by a fifth from one few-second stretch to the next, so an R measured before
# the verifier can be another machine's; beside it, the drift falls on both. R / V, or with the broker on the same
# CPUs R / (V + B), the ratio both rates would have on these cores.
beside_line() {
    python3 -c "
p, v, b = '$1', '$2', '${3:-}'
if v == '-': print('too few notifications beside the probe')
else: print(f'full verification beside it: {p} µs; R / ' + (f'(V + broker {b} µs) = {float(p) / (float(v) + float(b)):.2f}' if b else f'V = {float(p) / float(v):.2f}'))"
}
printf '%-62s %12s  %s\n' "  at the same moments: the verifier's own CPU per notification" "$shared_beside" \
    "$(beside_line "$shared_probe" "$shared_beside" "$shared_beside_broker")"
if [[ -n $apart_raw ]]; then
    printf '%-62s %12s  %s\n' "raw verification on the other $apart_cores CPU(s) (broker on its own)" "$apart_raw" "baseline"
    printf '%-62s %12s  %s\n' "chain-verifier, the broker on a CPU of its own" "$apart_verifier" \
        "$(python3 -c "print(f'{$apart_verifier / $apart_raw:.2f} of raw verification on the same CPUs (backlog: $backlog produced straight into the raw topic)')")"
    printf '%-62s %12s  %s\n' "  chain-verifier's own CPU per notification (µs)" "$apart_cpu" \
        "the broker's meanwhile, on its own CPU: $apart_broker µs"
    printf '%-62s %s\n' "  raw verification's CPU per notification (µs), R" \
        "$(cpu_line "$apart_cores" "$apart_raw" "$apart_cpu")"
    printf '%-62s %12s  %s\n' "  at the same moments: the verifier's own CPU per notification" "$apart_beside" \
        "$(beside_line "$apart_probe" "$apart_beside")"
fi
benchmark_tracing_report "$work"
