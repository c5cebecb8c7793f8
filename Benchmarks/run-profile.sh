#!/usr/bin/env bash
# Where the time goes end to end: runs the end-to-end benchmark's throughput phase (run-end-to-end.sh), samples
# every CPU with `perf record -a` for SECONDS while appstore-sim delivers, and prints each process's share of the
# machine and its CPU per notification (share × cores ÷ the sustained rate of the same run).
# Usage: [BENCHMARK_BIN=DIR] Benchmarks/run-profile.sh [SECONDS] [CUSTOMERS] [LATENCY_CUSTOMERS]
#   (default 8 s of 2000 customers; the latency phase at 500/s of 500 customers, which the profile does not sample)
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-8}
customers=${2:-2000}
deploy/local/prerequisites.sh
out=$(mktemp -d)
e2e=""
trap '[[ -n "$e2e" ]] && kill "$e2e" 2>/dev/null; wait 2>/dev/null; rm -rf "$out"' EXIT
Benchmarks/run-end-to-end.sh "$customers" 500 "${3:-500}" > "$out/e2e.txt" 2> "$out/e2e.log" &
e2e=$!
# The second progress line of the throughput phase: the sim has been posting for about a second (a brief run, the
# test command's, may be over before its second line: then the profile samples the latency phase that follows).
for _ in $(seq 1 1200); do
    sed -n '/== phase throughput/,$p' "$out/e2e.log" | grep -c "delivering [0-9]*/" | grep -qE '^([2-9]|[1-9][0-9]+)$' && break
    grep -q "== phase latency" "$out/e2e.log" && break
    kill -0 "$e2e" 2>/dev/null || { cat "$out/e2e.log" >&2; exit 1; }
    sleep 0.5
done
ps -eo pid=,comm= > "$out/processes.txt"
perf record -a -F 499 -o "$out/perf.data" -- sleep "$seconds" > /dev/null 2>&1
ps -eo pid=,comm= >> "$out/processes.txt"
perf script -i "$out/perf.data" -F pid 2>/dev/null > "$out/samples.txt"
# The end-to-end run's own failure (a phase that did not converge) is reported with its output, not lost with $out.
if ! wait "$e2e"; then
    e2e=""
    echo "the end-to-end run failed; its output:" >&2
    cat "$out/e2e.txt" >&2
    tail -n 60 "$out/e2e.log" >&2
    exit 1
fi
e2e=""
rate=$(grep -v '^{' "$out/e2e.txt" | awk '/end to end sustained/ { gsub(",", "", $(NF-7)); print $(NF-7) }')
python3 - "$out/processes.txt" "$out/samples.txt" "$rate" "$(nproc)" "$seconds" <<'PY'
import collections, sys
processes, samples, rate, cores, seconds = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
names = {0: "idle"}
for line in open(processes):
    pid, _, comm = line.strip().partition(" ")
    names[int(pid)] = comm.strip()
group = {"entitlement-upd": "entitlement-updater", "postgres": "PostgreSQL (all connections)", "tansu": "Tansu broker"}
counts = collections.Counter()
for line in open(samples):
    line = line.strip()
    if line:
        name = names.get(int(line), "other (short-lived)")
        counts[group.get(name, name)] += 1
total = sum(counts.values())
print(f"\nperf record -a, {seconds} s of the throughput phase; sustained {rate:,.0f} notifications/s in the same run\n")
print(f"{'process':<32} {'share of the machine':>22} {'CPU per notification':>22}")
for name, count in counts.most_common():
    share = count / total
    per = "" if name == "idle" else f"{share * cores / rate * 1000:.3f} ms"
    print(f"{name:<32} {share * 100:>21.1f}% {per:>22}")
busy = 1 - counts["idle"] / total
print(f"{'all busy CPU':<32} {busy * 100:>21.1f}% {busy * cores / rate * 1000:>19.3f} ms")
PY
echo
grep -v '^{' "$out/e2e.txt" | grep -E "sustained|committed at"
