"""Splits a multi-document YAML stream (kubectl kustomize output) into one file per document.

Usage: split.py RENDERED.yaml OUTDIR   (kubernetes-validate and check-jsonschema take one object per file)
"""
import os
import sys

import yaml


def main():
    source, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    with open(source) as stream:
        documents = [d for d in yaml.safe_load_all(stream) if d]
    for index, document in enumerate(documents):
        name = f"{index:03d}-{document['kind'].lower()}-{document['metadata']['name']}.yaml"
        with open(os.path.join(out, name), "w") as file:
            yaml.safe_dump(document, file, sort_keys=False)


if __name__ == "__main__":
    main()
