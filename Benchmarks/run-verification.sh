#!/usr/bin/env bash
# Builds the verification benchmark in release mode and runs it. Arguments go to the benchmark
# (--seconds S, --notification FILE, --root FILE).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/opt/swift/usr/bin:$PATH"
swift build -c release --product verification-benchmark
"$(swift build -c release --show-bin-path)/verification-benchmark" "$@"
