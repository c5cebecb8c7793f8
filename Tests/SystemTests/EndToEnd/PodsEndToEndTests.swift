@_spi(Testing) import AppStoreSimKit
import Foundation
import Logging
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// The pods the development overlay ships, run as containers of the image built here (`deploy/local/image.sh`,
/// podman with runc) exactly as the rendered objects say (`deploy/local/pods.py`): the migrate and topics Jobs to
/// completion, then every Deployment with its init container, its Secret, key files, user 10001, read-only root,
/// dropped capabilities and limits, and every probe answered on the manifest's port and path. A sim scenario is
/// then delivered through the ingest container, and the database and the published events must end as the sim says;
/// REFUNDs come without `data.status`, so refund-resolver's container calls the sim with its mounted key.
@Suite(.heavy, .tags(.integration), .notInUnitRuns, .serialized, .timeLimit(.minutes(20))) struct PodsEndToEndTests {
    static var logger: Logger {
        var logger = Logger(label: "pods")
        logger.logLevel = .critical
        return logger
    }

    @Test func theDevelopmentOverlaysPodsRunAsContainersAndEndInTheSimsState() async throws {
        let started = ContinuousClock.now
        let image = try await LocalComponents.script("image.sh", [])
        // Every executable of Package.swift is in the image, as a file the pipeline's user can run.
        let listed = try await Program.run(
            URL(fileURLWithPath: "/usr/bin/podman"),
            ["run", "--rm", "--network", "host", "--user", "10001:10001", image, "ls", "/usr/local/bin"])
        let inImage = Set(listed.output.split(separator: "\n").map(String.init))
        let executables = try Self.packageExecutables()
        #expect(
            executables.count >= 9 && executables.isSubset(of: inImage), "missing: \(executables.subtracting(inImage))")
        let size = try await Program.run(
            URL(fileURLWithPath: "/usr/bin/podman"), ["image", "inspect", "--format", "{{.Size}}", image]
        ).output.trimmingCharacters(in: .whitespacesAndNewlines)
        let imageSeconds = (ContinuousClock.now - started).components.seconds

        try await withLocalBroker { bootstrap in
            try await withLocalPostgres { databaseURL in
                try await SimHarness.with(
                    customers: 150, seed: 73,
                    configure: {
                        $0.retryDelays = [.seconds(2), .seconds(4), .seconds(8)]
                        $0.environments = [.production, .sandbox]
                        $0.refundCarriesStatus = false
                    }
                ) { sim in
                    let directory = try LocalComponents.temporaryDirectory("pods")
                    defer { try? FileManager.default.removeItem(at: directory) }
                    let rendered = directory.appendingPathComponent("development.yaml")
                    let manifests = try await Program.run(
                        URL(fileURLWithPath: "/usr/bin/kubectl"),
                        [
                            "kustomize",
                            LocalComponents.repositoryRoot.appending(path: "deploy/kubernetes/overlays/development")
                                .path,
                        ])
                    #expect(manifests.status == 0, "\(manifests.errors)")
                    try Data(manifests.output.utf8).write(to: rendered)
                    let values = try Self.values(
                        sim, image: image, bootstrap: bootstrap, databaseURL: databaseURL, directory: directory)
                    let valuesFile = directory.appendingPathComponent("values.json")
                    try JSONSerialization.data(withJSONObject: values).write(to: valuesFile)

                    let up: String
                    do {
                        up = try await Self.pods(["up", rendered.path, valuesFile.path])
                    } catch {
                        _ = try? await Self.pods(["down", valuesFile.path])
                        throw error
                    }
                    let summary = try #require(
                        try JSONSerialization.jsonObject(with: Data(up.utf8)) as? [String: Any], "\(up)")
                    let containers = summary["containers"] as? [String: Any] ?? [:]
                    #expect(
                        (summary["jobs"] as? [String: String]) == [
                            "pipeline-migrate": "completed", "pipeline-topics": "completed",
                        ])
                    #expect(containers.count == 8, "every Deployment's container runs: \(containers.keys.sorted())")
                    let probes = summary["probes"] as? Int ?? 0
                    #expect(probes == 8 * 3, "startup, readiness and liveness of each container answered: \(probes)")

                    let plan = sim.simulator.deliveryPlan()
                    let ingest = "http://127.0.0.1:8080/notifications"
                    _ = await sim.simulator.deliver(plan, http: sim.http, to: ingest)
                    await sim.simulator.retryUndelivered(http: sim.http, to: ingest)
                    #expect(await sim.simulator.store.undeliveredCount() == 0, "the ingest container took everything")
                    try await EndToEndTests.check(
                        sim, databaseURL: databaseURL, bootstrap: bootstrap, publisherKilled: false)

                    let after = try await Self.pods(["probe", valuesFile.path])
                    let states = try #require(
                        try JSONSerialization.jsonObject(with: Data(after.utf8)) as? [String: [String: Any]])
                    #expect(
                        states.count == 8 && states.values.allSatisfy { $0["running"] as? Bool == true },
                        "every container still runs after the scenario: \(states)")
                    let down = try await Self.pods(["down", valuesFile.path])
                    #expect(down.contains("\"stopped\": 8"), "\(down)")
                    print(
                        "pods: image \(image) \(size) bytes (built in \(imageSeconds) s); jobs \(summary["jobs"] ?? ""); "
                            + "\(containers.count) containers, \(probes) probes answered in \(summary["seconds"] ?? "?") s; "
                            + "\(plan.count) deliveries of \(sim.simulator.scenario.notifications.count) notifications; "
                            + "whole test \((ContinuousClock.now - started).components.seconds) s")
                }
            }
        }
    }

    // MARK: The run's values

    /// What replaces the overlay's placeholders: the local broker and PostgreSQL, the sim's apps, API and keys, a
    /// password per role, a record key per producer (deploy/secret-access.yaml's Secrets, one per workload).
    static func values(
        _ sim: SimHarness, image: String, bootstrap: String, databaseURL: String, directory: URL
    ) throws -> [String: Any] {
        let root = directory.appendingPathComponent("sim-root.der")
        try Data(sim.pki.rootDER).write(to: root)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: root.path)
        var passwords: [String: String] = [:]
        var roleURLs: [String: String] = [:]
        let server = try #require(URLComponents(string: databaseURL))
        for service in [
            "entitlement-updater", "customer-api", "event-publisher", "retention-messaging", "webhook-dispatcher",
        ] {
            let password = UUID().uuidString.replacingOccurrences(of: "-", with: "")
            passwords[service] = password
            var url = server
            url.user = "iap_" + service.replacingOccurrences(of: "-", with: "_")
            url.password = password
            roleURLs[service] = url.string
        }
        let apiIds = ["APPSTORE_API_KEY_ID": SimHarness.keyID, "APPSTORE_API_ISSUER_ID": SimHarness.issuerID]
        var secrets: [String: [String: String]] = [
            "pipeline-migrate-secrets": [
                "DATABASE_URL": databaseURL,
                "ROLE_PASSWORD_ENTITLEMENT_UPDATER": passwords["entitlement-updater"]!,
                "ROLE_PASSWORD_CUSTOMER_API": passwords["customer-api"]!,
                "ROLE_PASSWORD_EVENT_PUBLISHER": passwords["event-publisher"]!,
                "ROLE_PASSWORD_RETENTION_MESSAGING": passwords["retention-messaging"]!,
                "ROLE_PASSWORD_WEBHOOK_DISPATCHER": passwords["webhook-dispatcher"]!,
            ],
            "chain-verifier-secrets": TestRecordSigning.environment(.chainVerifier),
            "entitlement-updater-secrets": [
                "DATABASE_URL": roleURLs["entitlement-updater"]!,
                "RECORD_VERIFYING_KEYS": TestRecordSigning.verifyingVariable,
            ],
            "refund-resolver-secrets": TestRecordSigning.environment(.refundResolver).merging(apiIds) { a, _ in a },
            "event-publisher-secrets": ["DATABASE_URL": roleURLs["event-publisher"]!],
            "customer-api-secrets": TestRecordSigning.environment(.customerAPI).merging(apiIds) { a, _ in a }
                .merging([
                    "DATABASE_URL": roleURLs["customer-api"]!, "APPSTORE_OFFER_KEY_ID": SimHarness.offerKeyID,
                ]) { a, _ in a },
            "webhook-dispatcher-secrets": ["DATABASE_URL": roleURLs["webhook-dispatcher"]!],
            "retention-messaging-secrets": [
                "DATABASE_URL": roleURLs["retention-messaging"]!, "APPSTORE_OFFER_KEY_ID": SimHarness.offerKeyID,
                "APPSTORE_OFFER_ISSUER_ID": SimHarness.issuerID,
            ],
        ]
        secrets["appstore-api-key"] = ["key.p8": sim.apiKey.pemRepresentation]
        secrets["appstore-offer-key"] = ["key.p8": sim.offerKey.pemRepresentation]
        let config: [String: String] = [
            "KAFKA_BOOTSTRAP_SERVERS": bootstrap, "KAFKA_SESSION_TIMEOUT_MS": "6000",
            "APPSTORE_APPS": "\(sim.app.bundleId):\(sim.app.appAppleId!)",
            "APPSTORE_ENVIRONMENTS": "Production,Sandbox",
            "APPSTORE_ROOT_CERTIFICATES": "/etc/appstore/sim/root.der",
            "APPSTORE_API_URL_PRODUCTION": sim.baseURL.absoluteString,
            "APPSTORE_API_URL_SANDBOX": sim.sandboxURL.absoluteString,
            "TOPIC_PARTITIONS": "4", "LOG_LEVEL": "warning", "RESOLVER_REPLICAS": "1",
        ]
        return [
            "run": "pods-\(UUID().uuidString.prefix(8).lowercased())", "image": image,
            "workdir": directory.appendingPathComponent("pod-files").path, "config": config, "secrets": secrets,
            "mounts": ["/etc/appstore/sim/root.der": root.path],
        ]
    }

    // MARK: Helpers

    /// Runs `deploy/local/pods.py` with the tools Python; its standard output, or its error.
    static func pods(_ arguments: [String]) async throws -> String {
        let result = try await Program.run(
            URL(fileURLWithPath: LocalComponents.toolsPython),
            [LocalComponents.repositoryRoot.appending(path: "deploy/local/pods.py").path] + arguments)
        guard result.status == 0 else {
            throw HarnessError(
                "pods.py \(arguments.first ?? "") exited \(result.status): \(result.errors.suffix(3000))")
        }
        return result.output
    }

    /// The executable products of Package.swift under Services/.
    static func packageExecutables() throws -> Set<String> {
        let text = try String(
            contentsOf: LocalComponents.repositoryRoot.appending(path: "Package.swift"), encoding: .utf8)
        return Set(
            text.matches(of: #/kind: \.executable\("([^"]+)"\),\s*path: "Services//#).map { String($0.output.1) })
    }
}
