"""Runs a rendered Kubernetes overlay's pods as podman containers on this machine, as the objects say.

    pods.py up RENDERED.yaml VALUES.json     the Jobs to completion, then every Deployment; prints a JSON summary
    pods.py probe VALUES.json                every probe of every running container once more (JSON summary)
    pods.py down VALUES.json                 stops (the pod's grace period) and removes every container of the run

VALUES.json: {"run": an id for labels and names, "image": the image to run for `appstore-pipeline`, "workdir": where
Secret and ConfigMap files are written, "config": {KEY: value} over the ConfigMaps' data (the local broker, the sim),
"secrets": {SECRET: {KEY: value}} over the Secrets' data, "mounts": {CONTAINER_PATH: HOST_FILE} added read-only to
every container (the sim's root certificate: a cluster would mount yours the same way)}.

Honoured from each pod spec: the image, command and args, every env entry (values, ConfigMap and Secret keys, envFrom
of both), Secret and ConfigMap volumes with their items and modes, volumeMounts, runAsUser/runAsGroup/fsGroup,
runAsNonRoot (refused if the user is 0), readOnlyRootFilesystem (no tmpfs added), allowPrivilegeEscalation false
(no-new-privileges), capabilities drop ALL, seccomp RuntimeDefault (podman's default profile), memory and CPU limits,
init containers before the containers, a Job's restartPolicy OnFailure with its backoffLimit, and every startup,
readiness and liveness probe (httpGet on its port, named or numbered, and path; within the startup probe's
failureThreshold × periodSeconds). Only the validator checks the rest: Services, NetworkPolicies, PodDisruptionBudgets,
scalers, topology spread, requests, the preStop pause and service-account tokens. All containers share the host's
network (the pods' ports are the manifests' own; the tests' own ports are all above 20000).
"""
import base64
import json
import os
import shutil
import subprocess
import sys
import time
import urllib.request

import yaml

PROJECT_IMAGE = "appstore-pipeline"
UID_GID_FILES = 10001


def podman(*arguments, check=True, capture=True):
    """Runs podman; its output, or raises with its error."""
    result = subprocess.run(["podman", *arguments], capture_output=capture, text=True)
    if check and result.returncode != 0:
        raise SystemExit(f"podman {' '.join(arguments[:3])}…: {result.stderr.strip()[-2000:]}")
    return result.stdout


def quantity_cpu(text):
    """A Kubernetes CPU quantity as a number of CPUs."""
    text = str(text)
    return float(text[:-1]) / 1000 if text.endswith("m") else float(text)


def quantity_memory(text):
    """A Kubernetes memory quantity as podman's --memory value."""
    text = str(text)
    for suffix, unit in (("Gi", "g"), ("Mi", "m"), ("Ki", "k")):
        if text.endswith(suffix):
            return text[: -len(suffix)] + unit
    return text


class Overlay:
    """The rendered objects, with the run's values laid over the ConfigMaps and Secrets."""

    def __init__(self, rendered, values):
        with open(rendered) as stream:
            self.documents = [d for d in yaml.safe_load_all(stream) if d]
        self.values = values
        self.config_maps = {}
        self.secrets = {}
        for document in self.documents:
            name = document["metadata"]["name"]
            if document["kind"] == "ConfigMap":
                self.config_maps[name] = {**document.get("data", {}), **values.get("config", {})}
            elif document["kind"] == "Secret":
                data = {k: base64.b64decode(v).decode() for k, v in (document.get("data") or {}).items()}
                data.update(document.get("stringData") or {})
                data.update(values.get("secrets", {}).get(name, {}))
                unchanged = [k for k, v in data.items() if "CHANGE-ME" in v]
                if unchanged:
                    raise SystemExit(f"Secret {name}: no value for {unchanged} (the run's values must replace them)")
                self.secrets[name] = data

    def workloads(self, kind):
        """The objects of a kind, in the file's order."""
        return [d for d in self.documents if d["kind"] == kind]

    def source(self, kind, name):
        """A ConfigMap's or Secret's data."""
        table = self.config_maps if kind == "configMap" else self.secrets
        if name not in table:
            raise SystemExit(f"no {kind} {name} in the rendering")
        return table[name]

    def environment(self, container):
        """The container's environment: envFrom first, then env (which wins)."""
        environment = {}
        for source in container.get("envFrom", []):
            if "configMapRef" in source:
                environment.update(self.source("configMap", source["configMapRef"]["name"]))
            if "secretRef" in source:
                environment.update(self.source("secret", source["secretRef"]["name"]))
        for entry in container.get("env", []):
            if "value" in entry:
                environment[entry["name"]] = str(entry["value"])
                continue
            reference = entry.get("valueFrom", {})
            for kind, key in (("configMap", "configMapKeyRef"), ("secret", "secretKeyRef")):
                if key in reference:
                    data = self.source(kind, reference[key]["name"])
                    if reference[key]["key"] not in data:
                        raise SystemExit(f"{container['name']}: {reference[key]['name']} has no key {reference[key]['key']}")
                    environment[entry["name"]] = data[reference[key]["key"]]
        return environment

    def volume_files(self, pod_name, pod):
        """Writes each Secret and ConfigMap volume's files under the work folder: {volume name: host folder}."""
        folders = {}
        for volume in pod.get("volumes", []):
            kind = "secret" if "secret" in volume else "configMap" if "configMap" in volume else None
            if not kind:
                raise SystemExit(f"{pod_name}: volume {volume['name']} is neither a Secret nor a ConfigMap")
            spec = volume[kind]
            data = self.source(kind, spec["secretName"] if kind == "secret" else spec["name"])
            folder = os.path.join(self.values["workdir"], pod_name, volume["name"])
            os.makedirs(folder, exist_ok=True)
            items = spec.get("items") or [{"key": k, "path": k} for k in data]
            for item in items:
                path = os.path.join(folder, item["path"])
                with open(path, "w") as stream:
                    stream.write(data[item["key"]])
                os.chown(path, UID_GID_FILES, UID_GID_FILES)
                os.chmod(path, item.get("mode", spec.get("defaultMode", 0o644)))
            os.chmod(folder, 0o755)
            folders[volume["name"]] = folder
        return folders


