#!/usr/bin/env bash
# Every benchmark, one after another on this machine; prints each part's table (the figures in the README and
# docs/performance.md come from this script).
#   Benchmarks/run-all.sh           release build, the figures: end to end, verification, the pipeline's stages,
#                                   entitlements and the outbox relay, look-ups, retention, and where the time goes;
#   Benchmarks/run-all.sh --smoke   every script under Benchmarks/ (also fuzz, overload, scale, soak and resync) with
#                                   tiny parameters on the debug build the tests already have (BENCHMARK_BIN, default
#                                   `swift build --show-bin-path`): a few minutes, run by the test command so that a
#                                   change that breaks a benchmark fails CI. Its figures mean nothing; its checks do.
# Each part's output (its table on stdout, its progress and errors on stderr) is kept in BENCHMARK_OUT (default
# .build/benchmarks/<time>[-smoke]), whatever happens. Every part runs even when one before it failed; the run then
# names the parts that failed, shows the end of their error output, and exits 1.
# A part fails when its script exits non-zero, which includes every baseline found implausible (Benchmarks/plausible.py).
# Under each part: how much of the CPU the hypervisor took while it ran (Benchmarks/steal.py; a figure measured while
# the host ran other guests on these cores reads worse than the code is). At the end: the goals beside this run's
# figures, each with its verdict (Benchmarks/goals.py; a figure it cannot find in a part that ran fails the run).
set -uo pipefail
cd "$(dirname "$0")/.."
smoke=false
[[ "${1:-}" == "--smoke" ]] && smoke=true
export PATH="/opt/swift/usr/bin:$PATH"

# MARK: the parts: name, script, its arguments (full run), its arguments (smoke run), whether the full run has it, and
# the tracing it runs with (BENCHMARK_TRACING: off, or sampled at 1 % as in production)
parts=(
    # name               script                 full arguments          smoke arguments   full  tracing
    "e2e                run-end-to-end.sh      2000 100,250,500        20 50 20          yes   off"
    "verification       run-verification.sh    --seconds 3             --seconds 1       yes   off"
    "pipeline           run-pipeline.sh        8                       1                 yes   off"
    "pipeline-traced    run-pipeline.sh        8                       1                 yes   sampled"
    "entitlements       run-entitlements.sh    2000 8                  40 2 10           yes   off"
    "lookup             run-lookup.sh          1000 10 2000            50 1 50           yes   off"
    "retention          run-retention.sh       1000 10 2000            50 1 50           yes   off"
    "retention-traced   run-retention.sh       1000 10 2000            50 1 50           yes   sampled"
    "webhooks           run-webhooks.sh        500 10 100000           20 1 200          yes   off"
    "profile            run-profile.sh         8 2000                  1 40 20           yes   off"
    "overload           run-overload.sh        1000 15                 40 2              no    off"
    "fuzz               run-fuzz.sh            300                     2                 no    off"
    "scale              run-scale.sh           1000000 9               200 2             no    off"
    "soak               run-soak.sh            5000 30 4               50 2 1            no    off"
    "resync             run-resync.sh          100000 50 2000 16       200 50 40 4       no    off"
)

if $smoke; then
    source deploy/local/env.sh
    export BENCHMARK_BIN=${BENCHMARK_BIN:-$(swift build --show-bin-path)}
    export PIPELINE_ROUNDS=1
    # A brief run makes few requests: every trace is sampled, so the traced parts see their spans arrive.
    export BENCHMARK_TRACE_RATIO=${BENCHMARK_TRACE_RATIO:-1}
    out=${BENCHMARK_OUT:-.build/benchmarks/$(date -u +%Y%m%dT%H%M%SZ)-smoke}
else
    out=${BENCHMARK_OUT:-.build/benchmarks/$(date -u +%Y%m%dT%H%M%SZ)}
    # One release build of everything before the first part (each part's own build is then a no-op).
    if [[ -z ${BENCHMARK_BIN:-} ]]; then
        deploy/local/prerequisites.sh
        source deploy/local/env.sh
        swift build -c release 2>&1 | grep -E "error:" && { echo "the release build failed" >&2; exit 1; }
        export BENCHMARK_BIN; BENCHMARK_BIN=$(swift build -c release --show-bin-path)
    fi
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

# MARK: running them

failed=()
number=0
for part in "${parts[@]}"; do
    # The columns are separated by two or more spaces.
    IFS=$'\t' read -r name script full_args smoke_args in_full tracing <<< "$(echo "$part" | sed -E 's/ {2,}/\t/g')"
    [[ -x Benchmarks/$script && $in_full =~ ^(yes|no)$ && $tracing =~ ^(off|sampled)$ ]] \
        || { echo "run-all.sh: the part \"$part\" is not six columns two spaces apart" >&2; exit 2; }
    if $smoke; then args=$smoke_args; else
        [[ $in_full == yes ]] || continue
        args=$full_args
    fi
    number=$((number + 1))
    read -r -a arguments <<< "$args"
    started=$(date +%s)
    python3 Benchmarks/steal.py watch "$out/$name.steal" &
    steal_watch=$!
    # Its first sample is written before the part starts (and its SIGTERM handler is in place by then).
    until [[ -s $out/$name.steal ]] || ! kill -0 "$steal_watch" 2>/dev/null; do sleep 0.05; done
    echo "# $number. $name (BENCHMARK_TRACING=$tracing Benchmarks/$script ${arguments[*]})"
    if BENCHMARK_TRACING=$tracing Benchmarks/"$script" "${arguments[@]}" > "$out/$name.txt" 2> "$out/$name.log"; then
        # Build chatter stays in the files; the tables come here.
        grep -vE '^(\{|Building|Build |\[[0-9]+/[0-9]+\]|Compiling|Write|Planning)' "$out/$name.txt"
        echo "($(($(date +%s) - started)) s)"
    else
        status=$?
        failed+=("$name")
        echo "FAILED: $name (Benchmarks/$script exited $status after $(($(date +%s) - started)) s); the end of its errors:"
        tail -n 20 "$out/$name.log" | sed 's/^/    /'
    fi
    kill "$steal_watch" 2>/dev/null; wait "$steal_watch" 2>/dev/null
    python3 Benchmarks/steal.py report "$out/$name.steal" || failed+=("$name (its steal watch)")
    echo
done

# MARK: the goals, beside this run's figures (read from the parts' tables: a table that changed without
# Benchmarks/goals.py fails the run, the smoke run too)

echo "# Goals (docs/performance.md)"
$smoke && echo "(a smoke run: its figures and verdicts mean nothing; what is checked is that every figure is read)"
python3 Benchmarks/goals.py "$out" "${failed[@]}" || failed+=("goals")
echo
echo "Every part's output: $out"
if ((${#failed[@]} > 0)); then
    echo "FAILED parts: ${failed[*]}" >&2
    exit 1
fi
