#!/usr/bin/env bash
# Installs the system packages the project builds and tests with, when they are missing.
# Idempotent: on a machine that has them it only checks. Needs root (or sudo) to install.
set -euo pipefail

# prometheus: its promtool checks and unit-tests the alert rules (deploy/validation/validate.sh).
# podman, buildah, runc, debootstrap: the image is built and its pods run here (deploy/local/image.sh, pods.py).
# wrk, linux-perf: the benchmarks load HTTP stages and profile every process (Benchmarks/, run briefly by the tests).
packages=(pkg-config librdkafka-dev postgresql chromium fonts-dejavu-core prometheus podman buildah runc debootstrap
    wrk linux-perf)

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

# Containers here run with runc (crun refuses this kind of machine's hybrid cgroups) and explicit limits (the
# defaults podman asks for are above what the sandbox allows).
if [[ ! -f /etc/containers/containers.conf ]] || ! grep -q "appstore-pipeline" /etc/containers/containers.conf; then
    sudo_cmd=()
    [[ $(id -u) -eq 0 ]] || sudo_cmd=(sudo)
    "${sudo_cmd[@]}" mkdir -p /etc/containers
    "${sudo_cmd[@]}" tee /etc/containers/containers.conf >/dev/null <<'CONF'
# Written by appstore-pipeline's deploy/local/prerequisites.sh.
[containers]
default_ulimits = ["nofile=20000:20000", "nproc=32768:32768"]

[engine]
runtime = "runc"
CONF
fi

command -v swift >/dev/null || { echo "swift is not on PATH (expected at /opt/swift/usr/bin)"; exit 1; }
