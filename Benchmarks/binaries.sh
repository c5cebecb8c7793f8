# Source this file from a benchmark script (after `cd` to the repository): installs what is missing, sets up the
# environment (deploy/local/env.sh) and sets `bin` to where the binaries are.
#   benchmark_binaries PRODUCT...
# By default it builds the given products in release mode (printing only errors). With BENCHMARK_BIN=DIR it builds
# nothing and takes the binaries in DIR: another commit's release build (to compare two builds in one session), or
# the debug build the test command already has (`Benchmarks/run-all.sh --smoke`, so the scripts cannot rot).
benchmark_binaries() {
    deploy/local/prerequisites.sh
    source deploy/local/env.sh
    if [[ -n ${BENCHMARK_BIN:-} ]]; then
        bin=$BENCHMARK_BIN
        local product
        for product in "$@"; do
            [[ -x "$bin/$product" ]] || { echo "BENCHMARK_BIN=$bin has no $product" >&2; return 1; }
        done
        return 0
    fi
    if (($# > 3)); then
        # Many products: one build of everything (building them one by one recompiles shared modules per product).
        swift build -c release 2>&1 | grep -E "error:" || true
    else
        local product
        for product in "$@"; do
            swift build -c release --product "$product" 2>&1 | grep -E "error" || true
        done
    fi
    bin=$(swift build -c release --show-bin-path)
}

# Source this too, then call `benchmark_tracing DIR` before starting the services: with BENCHMARK_TRACING=sampled,
# every service it starts exports spans (OTLP/HTTP JSON) to a local receiver writing DIR/spans.jsonl, sampling
# BENCHMARK_TRACE_RATIO of the traces (default 0.01: a production-like rate); unset or `off`, tracing stays off as
# the services' default. Prints which, for the table's reader. The receiver's pid goes to `tracing_pid` (the script
# stops it with the rest).
# `"${untraced[@]}" COMMAND` runs a baseline without those settings.
benchmark_tracing() {
    tracing_pid=""
    # A baseline runs without the services' tracing settings, in the traced run as in the untraced one: it traces
    # nothing, and produce-baseline read faster with them in its environment than without in 11 of 12 alternating
    # pairs (2026-12-04), which lowered ingest's traced ratio against it; every baseline runs so, for the same reason.
    # With tracing off there is nothing to take away; with it on, each variable exported below.
    untraced=(env)
    case ${BENCHMARK_TRACING:-off} in
        off) echo "tracing: off"; return 0 ;;
        sampled) ;;
        *) echo "BENCHMARK_TRACING must be off or sampled, not $BENCHMARK_TRACING" >&2; return 1 ;;
    esac
    local port; port=$(deploy/local/free-port.sh)
    python3 deploy/local/trace-collector.py serve "$port" "$1/spans.jsonl" &
    tracing_pid=$!
    local settings=(OTEL_TRACES_EXPORTER=otlp OTEL_EXPORTER_OTLP_PROTOCOL=http/json
        "OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:$port" OTEL_TRACES_SAMPLER=parentbased_traceidratio
        "OTEL_TRACES_SAMPLER_ARG=${BENCHMARK_TRACE_RATIO:-0.01}")
    export "${settings[@]}"
    local setting
    for setting in "${settings[@]}"; do untraced+=(-u "${setting%%=*}"); done
    echo "tracing: on, sampling ${BENCHMARK_TRACE_RATIO:-0.01} of the traces"
}

# benchmark_tracing_report DIR: with tracing on, how many spans the receiver got (a traced run that exported nothing
# measured tracing off); fails when none arrived.
benchmark_tracing_report() {
    [[ -n ${tracing_pid:-} ]] || return 0
    sleep 1  # the exporters' batch delay
    local spans; spans=$(wc -l < "$1/spans.jsonl" 2>/dev/null || echo 0)
    echo "tracing: $spans spans received (${BENCHMARK_TRACE_RATIO:-0.01} of the traces sampled)"
    ((spans > 0)) || { echo "tracing was on and no span arrived" >&2; return 1; }
}
