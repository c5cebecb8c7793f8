"""The project's own deployment rules, checked on rendered manifests (deploy/validation/validate.sh).

    rules.py RENDERED.yaml [--production]

- every Deployment has liveness and readiness probes, CPU and memory requests and limits, and a
  terminationGracePeriodSeconds above the services' shutdown budget plus its preStop pause;
- every Deployment has a PodDisruptionBudget selecting it and spreads over zones and nodes;
- every pod (Deployments and Jobs) passes the restricted Pod Security Standard: non-root, seccomp RuntimeDefault,
  no privilege escalation, all capabilities dropped, a read-only root file system; no service-account token;
  secret volumes mounted 0400;
- the HTTP services (those behind a Service) pause in preStop so endpoints drop them before they stop listening;
- a Deployment that a ScaledObject scales sets no spec.replicas (KEDA owns the count);
- no Deployment migrates the schema itself (MIGRATE_ON_START false where set); those using PostgreSQL wait for the
  schema in an init container (`iapctl migrate --check`);
- NetworkPolicies deny by default and open ingress from anywhere only to ingest, customer-api and retention-messaging,
  and only to their port `http`;
- customer-api serves its support routes and console on a port of its own (CUSTOMER_API_ADMIN_PORT, port `admin`),
  which only the ClusterIP Service customer-api-admin exposes and only a NetworkPolicy naming its clients opens;
- the entitlement-updater checks Apple's signature on every notification again: UPDATER_APPLE_SIGNATURE_CHECK is
  `required` in the ConfigMap (or unset: the default) and no container turns it off;
- every ScaledObject targets an existing Deployment; a Kafka scaler names the service's consumer group and
  a pipeline topic and never allows more replicas than the topic has partitions (TOPIC_PARTITIONS);
- with --production: the namespace enforces the restricted standard, and no Secret is rendered with a placeholder
  (CHANGE-ME) or under the names the secret manager owns (each workload's `<workload>-secrets`, the key files);
  every connection is verified TLS: REQUIRE_VERIFIED_TLS true (the services then refuse PostgreSQL without
  sslmode=verify-full), Kafka SASL_SSL, no container overriding either, and the lag scalers over TLS.
"""
import sys

import yaml

# The batch in flight (produce timeout 30 s) + producer flush (10 s) + consumer close (10 s).
SHUTDOWN_BUDGET_SECONDS = 50
CONSUMER_GROUPS = {"chain-verifier": "appstore.notifications.raw",
                   "entitlement-updater": "appstore.notifications.verified",
                   "refund-resolver": "appstore.status.requests",
                   "webhook-dispatcher": "entitlements.changes"}
DATABASE_SERVICES = {"entitlement-updater", "customer-api", "event-publisher", "retention-messaging", "webhook-dispatcher"}
PUBLIC_SERVICES = {"ingest", "customer-api", "retention-messaging"}
SECRET_MANAGER_OWNS = {"appstore-api-key", "appstore-offer-key"}


def pod_problems(name, pod):
    """The restricted Pod Security Standard and the project's own pod rules."""
    problems = []
    context = pod.get("securityContext", {})
    if context.get("runAsNonRoot") is not True:
        problems.append(f"{name}: securityContext.runAsNonRoot must be true")
    if context.get("seccompProfile", {}).get("type") != "RuntimeDefault":
        problems.append(f"{name}: securityContext.seccompProfile.type must be RuntimeDefault")
    if pod.get("automountServiceAccountToken") is not False:
        problems.append(f"{name}: automountServiceAccountToken must be false")
    for container in pod.get("containers", []) + pod.get("initContainers", []):
        security = container.get("securityContext", {})
        label = f"{name}/{container['name']}"
        if security.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{label}: allowPrivilegeEscalation must be false")
        if security.get("capabilities", {}).get("drop") != ["ALL"]:
            problems.append(f"{label}: capabilities must drop ALL")
        if security.get("readOnlyRootFilesystem") is not True:
            problems.append(f"{label}: readOnlyRootFilesystem must be true")
        if security.get("privileged") or security.get("runAsUser") == 0:
            problems.append(f"{label}: must not run privileged or as root")
        resources = container.get("resources", {})
        for part in ("requests", "limits"):
            if not {"cpu", "memory"} <= set(resources.get(part, {})):
                problems.append(f"{label}: {part} must set cpu and memory")
    for volume in pod.get("volumes", []):
        if "secret" in volume and volume["secret"].get("defaultMode") != 0o400:
            problems.append(f"{name}: secret volume {volume['name']} must be mounted with defaultMode 0400")
    return problems


