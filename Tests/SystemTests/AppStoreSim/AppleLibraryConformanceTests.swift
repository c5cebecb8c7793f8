import AppStoreModels
@_spi(Testing) import AppStoreSimKit
import Foundation
@_spi(Testing) import SystemTestSupport
import TestSupport
import Testing

/// appstore-sim is as faithful as Apple where Apple's own code can tell: Apple's Python library
/// (`app-store-server-library`, PyPI) verifies the notifications the sim signs (its OpenSSL chain building needs the
/// authority key identifiers Apple's certificates carry) and its API client, whose tokens carry no `iat`, gets the
/// sim's answers: Get All Subscription Statuses, Finish Transaction, and Get App Transaction Info by any purchase's id
/// and by the appTransactionId, for every kind of purchase in both environments.
@Suite(.tags(.integration), .notInUnitRuns) struct AppleLibraryConformanceTests {
    @Test func applesOwnLibraryVerifiesWhatTheSimSignsAndItsClientCallsTheSim() async throws {
        try await SimHarness.with(
            customers: 60, seed: 27, configure: { $0.environments = [.production, .sandbox] }
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
            // One purchase of each kind (the first digit of the id's last 13) in each environment.
            var kinds: [String: String] = [:]
            for purchase in sim.simulator.scenario.purchases.values.sorted(by: {
                $0.originalTransactionId < $1.originalTransactionId
            }) {
                let kind = "\(purchase.environment.rawValue) \(purchase.originalTransactionId.suffix(13).first!)"
                if kinds[kind] == nil {
                    kinds[kind] = "\(purchase.environment.rawValue) \(purchase.originalTransactionId)"
                }
            }
            let purchases = directory.appending(path: "purchases.txt")
            try Data(kinds.values.sorted().joined(separator: "\n").utf8).write(to: purchases)
            let result = try await Program.run(
                URL(fileURLWithPath: LocalComponents.toolsPython),
                [
                    LocalComponents.repositoryRoot.appending(path: "Tests/Contract/apple_library_conformance.py").path,
                    "--root", environment["APPSTORE_ROOT_CERTIFICATES"]!, "--bundle-id", sim.app.bundleId,
                    "--app-apple-id", String(sim.app.appAppleId!), "--notifications", file.path,
                    "--api-url", sim.baseURL.absoluteString, "--key", environment["APPSTORE_API_KEY_FILE"]!,
                    "--key-id", SimHarness.keyID, "--issuer-id", SimHarness.issuerID,
                    "--original-transaction-id", subscription.originalTransactionId, "--purchases", purchases.path,
                ])
            #expect(result.status == 0, "\(result.errors)")
            let report = try #require(
                try JSONSerialization.jsonObject(with: Data(result.output.utf8)) as? [String: Any], "\(result.output)")
            #expect(report["failures"] as? [String] == [], "Apple's verifier refused: \(report["failures"] ?? "")")
            #expect(report["verified"] as? Int == notifications.count)
            #expect(report["verifiedOnline"] as? Int == 5, "Apple's verifier in online mode, the sim's OCSP responder")
            #expect(report["apiError"] == nil, "Apple's client was refused: \(report["apiError"] ?? "")")
            #expect((report["statuses"] as? Int ?? 0) >= 1)
            #expect(report["statusTransaction"] as? String == subscription.originalTransactionId)
            // Finish Transaction served, and each app transaction found again by its own id, Apple's library judging.
            let roundTrips = try #require(report["purchases"] as? [String: String], "\(report)")
            #expect(kinds.count == 6, "three kinds of purchase in each environment: \(kinds.keys.sorted())")
            #expect(roundTrips.count == kinds.count && roundTrips.values.allSatisfy { $0 == "ok" }, "\(roundTrips)")
        }
    }
}
