import Foundation
import Logging
import Storage
import TestSupport
import Testing

/// schemathesis (PyPI) exercises a live customer-api from its own OpenAPI document (`/openapi.json`): generated
/// valid and invalid requests for every operation, with an admin key of the sim's app. It fails on any 5xx and on
/// any answer the document does not describe (status, content type, headers, body schema), and checks that every
/// `/v1` operation refuses a request without the key.
@Suite(.tags(.integration), .notInUnitRuns) struct SchemathesisTests {
    @Test func customerAPIAnswersAsItsDocumentSays() async throws {
        try await CustomerAPIPurchaseTests.withStack(wait: .milliseconds(500)) { stack in
            let logger = Logger(label: "schemathesis")
            let adminKey = try await DatabaseClient.with(try DatabaseSettings(url: stack.databaseURL), logger: logger) {
                client in
                try await APIKeyStore(client: client, logger: logger)
                    .create(
                        bundleId: stack.sim.app.bundleId, label: "schemathesis", ratePerSecond: 10_000, role: "admin"
                    ).token
            }
            let tools = URL(fileURLWithPath: LocalComponents.toolsPython).deletingLastPathComponent()
            // It keeps a cache where it runs: a directory of its own, removed afterwards.
            let workingDirectory = try LocalComponents.temporaryDirectory("schemathesis")
            defer { try? FileManager.default.removeItem(at: workingDirectory) }
            let result = try await Program.run(
                tools.appending(path: "schemathesis"),
                [
                    "--config-file",
                    LocalComponents.repositoryRoot.appending(path: "Tests/Contract/schemathesis.toml").path,
                    "run", "http://127.0.0.1:\(stack.port)/openapi.json",
                    "--checks", "all", "--exclude-checks", "positive_data_acceptance",
                    "--phases", "examples,coverage,fuzzing", "--workers", "1", "--seed", "20261125", "--no-shrink",
                ],
                environment: ["IAP_API_KEY": adminKey, "IAP_BUNDLE_ID": stack.sim.app.bundleId, "NO_COLOR": "1"],
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
}