def verified_tls_problems(config, deployments, jobs, scalers):
    """Production connects only over verified TLS: the ConfigMap requires it and no container says otherwise."""
    problems = []
    if config.get("REQUIRE_VERIFIED_TLS") != "true":
        problems.append("production: pipeline-config must set REQUIRE_VERIFIED_TLS \"true\" (PostgreSQL sslmode=verify-full, "
                        "Kafka SASL_SSL, or no service starts)")
    if config.get("KAFKA_SECURITY_PROTOCOL") != "SASL_SSL":
        problems.append(f"production: KAFKA_SECURITY_PROTOCOL must be SASL_SSL, not {config.get('KAFKA_SECURITY_PROTOCOL')}")
    pods = [(name, d["spec"]["template"]["spec"]) for name, d in deployments.items()]
    pods += [(f"Job {j['metadata']['name']}", j["spec"]["template"]["spec"]) for j in jobs]
    for name, pod in pods:
        for container in pod.get("initContainers", []) + pod["containers"]:
            for entry in container.get("env", []):
                if entry["name"] in ("REQUIRE_VERIFIED_TLS", "KAFKA_SECURITY_PROTOCOL", "KAFKA_SSL_VERIFY_HOSTNAME"):
                    problems.append(f"production: {name} overrides {entry['name']}; the ConfigMap's verified TLS holds")
    for scaler in scalers:
        for trigger in scaler["spec"]["triggers"]:
            if trigger["type"] == "kafka" and trigger["metadata"].get("tls") != "enable":
                problems.append(f"production: ScaledObject {scaler['metadata']['name']} reads Kafka without TLS")
    return problems


def apple_check_problems(config, deployments):
    """No key of ours can invent a notification: the updater's Apple check stays `required` (the default)."""
    problems = []
    if config.get("UPDATER_APPLE_SIGNATURE_CHECK", "required") != "required":
        problems.append("pipeline-config: UPDATER_APPLE_SIGNATURE_CHECK must be required (the updater checks Apple's "
                        f"signature on every notification), not {config['UPDATER_APPLE_SIGNATURE_CHECK']}")
    for name, deployment in deployments.items():
        for container in deployment["spec"]["template"]["spec"]["containers"]:
            for entry in container.get("env", []):
                if entry["name"] == "UPDATER_APPLE_SIGNATURE_CHECK" and entry.get("value") != "required":
                    problems.append(f"{name}: UPDATER_APPLE_SIGNATURE_CHECK {entry.get('value')}: must be required")
    return problems


