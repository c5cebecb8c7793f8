#!/usr/bin/env bash
# The test command: installs what is missing, then runs every test of the package.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/opt/swift/usr/bin:$PATH"
deploy/local/prerequisites.sh
source deploy/local/env.sh
swift build --build-tests
swift test --skip-build
