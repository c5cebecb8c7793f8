"""Checks the monitoring resources of a rendered overlay (deploy/validation/validate.sh):

    monitoring.py RENDERED.yaml WORKDIR

- the PrometheusRule's groups pass `promtool check rules` and the unit tests of
  deploy/kubernetes/components/monitoring/alerts-test.yaml (`promtool test rules`);
- every alert's runbook_url names a heading of docs/operations.md;
- the Grafana dashboard loads against deploy/validation/schemas/grafana-dashboard.schema.json, its panels do not
  overlap, and every query is valid PromQL (promtool compiles each one as a recording rule).
"""
import json
import os
import re
import shutil
import subprocess
import sys

import jsonschema
import yaml

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
COMPONENT = os.path.join(ROOT, "deploy/kubernetes/components/monitoring")


def promtool(*arguments):
    result = subprocess.run(["promtool", *arguments], capture_output=True, text=True)
    return result.returncode, (result.stdout + result.stderr).strip()


def slug(heading):
    """GitHub's anchor for a Markdown heading."""
    return re.sub(r"[^a-z0-9 -]", "", heading.strip().lower()).replace(" ", "-")


def main():
    rendered, work = sys.argv[1], sys.argv[2]
    with open(rendered) as stream:
        documents = [d for d in yaml.safe_load_all(stream) if d]
    problems = []
    rules = [d for d in documents if d["kind"] == "PrometheusRule"]
    if len(rules) != 1:
        problems.append(f"expected one PrometheusRule, found {len(rules)}")
    groups = rules[0]["spec"]["groups"] if rules else []
    with open(os.path.join(work, "rules.yaml"), "w") as file:
        yaml.safe_dump({"groups": groups}, file, sort_keys=False)
    shutil.copy(os.path.join(COMPONENT, "alerts-test.yaml"), os.path.join(work, "alerts-test.yaml"))
    for arguments in (("check", "rules", "rules.yaml"), ("test", "rules", "alerts-test.yaml")):
        status, output = promtool(*arguments[:2], os.path.join(work, arguments[2]))
        if status != 0:
            problems.append(f"promtool {' '.join(arguments)}: {output}")
    with open(os.path.join(ROOT, "docs/operations.md")) as file:
        anchors = {slug(line.lstrip("#")) for line in file if line.startswith("#")}
    alerts = [rule for group in groups for rule in group["rules"] if "alert" in rule]
    for alert in alerts:
        anchor = alert["annotations"]["runbook_url"].split("#", 1)[1]
        if anchor not in anchors:
            problems.append(f"alert {alert['alert']}: runbook_url #{anchor} is no heading of docs/operations.md")

    with open(os.path.join(COMPONENT, "pipeline-dashboard.json")) as file:
        dashboard = json.load(file)
    with open(os.path.join(ROOT, "deploy/validation/schemas/grafana-dashboard.schema.json")) as file:
        schema = json.load(file)
    for error in jsonschema.Draft202012Validator(schema).iter_errors(dashboard):
        problems.append(f"dashboard: {error.message} at {list(error.absolute_path)}")
    cells = {}
    queries = []
    for panel in dashboard.get("panels", []):
        grid = panel["gridPos"]
        if grid["x"] + grid["w"] > 24:
            problems.append(f"dashboard panel {panel['title']!r}: wider than the 24-column grid")
        for x in range(grid["x"], grid["x"] + grid["w"]):
            for y in range(grid["y"], grid["y"] + grid["h"]):
                if (x, y) in cells:
                    problems.append(f"dashboard panel {panel['title']!r} overlaps {cells[(x, y)]!r}")
                    break
                cells[(x, y)] = panel["title"]
            else:
                continue
            break
        for target in panel.get("targets", []):
            queries.append(target["expr"].replace("$__rate_interval", "5m"))
    recording = {"groups": [{"name": "dashboard", "rules": [
        {"record": f"dashboard:query_{index}", "expr": query} for index, query in enumerate(queries)]}]}
    with open(os.path.join(work, "dashboard-queries.yaml"), "w") as file:
        yaml.safe_dump(recording, file, sort_keys=False)
    status, output = promtool("check", "rules", os.path.join(work, "dashboard-queries.yaml"))
    if status != 0:
        problems.append(f"dashboard queries: {output}")
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        sys.exit(1)
    print(f"monitoring: {len(alerts)} alerts pass promtool check and unit tests, each with a runbook; the dashboard's "
          f"{len(dashboard['panels'])} panels and {len(queries)} queries are valid")


if __name__ == "__main__":
    main()
