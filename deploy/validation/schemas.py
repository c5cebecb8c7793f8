"""Validates every rendered object against its schema (deploy/validation/validate.sh):

    schemas.py RENDERED.yaml

- built-in kinds against Kubernetes' own OpenAPI schemas, strictly (kubernetes-validate), for the oldest and the
  newest Kubernetes version the manifests support (SUPPORTED_VERSIONS);
- custom resources (KEDA, Strimzi, External Secrets, Prometheus Operator) against deploy/validation/schemas/KIND
  .schema.json: the fields this project uses, per each project's documented spec; a kind with no schema fails.
"""
import json
import os
import sys

import jsonschema
import kubernetes_validate
import yaml

# The oldest Kubernetes still supported by the major managed services' extended support, and the newest release.
# The namespaces' pod-security enforce-version follows the oldest.
SUPPORTED_VERSIONS = ("1.33.0", "1.37.0")
SCHEMAS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "schemas")


def main():
    with open(sys.argv[1]) as stream:
        documents = [d for d in yaml.safe_load_all(stream) if d]
    problems, checked = [], {}
    for document in documents:
        kind, name = document["kind"], document["metadata"]["name"]
        group = document["apiVersion"].split("/")[0] if "/" in document["apiVersion"] else ""
        if "." not in group or group.endswith(".k8s.io"):
            for version in SUPPORTED_VERSIONS:
                try:
                    kubernetes_validate.validate(document, version, strict=True)
                except kubernetes_validate.ValidationError as error:
                    problems.append(f"{kind} {name} (Kubernetes {version}): {error.message} at {list(error.path)}")
                except kubernetes_validate.SchemaNotFoundError:
                    problems.append(f"{kind} {name}: {document['apiVersion']} does not exist in Kubernetes {version}")
        else:
            path = os.path.join(SCHEMAS, f"{kind}.schema.json")
            if not os.path.exists(path):
                problems.append(f"{kind} {name}: no schema in deploy/validation/schemas for this custom resource")
                continue
            with open(path) as file:
                schema = json.load(file)
            for error in jsonschema.Draft202012Validator(schema).iter_errors(document):
                problems.append(f"{kind} {name}: {error.message} at {list(error.absolute_path)}")
        checked[kind] = checked.get(kind, 0) + 1
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        sys.exit(1)
    print("schemas: " + ", ".join(f"{count} {kind}" for kind, count in sorted(checked.items()))
          + f" (built-in kinds for Kubernetes {' and '.join(SUPPORTED_VERSIONS)})")


if __name__ == "__main__":
    main()
