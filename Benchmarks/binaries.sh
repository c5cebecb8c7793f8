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
