# Source this file from a benchmark script (after `cd` to the repository): installs what is missing, sets up the
# environment (deploy/local/env.sh), builds the given products in release mode (printing only errors) and sets
# `bin` to where they are.
#   release_build PRODUCT...
release_build() {
    deploy/local/prerequisites.sh
    source deploy/local/env.sh
    local product
    for product in "$@"; do
        swift build -c release --product "$product" 2>&1 | grep -E "error" || true
    done
    bin=$(swift build -c release --show-bin-path)
}
