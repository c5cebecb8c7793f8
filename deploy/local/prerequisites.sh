#!/usr/bin/env bash
# Installs the system packages the project builds and tests with, when they are missing.
# Idempotent: on a machine that has them it only checks. Needs root (or sudo) to install.
set -euo pipefail

# prometheus: its promtool checks and unit-tests the alert rules (deploy/validation/validate.sh).
packages=(pkg-config librdkafka-dev postgresql chromium fonts-dejavu-core prometheus)

missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done

if ((${#missing[@]} > 0)); then
    echo "Installing missing system packages: ${missing[*]}"
    sudo_cmd=()
    [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
    export DEBIAN_FRONTEND=noninteractive
    "${sudo_cmd[@]}" apt-get update -qq
    "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

command -v swift >/dev/null || { echo "swift is not on PATH (expected at /opt/swift/usr/bin)"; exit 1; }