def run_arguments(overlay, pod_name, pod, container, folders, name, detached):
    """`podman run` arguments for one container of a pod."""
    values = overlay.values
    context = pod.get("securityContext", {})
    security = container.get("securityContext", {})
    user, group = context.get("runAsUser"), context.get("runAsGroup")
    if context.get("runAsNonRoot") and user in (None, 0):
        raise SystemExit(f"{pod_name}: runAsNonRoot without a non-root runAsUser")
    arguments = ["run", "--name", name, "--label", f"appstore-pods={values['run']}", "--network", "host",
                 "--pull", "never"]
    arguments += ["-d"] if detached else []
    if user is not None:
        arguments += ["--user", f"{user}:{group if group is not None else user}"]
    if context.get("fsGroup") is not None:
        arguments += ["--group-add", str(context["fsGroup"])]
    if security.get("readOnlyRootFilesystem"):
        arguments += ["--read-only", "--read-only-tmpfs=false"]
    if security.get("allowPrivilegeEscalation") is False:
        arguments += ["--security-opt", "no-new-privileges"]
    for capability in security.get("capabilities", {}).get("drop", []):
        arguments += ["--cap-drop", capability]
    if security.get("privileged"):
        raise SystemExit(f"{pod_name}/{container['name']}: privileged containers are not run here")
    limits = container.get("resources", {}).get("limits", {})
    if "memory" in limits:
        arguments += ["--memory", quantity_memory(limits["memory"])]
    if "cpu" in limits:
        arguments += ["--cpus", str(quantity_cpu(limits["cpu"]))]
    for key, value in overlay.environment(container).items():
        arguments += ["--env", f"{key}={value}"]
    for mount in container.get("volumeMounts", []):
        if mount["name"] not in folders:
            raise SystemExit(f"{pod_name}/{container['name']}: mounts {mount['name']}, which the pod does not declare")
        arguments += ["--volume", f"{folders[mount['name']]}:{mount['mountPath']}:ro" if mount.get("readOnly")
                      else f"{folders[mount['name']]}:{mount['mountPath']}"]
    for path, host in values.get("mounts", {}).items():
        arguments += ["--volume", f"{host}:{path}:ro"]
    command = container.get("command")
    if command:
        arguments += ["--entrypoint", json.dumps(command)]
    image = container["image"]
    if image.split(":")[0].split("/")[-1] == PROJECT_IMAGE:
        image = values["image"]
    return arguments + [image] + [str(a) for a in container.get("args", [])]


def run_to_completion(overlay, pod_name, pod, container, folders, attempts):
    """Runs a container until it exits 0 (at most `attempts` times, as a Job's backoff allows); its output."""
    output = ""
    for attempt in range(attempts):
        name = f"{overlay.values['run']}-{pod_name}-{container['name']}-{attempt}"
        arguments = run_arguments(overlay, pod_name, pod, container, folders, name, detached=False)
        result = subprocess.run(["podman", *arguments], capture_output=True, text=True)
        output = result.stdout + result.stderr
        subprocess.run(["podman", "rm", "-f", name], capture_output=True)
        if result.returncode == 0:
            return output
    raise SystemExit(f"{pod_name}/{container['name']} failed {attempts} times; last output:\n{output[-3000:]}")


def http_ok(port, path):
    """Whether GET http://127.0.0.1:PORT/PATH answers 2xx or 3xx."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=2) as response:
            return 200 <= response.status < 400
    except Exception:
        return False


def probe_target(container, probe):
    """(port number, path) of an httpGet probe."""
    action = probe.get("httpGet")
    if not action:
        raise SystemExit(f"{container['name']}: only httpGet probes are run here")
    port = action["port"]
    if isinstance(port, str):
        named = [p["containerPort"] for p in container.get("ports", []) if p.get("name") == port]
        if not named:
            raise SystemExit(f"{container['name']}: probe port {port} is not among its ports")
        port = named[0]
    return port, action.get("path", "/")


def logs(name):
    """The container's output, standard error included (the services log there)."""
    result = subprocess.run(["podman", "logs", name], capture_output=True, text=True)
    return (result.stdout + result.stderr)[-3000:]


