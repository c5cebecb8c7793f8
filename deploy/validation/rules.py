"""The project's own deployment rules, checked on rendered manifests (deploy/validation/validate.sh).

- every Deployment has liveness and readiness probes, CPU and memory requests and limits, and a
  terminationGracePeriodSeconds above the services' shutdown budget;
- every Deployment has a PodDisruptionBudget selecting it;
- every ScaledObject targets an existing Deployment; a Kafka scaler names the service's consumer group and
  a pipeline topic and never allows more replicas than the topic has partitions (TOPIC_PARTITIONS).
"""
import sys

import yaml

# The batch in flight (produce timeout 30 s) + producer flush (10 s) + consumer close (10 s).
SHUTDOWN_BUDGET_SECONDS = 50
CONSUMER_GROUPS = {"chain-verifier": "appstore.notifications.raw",
                   "entitlement-updater": "appstore.notifications.verified",
                   "refund-resolver": "appstore.status.requests"}


def main():
    with open(sys.argv[1]) as stream:
        documents = [d for d in yaml.safe_load_all(stream) if d]
    by_kind = {}
    for document in documents:
        by_kind.setdefault(document["kind"], []).append(document)
    config = next(d["data"] for d in by_kind.get("ConfigMap", []) if d["metadata"]["name"] == "pipeline-config")
    partitions = int(config["TOPIC_PARTITIONS"])
    problems = []
    deployments = {d["metadata"]["name"]: d for d in by_kind.get("Deployment", [])}
    budgets = [b["spec"]["selector"]["matchLabels"] for b in by_kind.get("PodDisruptionBudget", [])]
    for name, deployment in deployments.items():
        pod = deployment["spec"]["template"]["spec"]
        labels = deployment["spec"]["template"]["metadata"]["labels"]
        if pod.get("terminationGracePeriodSeconds", 30) <= SHUTDOWN_BUDGET_SECONDS:
            problems.append(f"{name}: terminationGracePeriodSeconds must exceed the {SHUTDOWN_BUDGET_SECONDS} s shutdown budget")
        for container in pod["containers"]:
            for probe in ("livenessProbe", "readinessProbe"):
                if probe not in container:
                    problems.append(f"{name}: no {probe}")
            resources = container.get("resources", {})
            for part in ("requests", "limits"):
                if not {"cpu", "memory"} <= set(resources.get(part, {})):
                    problems.append(f"{name}: {part} must set cpu and memory")
        if not any(all(labels.get(k) == v for k, v in selector.items()) for selector in budgets):
            problems.append(f"{name}: no PodDisruptionBudget")
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
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"rules: {len(deployments)} deployments, {len(by_kind.get('ScaledObject', []))} scalers within {partitions} partitions")


if __name__ == "__main__":
    main()