def admin_listener_problems(deployments, services, policies):
    """customer-api's admin port: set, exposed by the ClusterIP Service customer-api-admin only, never opened to
    everyone; and every rule open to everyone names its ports, `http` only."""
    problems = []
    api = deployments.get("customer-api")
    if api:
        container = api["spec"]["template"]["spec"]["containers"][0]
        ports = {p.get("name"): p["containerPort"] for p in container.get("ports", [])}
        environment = {e["name"]: e.get("value") for e in container.get("env", [])}
        if "admin" not in ports or environment.get("CUSTOMER_API_ADMIN_PORT") != str(ports.get("admin")):
            problems.append("customer-api: the support routes and console need CUSTOMER_API_ADMIN_PORT equal to its "
                            "container port `admin`")
        admin_numbers = {"admin", ports.get("admin")}
        for service in services:
            if service["spec"].get("selector", {}).get("app.kubernetes.io/name") != "customer-api":
                continue
            exposes = any(p.get("targetPort") in admin_numbers or p.get("port") == ports.get("admin")
                          for p in service["spec"].get("ports", []))
            name = service["metadata"]["name"]
            if exposes and (name != "customer-api-admin" or service["spec"].get("type", "ClusterIP") != "ClusterIP"):
                problems.append(f"Service {name}: exposes customer-api's admin port; only the ClusterIP Service "
                                "customer-api-admin may")
    for policy in policies:
        for rule in policy["spec"].get("ingress", []):
            if rule.get("from"):
                continue
            opened = [p.get("port") for p in rule.get("ports", [])]
            if not opened or any(port != "http" for port in opened):
                problems.append(f"NetworkPolicy {policy['metadata']['name']}: a rule open to everyone must name the "
                                f"port `http` only, not {opened or 'every port'}")
    return problems


