"""Each workload holds only its own secrets: rendered manifests and docker-compose.yml against deploy/secret-access.yaml.

    secrets.py TABLE RENDERED.yaml [RENDERED.yaml ...] [--compose docker-compose.yml]

For every Deployment and Job of a rendered overlay, over all its containers and init containers:
- every Secret it reads variables from (envFrom, secretKeyRef) is its own (`<workload>-secrets`), and the variables it
  gets from Secrets are exactly the table's `env` for it (keys of the rendered Secret, or of the ExternalSecret that
  makes it);
- every Secret it mounts is one of the table's `files` for it, or (under Strimzi) its own KafkaUser's Secret and the
  cluster CA; every file the table lists is mounted;
- a rendered DATABASE_URL connects as the table's role (the owner's URL only in the migrate Job);
- no workload is missing from the table, and no workload of the table is missing from the manifests.
For docker-compose.yml: each service's secret variables (or their _FILE forms) and key volumes are the table's.
"""
import sys
from urllib.parse import urlparse

import yaml

KEY_FILES = {"appstore-api-key", "appstore-offer-key"}
KAFKA_CLUSTER_CA = "appstore-kafka-cluster-ca-cert"
# docker-compose.yml's names for the Jobs, and its key volumes by what they hold.
COMPOSE_WORKLOADS = {"migrate": "pipeline-migrate", "topics": "pipeline-topics"}
COMPOSE_KEY_VOLUMES = {"api-key": "appstore-api-key", "offer-key": "appstore-offer-key"}
# Owner of the schema in the manifests' and compose's URLs: anything but a service role.
SERVICE_ROLE_PREFIX = "iap_"


def secret_keys(by_kind):
    """The keys of every Secret the overlay makes: rendered Secrets, or ExternalSecrets' targets."""
    keys = {}
    for secret in by_kind.get("Secret", []):
        data = dict(secret.get("stringData") or {}) | dict(secret.get("data") or {})
        keys[secret["metadata"]["name"]] = data
    for external in by_kind.get("ExternalSecret", []):
        target = external["spec"].get("target", {}).get("name", external["metadata"]["name"])
        keys.setdefault(target, {entry["secretKey"]: None for entry in external["spec"].get("data", [])})
    return keys


def role_of(url):
    """The user a postgres:// URL connects as."""
    return urlparse(url).username or ""


def database_problem(label, expected, url):
    """Why a DATABASE_URL does not connect as the table's role, or None."""
    if url is None or "CHANGE-ME" in (urlparse(url).username or ""):
        return None
    user = role_of(url)
    if expected == "owner":
        return f"{label}: DATABASE_URL connects as {user}, a service role; the migrate Job needs the owner" \
            if user.startswith(SERVICE_ROLE_PREFIX) else None
    if user != expected:
        return f"{label}: DATABASE_URL connects as {user or 'nobody'}, not its own role {expected}" + \
            (" (the schema owner's URL belongs to the migrate Job only)" if not user.startswith(SERVICE_ROLE_PREFIX) else "")
    return None


def workload_problems(name, pod, entry, secrets):
    """The table's rules for one pod."""
    problems = []
    own = f"{name}-secrets"
    held = {}
    for container in pod.get("containers", []) + pod.get("initContainers", []):
        label = f"{name}/{container['name']}"
        for source in container.get("envFrom", []):
            if "secretRef" not in source:
                continue
            secret = source["secretRef"]["name"]
            if secret != own:
                problems.append(f"{label}: reads Secret {secret}; a workload reads only its own ({own})")
                continue
            if secret not in secrets:
                problems.append(f"{label}: Secret {secret} is neither rendered nor made by an ExternalSecret")
                continue
            for key, value in secrets[secret].items():
                held[key] = value
        for variable in container.get("env", []):
            reference = variable.get("valueFrom", {}).get("secretKeyRef")
            if not reference:
                continue
            if reference["name"] != own:
                problems.append(f"{label}: {variable['name']} comes from Secret {reference['name']}; a workload "
                                f"reads only its own ({own})")
                continue
            held[variable["name"]] = secrets.get(own, {}).get(reference["key"])
    expected = set(entry.get("env") or [])
    for extra in sorted(set(held) - expected):
        problems.append(f"{name}: holds {extra}, which deploy/secret-access.yaml does not give it")
    for missing in sorted(expected - set(held)):
        problems.append(f"{name}: lacks {missing}, which deploy/secret-access.yaml gives it")
    allowed_files = set(entry.get("files") or [])
    kafka = {entry["kafka"], KAFKA_CLUSTER_CA} if entry.get("kafka") else set()
    mounted = {v["secret"]["secretName"] for v in pod.get("volumes", []) if "secret" in v}
    for extra in sorted(mounted - allowed_files - kafka):
        problems.append(f"{name}: mounts Secret {extra}, which deploy/secret-access.yaml does not give it")
    for missing in sorted(allowed_files - mounted):
        problems.append(f"{name}: does not mount {missing}, which deploy/secret-access.yaml gives it")
    if "DATABASE_URL" in held and entry.get("database"):
        problem = database_problem(name, entry["database"], held["DATABASE_URL"])
        if problem:
            problems.append(problem)
    return problems