def running(name):
    """Whether the container runs."""
    return podman("inspect", "--format", "{{.State.Running}}", name, check=False).strip() == "true"


def await_probes(container, name):
    """Startup within its threshold, then readiness, then liveness, while the container runs; what answered."""
    answered = []
    startup = container.get("startupProbe")
    if startup:
        port, path = probe_target(container, startup)
        budget = startup.get("failureThreshold", 3) * startup.get("periodSeconds", 10)
        started = time.monotonic()
        while not http_ok(port, path):
            if not running(name):
                raise SystemExit(f"{name} exited before its startup probe answered:\n{logs(name)}")
            if time.monotonic() - started > budget:
                raise SystemExit(f"{name}: startup probe {port}{path} did not answer within {budget} s")
            time.sleep(0.5)
        answered.append(f"startup {port}{path}")
    for kind in ("readinessProbe", "livenessProbe"):
        probe = container.get(kind)
        if not probe:
            raise SystemExit(f"{name}: no {kind}")
        port, path = probe_target(container, probe)
        while not http_ok(port, path):
            if not running(name):
                raise SystemExit(f"{name} exited before its {kind} answered:\n{logs(name)}")
            time.sleep(0.5)
        answered.append(f"{kind[:-5]} {port}{path}")
    return answered


def up(rendered, values_path):
    """Jobs first (each to completion), then each Deployment's init containers and containers with their probes."""
    values = json.load(open(values_path))
    overlay = Overlay(rendered, values)
    summary = {"jobs": {}, "containers": {}, "probes": 0}
    shutil.rmtree(values["workdir"], ignore_errors=True)
    os.makedirs(values["workdir"])
    started = time.monotonic()
    for job in overlay.workloads("Job"):
        name = job["metadata"]["name"]
        pod = job["spec"]["template"]["spec"]
        folders = overlay.volume_files(name, pod)
        attempts = job["spec"].get("backoffLimit", 6) + 1 if pod.get("restartPolicy") == "OnFailure" else 1
        for container in pod.get("initContainers", []) + pod["containers"]:
            run_to_completion(overlay, name, pod, container, folders, attempts)
        summary["jobs"][name] = "completed"
    for deployment in overlay.workloads("Deployment"):
        name = deployment["metadata"]["name"]
        pod = deployment["spec"]["template"]["spec"]
        folders = overlay.volume_files(name, pod)
        for container in pod.get("initContainers", []):
            run_to_completion(overlay, name, pod, container, folders, attempts=1)
        for container in pod["containers"]:
            container_name = f"{values['run']}-{name}-{container['name']}"
            podman(*run_arguments(overlay, name, pod, container, folders, container_name, detached=True))
            summary["containers"][container_name] = {"pod": name, "container": container["name"]}
    for container_name, entry in summary["containers"].items():
        deployment = next(d for d in overlay.workloads("Deployment") if d["metadata"]["name"] == entry["pod"])
        container = next(c for c in deployment["spec"]["template"]["spec"]["containers"]
                         if c["name"] == entry["container"])
        entry["probes"] = await_probes(container, container_name)
        summary["probes"] += len(entry["probes"])
    summary["seconds"] = round(time.monotonic() - started, 1)
    print(json.dumps(summary))


def probe(values_path):
    """Every running container of the run is still running and answers its readiness and liveness probes."""
    values = json.load(open(values_path))
    names = podman("ps", "-a", "--filter", f"label=appstore-pods={values['run']}", "--format", "{{.Names}}").split()
    report = {}
    for name in names:
        inspected = json.loads(podman("inspect", name))[0]
        report[name] = {"running": inspected["State"]["Running"], "restarts": inspected.get("RestartCount", 0)}
    print(json.dumps(report))


def down(values_path):
    """Stops each container of the run with its grace period, then removes them."""
    values = json.load(open(values_path))
    names = podman("ps", "-a", "--filter", f"label=appstore-pods={values['run']}", "--format", "{{.Names}}").split()
    for name in names:
        podman("stop", "-t", "60", name, check=False)
    for name in names:
        podman("rm", "-f", name, check=False)
    shutil.rmtree(values["workdir"], ignore_errors=True)
    print(json.dumps({"stopped": len(names)}))


if __name__ == "__main__":
    command = sys.argv[1] if len(sys.argv) > 1 else ""
    if command == "up" and len(sys.argv) == 4:
        up(sys.argv[2], sys.argv[3])
    elif command == "probe" and len(sys.argv) == 3:
        probe(sys.argv[2])
    elif command == "down" and len(sys.argv) == 3:
        down(sys.argv[2])
    else:
        raise SystemExit(__doc__)
