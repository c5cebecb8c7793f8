import Foundation
import Logging
import PipelineRecords
import Storage
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// schemathesis (PyPI) exercises a live customer-api from its own OpenAPI document (`/openapi.json`): generated
/// valid and invalid requests for every operation, with an admin key of the sim's app. It fails on any 5xx and on
/// any answer the document does not describe (status, content type, headers, body schema), and checks that every
/// `/v1` operation refuses a request without the key.
///
/// customer-api and the entitlement-updater run as their binaries, not inside the test process: a service sharing the
/// test process's two threads with the suites running beside it once answered two requests past schemathesis's
/// default 10 s. Each request may take up to 120 s, and `max_response_time` (which `--checks all` turns on with a 10 s
/// limit; a fresh-clone run saw a mass-extension request, which asks the sim in the test process, answer in 11.3 s)
/// is left out: the answers are checked, not their speed (performance.md measures that).
@Suite(.tags(.integration), .notInUnitRuns) struct SchemathesisTests {
    /// Every check of schemathesis about the answers, named one by one: `--checks all` also turns on
    /// `max_response_time` with a 10 s limit, a timed assertion (which `--exclude-checks` cannot name). Left out too:
    /// `positive_data_acceptance` (the API is stricter than the document's types: a key's app, a signed transaction)
    /// and `object_level_authorization` (it needs two users' keys configured as peers and runs nothing without).
    static let checks = [
        "not_a_server_error", "status_code_conformance", "content_type_conformance", "response_headers_conformance",
        "response_schema_conformance", "negative_data_rejection", "missing_required_header", "unsupported_method",
        "allow_header_conformance", "use_after_free", "ensure_resource_availability", "ignored_auth",
    ]

    /// The services schemathesis needs: customer-api, and the updater that applies what it posts.
    static let services = ["entitlement-updater", "customer-api"]

    @Test func customerAPIAnswersAsItsDocumentSays() async throws {
        try await Self.withServices { sim, customerAPI, adminKey in
            let tools = URL(fileURLWithPath: LocalComponents.toolsPython).deletingLastPathComponent()
            // It keeps a cache where it runs: a directory of its own, removed afterwards.
            let workingDirectory = try LocalComponents.temporaryDirectory("schemathesis")
            defer { try? FileManager.default.removeItem(at: workingDirectory) }
            let result = try await Program.run(
                tools.appending(path: "schemathesis"),
                [
                    "--config-file",
                    LocalComponents.repositoryRoot.appending(path: "Tests/Contract/schemathesis.toml").path,
                    "run", customerAPI + "/openapi.json",
                    "--checks", Self.checks.joined(separator: ","),
                    "--phases", "examples,coverage,fuzzing", "--workers", "1", "--seed", "20261125", "--no-shrink",
                    // What is checked is each answer, not its speed (performance.md measures that): routes that ask
                    // the sim (in this process, beside the other suites) took past schemathesis's default 10 s once.
                    "--request-timeout", "120",
                ],
                environment: ["IAP_API_KEY": adminKey, "IAP_BUNDLE_ID": sim.app.bundleId, "NO_COLOR": "1"],
                errors: .merged, workingDirectory: workingDirectory)
            #expect(
                result.status == 0,
                "schemathesis found answers the document does not describe:\n\(result.output.suffix(6000))")
            // It really ran: every operation of the document was selected and tested, and cases passed.
            let document =
                try JSONSerialization.jsonObject(
                    with: Data(contentsOf: LocalComponents.repositoryRoot.appending(path: "docs/openapi.json")))
                as? [String: Any]
            // Every operation but GET /openapi.json, which schemathesis leaves out: it is where the document came from.
            let operations =
                (document?["paths"] as? [String: [String: Any]] ?? [:]).values.map(\.count).reduce(0, +) - 1
            #expect(operations > 15)
            #expect(
                result.output.contains("Selected: \(operations)/\(operations)")
                    && result.output.contains("Tested: \(operations)"),
                "\(result.output.suffix(3000))")
            #expect(result.output.contains(" passed, "), "\(result.output.suffix(3000))")
        }
    }

    /// Runs `body` with the sim, a broker, PostgreSQL, and ``services`` as processes; it gets the sim, customer-api's
    /// base URL and an admin key of the sim's app.
    static func withServices(
        _ body: @Sendable (SimHarness, _ customerAPI: String, _ adminKey: String) async throws -> Void
    ) async throws {
        try LocalComponents.requireModernLibrdkafka()
        try await withLocalBroker { bootstrap in
            try await withLocalPostgres { databaseURL in
                try await SimHarness.with(customers: 40, seed: 11) { sim in
                    let logger = Logger(label: "schemathesis")
                    try await KafkaTestClient(bootstrapServers: [bootstrap])
                        .createTopics(PipelineTopics().all.map { ($0, 2) })
                    let adminKey = try await DatabaseClient.with(try DatabaseSettings(url: databaseURL), logger: logger)
                    { client in
                        try await MigrationRunner().migrate(client: client, logger: logger)
                        return try await APIKeyStore(client: client, logger: logger)
                            .create(
                                bundleId: sim.app.bundleId, label: "schemathesis", ratePerSecond: 10_000, role: "admin"
                            ).token
                    }
                    let directory = try LocalComponents.temporaryDirectory("schemathesis-services")
                    var environment = try sim.environment(directory: directory, bootstrap: bootstrap)
                    environment.merge([
                        "DATABASE_URL": databaseURL, "LOG_LEVEL": "warning", "KAFKA_SESSION_TIMEOUT_MS": "6000",
                        "APPSTORE_API_SANDBOX_FALLBACK": "true", "CUSTOMER_API_APPLY_WAIT_MS": "500",
                    ]) { _, new in new }
                    let fleet = try ServiceFleet(environment: environment, directory: directory, only: Self.services)
                    try await fleet.whileRunning(http: sim.http) {
                        try await body(sim, await fleet.customerAPIURL, adminKey)
                    }
                }
            }
        }
    }
}
