#!/usr/bin/env bash
# Validates the deployment files offline, with real validators (called by deploy/local/test.sh, so by CI):
#   - docker-compose.yml against the Compose Specification schema (check-jsonschema, PyPI);
#   - each Kustomize overlay (development, production, production-strimzi) rendered by `kubectl kustomize`
#     (Debian package kubectl): built-in kinds against Kubernetes' OpenAPI schemas, strictly, for the oldest and the
#     newest supported Kubernetes (kubernetes-validate, PyPI); custom resources (KEDA, Strimzi, External Secrets,
#     Prometheus Operator) against deploy/validation/schemas (deploy/validation/schemas.py);
#   - the project's own rules (deploy/validation/rules.py): probes, resources, the restricted Pod Security Standard,
#     grace periods, disruption budgets, spread, network policies, KEDA and replicas, migrations, and for the
#     production overlays no placeholder Secret;
#   - the monitoring resources (deploy/validation/monitoring.py): promtool (Debian package prometheus) checks and
#     unit-tests the alerts, runbooks exist, the Grafana dashboard passes its schema and its queries parse;
#   - the secrets (deploy/validation/secrets.py): every workload of each overlay and every service of
#     docker-compose.yml holds exactly the secrets deploy/secret-access.yaml gives it;
#   - the image (deploy/validation/image.py): deploy/Dockerfile builds every executable of Package.swift, and every
#     container of the manifests and of docker-compose.yml runs a program the image has;
#   - and, so a validator that accepts everything cannot pass, a broken copy of each must be rejected.
set -euo pipefail
cd "$(dirname "$0")/../.."
source deploy/local/env.sh
tools="$(dirname "$APPSTORE_TOOLS_PYTHON")"
if ! "$tools/python" -c "import kubernetes_validate, check_jsonschema" >/dev/null 2>&1; then
    "$tools/pip" install -q --disable-pip-version-check "kubernetes-validate==1.37.0" "check-jsonschema==0.39.0"
fi
if ! command -v kubectl >/dev/null; then
    echo "installing kubectl (Debian package)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq kubectl >/dev/null
fi
if ! command -v promtool >/dev/null; then
    echo "installing promtool (Debian package prometheus)" >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# MARK: validators
validate_compose() { "$tools/check-jsonschema" --builtin-schema vendor.compose-spec "$1" || return 1; }

# validate_kubernetes RENDERED [--production]: schemas, rules and (where rendered) the monitoring resources.
validate_kubernetes() {
    local rendered=$1; shift
    # Every step ends in `|| return 1`: a caller testing the status (`if`) switches errexit off in here.
    "$tools/python" deploy/validation/schemas.py "$rendered" || return 1
    "$tools/python" deploy/validation/rules.py "$rendered" "$@" || return 1
    if grep -q '^kind: PrometheusRule' "$rendered"; then
        "$tools/python" deploy/validation/monitoring.py "$rendered" "$work" || return 1
    fi
}

# MARK: the real files
echo "== docker-compose.yml"
validate_compose docker-compose.yml
for overlay in development production production-strimzi; do
    echo "== deploy/kubernetes/overlays/$overlay"
    kubectl kustomize "deploy/kubernetes/overlays/$overlay" > "$work/rendered.yaml"
    if [[ $overlay == development ]]; then validate_kubernetes "$work/rendered.yaml"
    else validate_kubernetes "$work/rendered.yaml" --production; fi
    cp "$work/rendered.yaml" "$work/$overlay.yaml"
done

# MARK: each workload holds only its own secrets
echo "== deploy/secret-access.yaml"
validate_secrets() { "$tools/python" deploy/validation/secrets.py deploy/secret-access.yaml "$@" || return 1; }
validate_secrets "$work/development.yaml" "$work/production.yaml" "$work/production-strimzi.yaml" --compose docker-compose.yml

# MARK: the image runs the librdkafka the tests run
echo "== deploy/Dockerfile"
image_kafka=$(grep -o 'confluent-kafka==[0-9.]*' deploy/Dockerfile | sort -u)
tests_kafka=$(grep -o 'confluent-kafka==[0-9.]*' deploy/local/env.sh | sort -u)
if [[ -z $image_kafka || $image_kafka != "$tests_kafka" ]]; then
    echo "deploy/Dockerfile ships librdkafka from ${image_kafka:-nothing}, the tests run ${tests_kafka}" >&2
    exit 1
