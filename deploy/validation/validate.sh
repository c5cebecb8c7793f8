#!/usr/bin/env bash
# Validates the deployment files offline, with real validators (called by deploy/local/test.sh, so by CI):
#   - docker-compose.yml against the Compose Specification schema (check-jsonschema, PyPI);
#   - the Kustomize base and production overlay rendered by `kubectl kustomize` (Debian package kubectl),
#     every built-in kind against Kubernetes 1.30's OpenAPI schemas, strictly (kubernetes-validate, PyPI);
#   - the KEDA ScaledObjects against deploy/validation/scaledobject.schema.json (check-jsonschema);
#   - the project's own rules (deploy/validation/rules.py): probes, resources, grace period above the
#     shutdown budget, a PodDisruptionBudget per Deployment, scalers capped at the partition count;
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
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# MARK: validators
validate_compose() { "$tools/check-jsonschema" --builtin-schema vendor.compose-spec "$1" || return 1; }

validate_kubernetes() {
    local rendered=$1
    rm -rf "$work/split"
    # Every step ends in `|| return 1`: a caller testing the status (`if`) switches errexit off in here.
    "$tools/python" deploy/validation/split.py "$rendered" "$work/split" || return 1
    local builtin=() scaled=()
    for file in "$work"/split/*.yaml; do
        if grep -q '^kind: ScaledObject' "$file"; then scaled+=("$file"); else builtin+=("$file"); fi
    done
    # One file per call: given several, kubernetes-validate's exit status reflects only the last one.
    local failed=0
    for file in "${builtin[@]}"; do "$tools/kubernetes-validate" --strict --quiet -k 1.30.0 "$file" || failed=1; done
    [[ $failed == 0 ]] || return 1
    "$tools/check-jsonschema" --schemafile deploy/validation/scaledobject.schema.json "${scaled[@]}" || return 1
    "$tools/python" deploy/validation/rules.py "$rendered" || return 1
    rm -rf "$work/split"
}

# MARK: the real files
echo "== docker-compose.yml"
validate_compose docker-compose.yml
for target in base overlays/production; do
    echo "== deploy/kubernetes/$target"
    kubectl kustomize "deploy/kubernetes/$target" > "$work/rendered.yaml"
    validate_kubernetes "$work/rendered.yaml"
done

# MARK: broken copies must fail
echo "== broken copies are rejected"
expect_rejected() {
    local what=$1; shift
    if "$@" >"$work/out.txt" 2>&1; then echo "  NOT rejected: $what" >&2; cat "$work/out.txt" >&2; exit 1; fi
    echo "  rejected: $what"
}
sed 's/condition: service_completed_successfully/condition: service_finished/' docker-compose.yml > "$work/compose-broken.yml"
expect_rejected "compose: an unknown depends_on condition" validate_compose "$work/compose-broken.yml"
kubectl kustomize deploy/kubernetes/overlays/production > "$work/good.yaml"
sed 's/containerPort: 8080/containerPort: "eighty"/' "$work/good.yaml" > "$work/rendered.yaml"
expect_rejected "kubernetes: a port that is not a number" validate_kubernetes "$work/rendered.yaml"
sed 's/lagThreshold: "2000"/lagThreshold: "lots"/' "$work/good.yaml" > "$work/rendered.yaml"
expect_rejected "keda: a lag threshold that is not a number" validate_kubernetes "$work/rendered.yaml"
sed 's/terminationGracePeriodSeconds: 60/terminationGracePeriodSeconds: 20/' "$work/good.yaml" > "$work/rendered.yaml"
expect_rejected "rules: a grace period shorter than the shutdown budget" validate_kubernetes "$work/rendered.yaml"
sed 's/maxReplicaCount: 12/maxReplicaCount: 20/' "$work/good.yaml" > "$work/rendered.yaml"
expect_rejected "rules: more replicas than partitions" validate_kubernetes "$work/rendered.yaml"
echo "deployment files valid"