def manifest_problems(table, path):
    """The rules for one rendered overlay."""
    with open(path) as stream:
        documents = [d for d in yaml.safe_load_all(stream) if d]
    by_kind = {}
    for document in documents:
        by_kind.setdefault(document["kind"], []).append(document)
    secrets = secret_keys(by_kind)
    problems = []
    seen = set()
    for workload in by_kind.get("Deployment", []) + by_kind.get("Job", []):
        name = workload["metadata"]["name"]
        seen.add(name)
        if name not in table:
            problems.append(f"{name}: not in deploy/secret-access.yaml (every workload has a row, even an empty one)")
            continue
        problems += workload_problems(name, workload["spec"]["template"]["spec"], table[name], secrets)
    for name in sorted(set(table) - seen):
        problems.append(f"{name}: in deploy/secret-access.yaml but not among the rendered workloads")
    return [f"{path}: {p}" for p in problems]


def compose_problems(table, path):
    """The rules for docker-compose.yml (its anchors resolved by the YAML loader)."""
    with open(path) as stream:
        compose = yaml.safe_load(stream)
    secret_variables = {v for entry in table.values() for v in entry.get("env") or []}
    problems = []
    for service, spec in compose["services"].items():
        name = COMPOSE_WORKLOADS.get(service, service)
        if name not in table:
            continue
        entry = table[name]
        environment = spec.get("environment") or {}
        if isinstance(environment, list):
            environment = dict(item.split("=", 1) for item in environment)
        held = set()
        for variable in environment:
            base = variable.removesuffix("_FILE")
            if base in secret_variables:
                held.add(base)
        expected = set(entry.get("env") or [])
        for extra in sorted(held - expected):
            problems.append(f"{service}: holds {extra}, which deploy/secret-access.yaml does not give it")
        for missing in sorted(expected - held):
            problems.append(f"{service}: lacks {missing}, which deploy/secret-access.yaml gives it")
        volumes = {str(v).split(":")[0] for v in spec.get("volumes") or []}
        files = {COMPOSE_KEY_VOLUMES[v] for v in volumes if v in COMPOSE_KEY_VOLUMES}
        for extra in sorted(files - set(entry.get("files") or [])):
            problems.append(f"{service}: mounts {extra}, which deploy/secret-access.yaml does not give it")
        record_volumes = {v for v in volumes if v.startswith("record-keys-")}
        for volume in sorted(record_volumes - {f"record-keys-{name}"}):
            problems.append(f"{service}: mounts {volume}, another service's record keys")
        if "sim-keys" in volumes:
            problems.append(f"{service}: mounts sim-keys, appstore-sim's private PKI")
        if "DATABASE_URL" in environment and entry.get("database"):
            problem = database_problem(service, entry["database"], str(environment["DATABASE_URL"]))
            if problem:
                problems.append(problem)
    return [f"{path}: {p}" for p in problems]


def main():
    arguments = sys.argv[1:]
    compose = None
    if "--compose" in arguments:
        index = arguments.index("--compose")
        compose = arguments[index + 1]
        del arguments[index:index + 2]
    with open(arguments[0]) as stream:
        table = yaml.safe_load(stream)["workloads"]
    problems = []
    for path in arguments[1:]:
        problems += manifest_problems(table, path)
    if compose:
        problems += compose_problems(table, compose)
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"secrets: {len(table)} workloads hold exactly what deploy/secret-access.yaml gives them in "
          f"{len(arguments) - 1} overlays" + (" and docker-compose.yml" if compose else ""))


if __name__ == "__main__":
    main()