fi
echo "librdkafka from $image_kafka, as in the tests"
# validate_image DOCKERFILE COMPOSE RENDERED...: every executable of Package.swift is in the image, every container runs
# a program the image has.
validate_image() {
    "$tools/python" deploy/validation/image.py "$1" Package.swift "$2" "${@:3}" || return 1
}
overlays=("$work/development.yaml" "$work/production.yaml" "$work/production-strimzi.yaml")
validate_image deploy/Dockerfile docker-compose.yml "${overlays[@]}"

# MARK: broken copies must fail
echo "== broken copies are rejected"
expect_rejected() {
    local what=$1; shift
    if "$@" >"$work/out.txt" 2>&1; then echo "  NOT rejected: $what" >&2; cat "$work/out.txt" >&2; exit 1; fi
    echo "  rejected: $what ($(tail -n 1 "$work/out.txt" | cut -c1-110))"
}
# broken "sed expression" "what" [--production]: the strimzi rendering with one change must be rejected.
broken() {
    local expression=$1 what=$2; shift 2
    sed "$expression" "$work/good.yaml" > "$work/rendered.yaml"
    cmp -s "$work/good.yaml" "$work/rendered.yaml" && { echo "  the change for '$what' matched nothing" >&2; exit 1; }
    expect_rejected "$what" validate_kubernetes "$work/rendered.yaml" "$@"
}
sed 's/condition: service_completed_successfully/condition: service_finished/' docker-compose.yml > "$work/compose-broken.yml"
expect_rejected "compose: an unknown depends_on condition" validate_compose "$work/compose-broken.yml"
kubectl kustomize deploy/kubernetes/overlays/production-strimzi > "$work/good.yaml"
broken 's/containerPort: 8080/containerPort: "eighty"/' "kubernetes: a port that is not a number" --production
broken 's/lagThreshold: "2000"/lagThreshold: "lots"/' "keda: a lag threshold that is not a number" --production
broken 's/terminationGracePeriodSeconds: 60/terminationGracePeriodSeconds: 20/' "rules: a grace period shorter than the shutdown budget" --production
broken 's/maxReplicaCount: 12/maxReplicaCount: 20/' "rules: more replicas than partitions" --production
broken 's/type: RuntimeDefault/type: Unconfined/' "rules: a pod without the RuntimeDefault seccomp profile" --production
broken 's/automountServiceAccountToken: false/automountServiceAccountToken: true/' "rules: a mounted service-account token" --production
broken 's/defaultMode: 256/defaultMode: 420/' "rules: a secret file readable by all" --production
broken 's/      readOnlyRootFilesystem: true/      readOnlyRootFilesystem: false/' "rules: a writable root file system" --production
broken '/^spec:$/{n;s/^  selector:$/  replicas: 2\n  selector:/}' "rules: spec.replicas where KEDA scales" --production
broken 's/- "5"$/- "0"/' "rules: an HTTP service without a preStop pause" --production
broken 's/topologyKey: kubernetes.io\/hostname/topologyKey: example.com\/rack/' "rules: replicas not spread over nodes" --production
broken 's/value: "false"/value: "true"/' "rules: a service migrating the schema itself" --production
broken '/^  name: public-http$/,/^---$/s/^      - customer-api$/      - customer-api\n      - entitlement-updater/' "rules: a worker reachable from anywhere" --production
broken 's/UPDATER_APPLE_SIGNATURE_CHECK: required/UPDATER_APPLE_SIGNATURE_CHECK: "off"/' "rules: the updater no longer checking Apple's signature" --production
broken 's/REQUIRE_VERIFIED_TLS: "true"/REQUIRE_VERIFIED_TLS: "false"/' "rules: production without verified TLS required" --production
broken 's/KAFKA_SECURITY_PROTOCOL: SASL_SSL/KAFKA_SECURITY_PROTOCOL: SASL_PLAINTEXT/' "rules: production Kafka without TLS" --production
broken '0,/^        - name: KAFKA_SASL_USERNAME$/s/^        - name: KAFKA_SASL_USERNAME$/        - name: KAFKA_SSL_VERIFY_HOSTNAME\n          value: "false"\n        - name: KAFKA_SASL_USERNAME/' "rules: a container turning host-name checks off" --production
broken 's/^      tls: enable$/      tls: disable/' "rules: a lag scaler reading Kafka in clear" --production
broken 's/^  type: ClusterIP$/  type: LoadBalancer/' "rules: the admin Service made public" --production
broken '/^  name: public-http$/,/^---$/s/^    - port: http$/    - port: http\n    - port: admin/' "rules: the admin port opened to everyone" --production
broken '/^  name: customer-api$/,/^---$/s/^    targetPort: http$/    targetPort: http\n  - name: admin\n    port: 8088\n    targetPort: admin/' "rules: the public Service exposing the admin port" --production
broken '/name: CUSTOMER_API_ADMIN_PORT/,+1d' "rules: customer-api without its admin listener" --production
broken 's/pod-security.kubernetes.io\/enforce: restricted/pod-security.kubernetes.io\/enforce: baseline/' "rules: a namespace that does not enforce restricted" --production
broken 's/partitions: 12$/partitions: 0/' "strimzi: a KafkaTopic with no partitions" --production
broken 's/type: scram-sha-512/type: plain/' "strimzi: a KafkaUser with an unknown authentication" --production
broken 's/runbook_url: docs\/operations.md#consumerlaghigh/runbook_url: docs\/operations.md#no-such-step/' "monitoring: a runbook that does not exist" --production
broken 's/> 10000/> > 10000/' "monitoring: an alert that is not PromQL" --production
broken 's/(kafka_consumer_lag_messages) > 10000/(kafka_consumer_lag_messages) > 20000/' "monitoring: an alert its unit test no longer holds for" --production
kubectl kustomize deploy/kubernetes/overlays/development > "$work/rendered.yaml"
expect_rejected "rules: placeholder Secrets in a production rendering" validate_kubernetes "$work/rendered.yaml" --production
sed 's/        retention-messaging webhook-dispatcher iapctl appstore-sim; do/        iapctl appstore-sim; do/' deploy/Dockerfile > "$work/Dockerfile"
cmp -s deploy/Dockerfile "$work/Dockerfile" && { echo "  the change for the image matched nothing" >&2; exit 1; }
expect_rejected "image: an executable of Package.swift not built into the image" \
    validate_image "$work/Dockerfile" docker-compose.yml "${overlays[@]}"
