"""The one image holds every program the deployment runs (deploy/validation/validate.sh).

    image.py DOCKERFILE PACKAGE_SWIFT COMPOSE RENDERED.yaml...

- every executable product of Package.swift under Services/ (the services, iapctl, appstore-sim) is built into the
  image by the Dockerfile's product loop;
- every container and init container of the rendered manifests that runs the project's image, and every compose
  service built from it, starts a program the image has: one of those executables, or a shell utility of the Debian
  base (`sh -c` scripts are read for their first word).

It reads files only: that the built image really holds them is the container run's to prove.
"""
import re
import sys

import yaml

IMAGE = "appstore-pipeline"
BASE_PROGRAMS = {"sh", "sleep", "curl", "true"}


def package_executables(package_swift):
    """The executable products of Package.swift whose sources are under Services/."""
    text = open(package_swift).read()
    found = re.findall(r'kind:\s*\.executable\("([^"]+)"\)\s*,\s*path:\s*"Services/', text)
    if not found:
        raise SystemExit(f"{package_swift}: no executable under Services/ found (has its shape changed?)")
    return set(found)


def image_executables(dockerfile):
    """The products the Dockerfile's build loop builds and copies into the image."""
    text = open(dockerfile).read()
    loop = re.search(r"for product in ([^;]+);", text)
    if not loop:
        raise SystemExit(f"{dockerfile}: no `for product in …;` build loop")
    return set(loop.group(1).replace("\\", " ").split())


def program_of(command):
    """The program a container command starts (the first word of an `sh -c` script)."""
    if not command:
        return None
    if command[0] == "sh" and len(command) > 2 and command[1] == "-c":
        return command[2].split()[0]
    return command[0]


def manifest_commands(rendered):
    """(where, program) of every container running the image in a rendered Kubernetes file."""
    with open(rendered) as stream:
        documents = [d for d in yaml.safe_load_all(stream) if d]
    for document in documents:
        spec = document.get("spec", {})
        pod = spec.get("template", {}).get("spec") or spec.get("jobTemplate", {}).get("spec", {}).get(
            "template", {}).get("spec")
        if not pod:
            continue
        for container in pod.get("initContainers", []) + pod.get("containers", []):
            if container.get("image", "").split(":")[0].split("/")[-1] == IMAGE:
                where = f"{rendered}: {document['kind']} {document['metadata']['name']}/{container['name']}"
                yield where, program_of(container.get("command"))


def compose_commands(compose):
    """(where, program) of every compose service running the image."""
    with open(compose) as stream:
        services = yaml.safe_load(stream).get("services", {})
    for name, service in services.items():
        if str(service.get("image", "")).split(":")[0] == IMAGE:
            command = service.get("command")
            yield f"{compose}: service {name}", program_of(command if isinstance(command, list) else None)


def main():
    dockerfile, package_swift, compose, *rendered = sys.argv[1:]
    wanted = package_executables(package_swift)
    built = image_executables(dockerfile)
    problems = [f"{dockerfile}: the image lacks {name}, an executable of Package.swift" for name in
                sorted(wanted - built)]
    runnable = built | BASE_PROGRAMS
    places = list(compose_commands(compose))
    for path in rendered:
        places += list(manifest_commands(path))
    for where, program in places:
        if program is None:
            problems.append(f"{where}: names no command (the image's CMD would run ingest)")
        elif program not in runnable:
            problems.append(f"{where}: runs {program}, which the image does not have")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)
    print(f"the image holds all {len(wanted)} executables of Package.swift; {len(places)} containers run programs it has")


if __name__ == "__main__":
    main()
