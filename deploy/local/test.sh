#!/usr/bin/env bash
# The test command: installs what is missing, checks the formatting (.swift-format, 120 columns) and the layers
# (each target imports exactly what Package.swift declares) and that no test blocks a cooperative thread while it
# waits (Tests/Layering/check_blocking_waits.py), validates the deployment files (docker-compose.yml and the Kubernetes manifests, offline), then
# builds the package and the image, runs every test of the package, and every benchmark script briefly
# (Benchmarks/run-all.sh --smoke).
#   deploy/local/test.sh          everything (what .ci/run runs)
#   deploy/local/test.sh --unit   the quick loop: build, then only the unit tests (IAP_UNIT_TESTS_ONLY=1 skips every
#                                 suite tagged `integration`, those that start PostgreSQL, the broker or processes)
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/opt/swift/usr/bin:$PATH"
if [[ "${1:-}" == "--unit" ]]; then
    source deploy/local/env.sh
    swift format lint --recursive --strict --parallel Package.swift Shared Services Tests Benchmarks
    python3 Tests/Layering/check_layers.py
    python3 Tests/Layering/check_blocking_waits.py
    swift build --build-tests
    IAP_UNIT_TESTS_ONLY=1 swift test --skip-build
    exit
fi
deploy/local/prerequisites.sh
source deploy/local/env.sh
swift format lint --recursive --strict --parallel Package.swift Shared Services Tests Benchmarks
python3 Tests/Layering/check_layers.py
python3 Tests/Layering/check_blocking_waits.py
deploy/validation/validate.sh
swift build --build-tests
# The image the pods test runs (deploy/local/image.sh) is built here, before the tests: building it (strip, podman
# build) beside eight running suites starved the ones that count answers (a full run saw ingest's first posts and a
# mass extension come too late). The test builds it again, from podman's cache, in seconds.
deploy/local/image.sh >/dev/null
# At most TEST_PARALLELISM tests run at once (8 by default): unbounded, every integration suite started its PostgreSQL,
# broker and processes at the same moment on two cores, and a 2-s test ran 197 s and hit its time limit. A test's time
# limit counts from when it runs, not from when it waits for its turn; the whole run takes as long as unbounded.
# Of the suites that run the whole pipeline (marked `.heavy`), at most TEST_HEAVY_SUITES (3) run at once, so how long
# one runs no longer depends on how many the shuffle happened to start beside it (docs/development.md).
# Every process a test starts inherits APPSTORE_TEST_RUN; deploy/local/leftovers.py fails the run when one of them
# outlives the tests (and ends it), so a helper that ignores SIGTERM or a service a test forgot cannot go unnoticed.
export APPSTORE_TEST_RUN="run-$$-$RANDOM"
status=0
swift test --skip-build --experimental-maximum-parallelization-width "${TEST_PARALLELISM:-8}" || status=$?
# Every benchmark script, briefly, on the debug build just tested (a few minutes; its figures mean nothing, but a
# script that no longer starts what it measures, or a baseline found implausible, fails the run).
Benchmarks/run-all.sh --smoke || status=$((status == 0 ? 1 : status))
python3 deploy/local/leftovers.py "$APPSTORE_TEST_RUN" || status=$((status == 0 ? 1 : status))
exit "$status"
