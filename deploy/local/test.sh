#!/usr/bin/env bash
# The test command: installs what is missing, validates the deployment files (docker-compose.yml and the
# Kubernetes manifests, offline), then builds and runs every test of the package.
set -euo pipefail
cd "$(dirname "$0")/../.."
export PATH="/opt/swift/usr/bin:$PATH"
deploy/local/prerequisites.sh
source deploy/local/env.sh
deploy/validation/validate.sh
swift build --build-tests
swift test --skip-build
