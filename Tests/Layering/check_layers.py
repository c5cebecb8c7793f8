#!/usr/bin/env python3
"""Checks the package's layers (run by deploy/local/test.sh before the build, so CI runs it).

1. Each target declares exactly the modules its sources import (`swift package dump-package` gives what
   Package.swift declares; the sources' `import` lines give what they use). The system's modules (Foundation,
   Glibc, Testing …) are not declared and not counted.
2. The layers point one way: models ← records ← storage and Kafka ← services. The rules below say what each
   shared module may (ONLY) or may not (FORBIDDEN) import; no shared module imports a service, and a service never
   imports another service (tests and benchmarks may).

Exit 0 when everything holds, else 1 with one line per problem.
"""
import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SYSTEM = {"Foundation", "FoundationEssentials", "FoundationNetworking", "Dispatch", "Glibc", "Synchronization", "Testing",
          "XCTest", "_Concurrency", "os"}
SERVICES = {"Ingest", "ChainVerifier", "EntitlementUpdater", "EventPublisher", "RefundResolver", "CustomerAPI", "IAPCtl",
            "AppStoreSim", "RetentionMessaging", "WebhookDispatcher"}
# The only modules a shared module may import, and why.
ONLY = {
    "AppStoreModels": ({"SwiftASN1"}, "the models stand alone (swift-asn1 reads receipts' BER)"),
    "RateAndRetry": (set(), "the token bucket and the back-off are arithmetic"),
    "Webhooks": ({"Crypto"}, "webhook signatures and address rules are arithmetic over bytes"),
    "PipelineRecords": ({"AppStoreModels"}, "records are wire formats: Foundation and the models only"),
    "JWSVerification": ({"AppStoreModels", "Crypto", "SwiftASN1", "X509"},
                        "verification is cryptography over the models: no network, no pipeline"),
    "EntitlementDecisions": ({"AppStoreModels", "Entitlements", "PipelineRecords"},
                             "the updater's decisions are plain values: no PostgreSQL, no Kafka, no I/O"),
    "AppStoreSigning": ({"AppStoreModels", "Crypto", "JWSVerification", "SwiftASN1", "X509"},
                        "signing mirrors verification: cryptography over the models"),
}
# What a shared module must not import, and why.
FORBIDDEN = {
    "ServiceRuntime": ({"AppStoreModels", "PipelineRecords", "JWSVerification", "Entitlements", "AppStoreAPI", "Storage",
                        "NotificationPipeline"}, "the runtime knows nothing of the App Store"),
    "Storage": ({"RdKafka", "ServiceRuntime", "NotificationPipeline", "AppStoreAPI", "Hummingbird"},
                "storage is PostgreSQL over the records, free of Kafka and the service runtime"),
    "RdKafka": ({"AppStoreModels", "PipelineRecords", "ServiceRuntime", "Storage"}, "the Kafka wrapper knows no records"),
    "Entitlements": ({"RdKafka", "ServiceRuntime", "Storage", "NotificationPipeline", "PostgresNIO", "Hummingbird"},
                     "the rules are pure functions"),
    "AppStoreAPI": ({"PipelineRecords", "Entitlements", "Storage", "RdKafka", "ServiceRuntime", "NotificationPipeline",
                     "Hummingbird", "PostgresNIO"}, "the API client talks to Apple and knows nothing of the pipeline"),
    "NotificationPipeline": ({"Hummingbird"}, "the services' shared pieces serve no HTTP routes of their own"),
}
IMPORT = re.compile(r"^((?:@testable |@_spi\(\w+\) |@preconcurrency |@_implementationOnly |public |package |internal )*)import "
                    r"(?:struct |enum |class |func |protocol |typealias |var |let )?([A-Za-z0-9_]+)", re.M)


def declared_targets():
    """Each target's name, path and declared dependency names (targets and products alike)."""
    dump = json.loads(subprocess.run(["swift", "package", "dump-package"], cwd=ROOT, check=True, capture_output=True,
                                     text=True).stdout)
    targets = {}
    for target in dump["targets"]:
        names = set()
        for dependency in target["dependencies"]:
            for kind in ("byName", "target", "product"):
                if kind in dependency:
                    names.add(dependency[kind][0])
        targets[target["name"]] = (target["path"], target["type"], names)
    return targets


def imported(path):
    """The non-system modules the Swift sources under `path` import, and those of them imported `@testable`."""
    modules, testable = set(), set()
    for source in (ROOT / path).rglob("*.swift"):
        for attributes, module in IMPORT.findall(source.read_text(encoding="utf-8")):
            modules.add(module)
            if "@testable" in attributes:
                testable.add(module)
    return modules - SYSTEM, testable - SYSTEM


def main():
    problems = []
    targets = declared_targets()
    for name, (path, kind, declared) in sorted(targets.items()):
        if kind == "system":
            continue
        uses, testable = imported(path)
        for module in sorted(uses - declared):
            problems.append(f"{name}: imports {module} without declaring it in Package.swift")
        for module in sorted(declared - uses):
            problems.append(f"{name}: declares {module} but no source imports it")
        if name in ONLY:
            allowed, why = ONLY[name]
            for module in sorted(uses - allowed):
                problems.append(f"{name}: must not import {module} ({why})")
        if name in FORBIDDEN:
            forbidden, why = FORBIDDEN[name]
            for module in sorted(uses & forbidden):
                problems.append(f"{name}: must not import {module} ({why})")
        if name in SERVICES:
            for module in sorted(uses & (SERVICES - {name})):
                problems.append(f"{name}: a service must not import another service ({module})")
        # The App Store stand-in is a library for its thin executable, the tests and the benchmarks only: no part of the
        # pipeline may lean on it, and it leans on no service.
        if "AppStoreSimKit" in uses and name != "AppStoreSim" and path.startswith(("Shared/", "Services/")):
            problems.append(f"{name}: only appstore-sim, tests and benchmarks may import AppStoreSimKit")
        # What the tests need of the sim that is not its public API is behind `@_spi(Testing)`, never `@testable`.
        if "AppStoreSimKit" in testable:
            problems.append(f"{name}: reaches the sim's internals with @testable; use @_spi(Testing) import AppStoreSimKit")
        if name == "AppStoreSimKit":
            for module in sorted(uses & SERVICES):
                problems.append(f"{name}: the simulator must not import a service ({module})")
        if path.startswith("Shared/"):
            for module in sorted(uses & SERVICES):
                problems.append(f"{name}: a shared module must not import a service ({module})")
    for problem in problems:
        print(problem)
    print(f"layers: {len(targets)} targets checked, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