def main():
    with open(sys.argv[1]) as stream:
        documents = [d for d in yaml.safe_load_all(stream) if d]
    production = "--production" in sys.argv[2:]
    by_kind = {}
    for document in documents:
        by_kind.setdefault(document["kind"], []).append(document)
    config = next(d["data"] for d in by_kind.get("ConfigMap", []) if d["metadata"]["name"] == "pipeline-config")
    partitions = int(config["TOPIC_PARTITIONS"])
    problems = []
    deployments = {d["metadata"]["name"]: d for d in by_kind.get("Deployment", [])}
    budgets = [b["spec"]["selector"]["matchLabels"] for b in by_kind.get("PodDisruptionBudget", [])]
    services = {s["spec"]["selector"].get("app.kubernetes.io/name") for s in by_kind.get("Service", [])}
    scaled_targets = {s["spec"]["scaleTargetRef"]["name"] for s in by_kind.get("ScaledObject", [])}
    for name, deployment in deployments.items():
        pod = deployment["spec"]["template"]["spec"]
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        problems += pod_problems(name, pod)
        container = pod["containers"][0]
        pre_stop = container.get("lifecycle", {}).get("preStop", {})
        pause = int(pre_stop.get("exec", {}).get("command", ["sleep", "0"])[-1]) if pre_stop else 0
        if pod.get("terminationGracePeriodSeconds", 30) <= SHUTDOWN_BUDGET_SECONDS + pause:
            problems.append(f"{name}: terminationGracePeriodSeconds must exceed the {SHUTDOWN_BUDGET_SECONDS} s "
                            f"shutdown budget plus the {pause} s preStop pause")
        for probe in ("livenessProbe", "readinessProbe"):
            if probe not in container:
                problems.append(f"{name}: no {probe}")
        if name in services and pause <= 0:
            problems.append(f"{name}: an HTTP service needs a preStop pause (endpoints drop it before it stops)")
        if not any(all(labels.get(k) == v for k, v in selector.items()) for selector in budgets):
            problems.append(f"{name}: no PodDisruptionBudget")
        keys = {c.get("topologyKey") for c in pod.get("topologySpreadConstraints", [])}
        if not {"topology.kubernetes.io/zone", "kubernetes.io/hostname"} <= keys:
            problems.append(f"{name}: topologySpreadConstraints must spread over zones and nodes")
        if name in scaled_targets and "replicas" in deployment["spec"]:
            problems.append(f"{name}: KEDA scales it, so spec.replicas must not be set (each apply would reset it)")
        environment = {e["name"]: e.get("value") for e in container.get("env", [])}
        if environment.get("MIGRATE_ON_START", "false") != "false":
            problems.append(f"{name}: migrations run once in the pipeline-migrate Job, not in the service")
        if name in DATABASE_SERVICES:
            waits = [c for c in pod.get("initContainers", []) if c.get("command", [])[:3] == ["iapctl", "migrate", "--check"]]
            if not waits:
                problems.append(f"{name}: needs an init container running `iapctl migrate --check` (waits for the schema)")
    for job in by_kind.get("Job", []):
        problems += pod_problems(f"Job {job['metadata']['name']}", job["spec"]["template"]["spec"])
    policies = by_kind.get("NetworkPolicy", [])
    if not any(p["spec"].get("podSelector") == {} and set(p["spec"].get("policyTypes", [])) == {"Ingress", "Egress"}
               and not p["spec"].get("ingress") and not p["spec"].get("egress") for p in policies):
        problems.append("NetworkPolicy: no default-deny policy (empty podSelector, Ingress and Egress, no rules)")
    for policy in policies:
        for rule in policy["spec"].get("ingress", []):
            if not rule.get("from"):
                selector = policy["spec"]["podSelector"]
                opened = set()
                for expression in selector.get("matchExpressions", []):
                    if expression["key"] == "app.kubernetes.io/name" and expression["operator"] == "In":
                        opened |= set(expression["values"])
                if "app.kubernetes.io/name" in selector.get("matchLabels", {}):
                    opened.add(selector["matchLabels"]["app.kubernetes.io/name"])
                if not opened or not opened <= PUBLIC_SERVICES:
                    problems.append(f"NetworkPolicy {policy['metadata']['name']}: opens ingress from anywhere to "
                                    f"{sorted(opened) or 'every pod'}; only {sorted(PUBLIC_SERVICES)} may be reached from outside")
    problems += admin_listener_problems(deployments, by_kind.get("Service", []), policies)
    for scaled in by_kind.get("ScaledObject", []):
        name, spec = scaled["metadata"]["name"], scaled["spec"]
        target = spec["scaleTargetRef"]["name"]
        if target not in deployments:
            problems.append(f"ScaledObject {name}: no Deployment {target}")
        for trigger in spec["triggers"]:
            if trigger["type"] != "kafka":
                continue
            metadata = trigger["metadata"]
            if CONSUMER_GROUPS.get(metadata["consumerGroup"]) != metadata["topic"]:
                problems.append(f"ScaledObject {name}: group {metadata['consumerGroup']} does not consume {metadata['topic']}")
            if spec.get("maxReplicaCount", 100) > partitions:
                problems.append(f"ScaledObject {name}: maxReplicaCount {spec.get('maxReplicaCount')} > {partitions} partitions")
            if "sasl" in metadata and "authenticationRef" not in trigger:
                problems.append(f"ScaledObject {name}: SASL without a TriggerAuthentication")
    problems += apple_check_problems(config, deployments)
    if production:
        namespaces = by_kind.get("Namespace", [])
        if not namespaces or any(n["metadata"].get("labels", {}).get("pod-security.kubernetes.io/enforce") != "restricted"
                                 for n in namespaces):
            problems.append("production: the namespace must enforce pod-security.kubernetes.io/enforce=restricted")
        problems += verified_tls_problems(config, deployments, by_kind.get("Job", []), by_kind.get("ScaledObject", []))
        for secret in by_kind.get("Secret", []):
            values = list((secret.get("stringData") or {}).values()) + list((secret.get("data") or {}).values())
            name = secret["metadata"]["name"]
            if name in SECRET_MANAGER_OWNS or name.endswith("-secrets") or any("CHANGE-ME" in str(v) for v in values):
                problems.append(f"production: Secret {secret['metadata']['name']} is rendered; it would overwrite the "
                                "real one (use the ExternalSecret)")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"rules: {len(deployments)} deployments and {len(by_kind.get('Job', []))} jobs pass the restricted standard, "
          f"{len(policies)} network policies, {len(by_kind.get('ScaledObject', []))} scalers within {partitions} partitions")


if __name__ == "__main__":
    main()
