import AppStoreModels
import Foundation
import TestSupport
import Testing

@testable import AppStoreSim

/// appstore-sim is as faithful as Apple where Apple's own code can tell: Apple's Python library
/// (`app-store-server-library`, PyPI) verifies the notifications the sim signs (its OpenSSL chain building needs the
/// authority key identifiers Apple's certificates carry) and its API client, whose tokens carry no `iat`, gets the
/// sim's answers.
@Suite(.tags(.integration), .notInUnitRuns) struct AppleLibraryConformanceTests {
    @Test func applesOwnLibraryVerifiesWhatTheSimSignsAndItsClientCallsTheSim() async throws {
        try await SimHarness.with(
            customers: 30, seed: 27, configure: { $0.environments = [.production, .sandbox] }
        ) { sim in
            let directory = try LocalComponents.temporaryDirectory("apple-library")
            defer { try? FileManager.default.removeItem(at: directory) }
            let environment = try sim.environment(directory: directory, bootstrap: "unused:9092")
            let notifications = Array(sim.simulator.scenario.notifications.prefix(60))
            let lines = try notifications.map { "\($0.environment.rawValue) \(try sim.simulator.signer.sign($0))" }
            let file = directory.appending(path: "notifications.txt")
            try Data(lines.joined(separator: "\n").utf8).write(to: file)
            let subscription = try #require(
                sim.simulator.scenario.purchases.values.first {
                    $0.environment == .production && $0.status != nil
                })
            let result = try await Program.run(
                URL(fileURLWithPath: LocalComponents.toolsPython),
                [
                    LocalComponents.repositoryRoot.appending(path: "Tests/Contract/apple_library_conformance.py").path,
                    "--root", environment["APPSTORE_ROOT_CERTIFICATES"]!, "--bundle-id", sim.app.bundleId,
                    "--app-apple-id", String(sim.app.appAppleId!), "--notifications", file.path,
                    "--api-url", sim.baseURL.absoluteString, "--key", environment["APPSTORE_API_KEY_FILE"]!,
                    "--key-id", SimHarness.keyID, "--issuer-id", SimHarness.issuerID,
                    "--original-transaction-id", subscription.originalTransactionId,
                ])
            #expect(result.status == 0, "\(result.errors)")
            let report = try #require(
                try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any], "\(result.output)")
            #expect(report["failures"] as? [String] == [], "Apple's verifier refused: \(report["failures"] ?? "")")
            #expect(report["verified"] as? Int == notifications.count)
            #expect(report["apiError"] == nil, "Apple's client was refused: \(report["apiError"] ?? "")")
            #expect((report["statuses"] as? Int ?? 0) >= 1)
            #expect(report["statusTransaction"] as? String == subscription.originalTransactionId)
        }
    }
}
