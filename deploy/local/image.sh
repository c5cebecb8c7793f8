#!/usr/bin/env bash
# Builds the pipeline's image here with podman, from deploy/Dockerfile, without any registry:
#   deploy/local/image.sh [TAG]        (default localhost/appstore-pipeline:local; prints the tag)
# - the runtime stage starts from a Debian bookworm made by `debootstrap --variant=minbase` (cached as the image
#   localhost/debian-minbase:bookworm; about 30 s the first time);
# - the binaries are the ones the tests run (.build/debug, built by `swift build`), stripped, with the Swift runtime
#   libraries they load and librdkafka 2.16 from deploy/local/env.sh: a release build with --static-swift-stdlib of all
#   nine products would add twenty minutes to every CI run for an image only this machine runs (the Dockerfile's
#   `build` stage makes that one for a registry).
# The products are the Dockerfile's own build loop, so an executable missing there is missing here too.
set -euo pipefail
cd "$(dirname "$0")/../.."
tag=${1:-localhost/appstore-pipeline:local}
source deploy/local/env.sh >/dev/null
base=localhost/debian-minbase:bookworm
if ! podman image exists "$base"; then
    echo "making $base with debootstrap (Debian's archive)" >&2
    rootfs=$(mktemp -d)
    debootstrap --variant=minbase bookworm "$rootfs" http://deb.debian.org/debian >"$rootfs.log" 2>&1 \
        || { tail "$rootfs.log" >&2; exit 1; }
    tar -C "$rootfs" -c . | podman import - "$base" >/dev/null
    rm -rf "$rootfs" "$rootfs.log"
fi
bin=$(swift build --show-bin-path)
context=$(mktemp -d)
trap 'rm -rf "$context"' EXIT
mkdir -p "$context/.build-image/bin" "$context/.build-image/lib/swift" "$context/Tests/Fixtures/real-sandbox"
products=$("$APPSTORE_TOOLS_PYTHON" -c 'import sys; sys.path.insert(0, "deploy/validation"); import image; print(" ".join(sorted(image.image_executables("deploy/Dockerfile"))))')
for product in $products; do
    [[ -x "$bin/$product" ]] || { echo "$bin/$product is missing: run swift build first" >&2; exit 1; }
    strip -o "$context/.build-image/bin/$product" "$bin/$product"
    # The Swift runtime libraries it loads (the toolchain's, not the system's).
    ldd "$bin/$product" | awk '$3 ~ /^\/opt\/swift\// {print $3}' | while read -r library; do
        cp -n "$library" "$context/.build-image/lib/swift/"
    done
done
cp "$(readlink -f .build-tools/lib/librdkafka.so.1)" "$context/.build-image/lib/librdkafka.so.1"
cp Tests/Fixtures/real-sandbox/AppleRootCA-G3.der "$context/Tests/Fixtures/real-sandbox/"
# Each build leaves the image it replaced and its intermediate stage untagged (about 2 GB): forty runs filled this
# machine's disk and the image build of the next failed ("no space left on device"). What earlier builds left goes
# before this one; this build's own layers stay, so building the same binaries again (the pods test) is cached.
podman image prune -f >/dev/null
podman build --quiet --runtime runc -f deploy/Dockerfile --build-arg RUNTIME_BASE="$base" --build-arg BINARIES=local \
    -t "$tag" "$context" >&2
echo "$tag"