sed '/^      - command:$/{n;s/^        - event-publisher$/        - event-relay/}' "$work/production.yaml" > "$work/rendered.yaml"
cmp -s "$work/production.yaml" "$work/rendered.yaml" && { echo "  the change for the command matched nothing" >&2; exit 1; }
expect_rejected "image: a container running a program the image does not have" \
    validate_image deploy/Dockerfile docker-compose.yml "$work/rendered.yaml"
# broken_secrets "sed expression" "what" FILE: the file (a rendering or the compose file) with one change must be rejected.
broken_secrets() {
    local expression=$1 what=$2 file=$3
    sed "$expression" "$file" > "$work/changed"
    cmp -s "$file" "$work/changed" && { echo "  the change for '$what' matched nothing" >&2; exit 1; }
    if [[ $file == docker-compose.yml ]]; then
        cp "$work/changed" "$work/compose-changed.yml"
        expect_rejected "$what" validate_secrets --compose "$work/compose-changed.yml"
    else
        cp "$work/changed" "$work/changed.yaml"
        expect_rejected "$what" validate_secrets "$work/changed.yaml"
    fi
}
broken_secrets '/^  name: event-publisher-secrets$/,/^---$/s/^  DATABASE_URL: \(.*\)$/  DATABASE_URL: \1\n  RECORD_SIGNING_KEYS: CHANGE-ME/' \
    "secrets: one extra secret in a workload's Secret (event-publisher holding a record-signing key)" "$work/development.yaml"
broken_secrets '0,/name: chain-verifier-secrets$/s/name: chain-verifier-secrets$/name: customer-api-secrets/' \
    "secrets: a workload reading another's Secret (chain-verifier reading customer-api's)" "$work/production.yaml"
broken_secrets '/^  name: event-publisher$/,/^---$/s/^      volumes:$/      volumes:\n      - name: stolen\n        secret:\n          defaultMode: 256\n          secretName: appstore-api-key/' \
    "secrets: a key file mounted where the table does not give it (the API key in event-publisher)" "$work/production-strimzi.yaml"
broken_secrets 's#^  DATABASE_URL: postgres://iap_event_publisher:[^@]*@#  DATABASE_URL: postgres://pipeline:CHANGE-ME@#' \
    "secrets: a service connecting as the schema's owner" "$work/development.yaml"
broken_secrets '/^  ingest:$/,/^  chain-verifier:$/s#^      HTTP_PORT: "8080"$#      HTTP_PORT: "8080"\n      RECORD_SIGNING_KEYS_FILE: /keys/signing#' \
    "secrets: compose giving ingest a record-signing key" docker-compose.yml
broken_secrets '/^  event-publisher:$/,/^  customer-api:$/s#^      HTTP_PORT: "8083"$#      HTTP_PORT: "8083"\n    volumes:\n      - record-keys-chain-verifier:/keys:ro#' \
    "secrets: compose mounting another service's record keys" docker-compose.yml
echo "deployment files valid"
