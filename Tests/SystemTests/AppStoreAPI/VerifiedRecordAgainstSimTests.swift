import AppStoreModels
import AppStoreSigning
@_spi(Testing) import AppStoreSimKit
import Crypto
import Foundation
import JWSVerification
import NotificationPipeline
import PipelineRecords
import TestSupport
import Testing

/// Every notification a whole sim run signs, verified and written as the chain-verifier writes it (Apple's JSON
/// kept), reads back as the same record the canonical encoding gives: no notification type, container or field
/// of the sim's life cycles is lost between the chain-verifier and the entitlement-updater.
@Suite struct VerifiedRecordAgainstSimTests {
    @Test func everyNotificationOfASimRunReadsBackAsItsRecord() async throws {
        let pki = try TestPKI()
        var configuration = SimConfiguration(apiPublicKey: P256.Signing.PrivateKey().publicKey)
        configuration.customers = 600
        configuration.seed = 61
        configuration.environments = [.production, .sandbox]
        let simulator = try Simulator(configuration: configuration, pki: pki)
        var trust = TrustSettings()
        trust.trustedRoots = [pki.root]
        let app = AppIdentity(bundleId: configuration.bundleId, appAppleId: configuration.appAppleId)
        let verifiers = try trust.makeVerifiers(for: AcceptedApps(apps: [app], environments: [.production, .sandbox]))
        let byUUID = Dictionary(simulator.scenario.notifications.map { ($0.uuid, $0) }, uniquingKeysWith: { a, _ in a })

        var wrong: [String] = []
        var types: Set<String> = []
        for item in simulator.signed {
            let environment = try #require(byUUID[item.uuid]?.environment)
            let verifier = try #require(verifiers[environment])
            let (verified, json) = try await verifier.verifyNotificationKeepingJSON(item.signedPayload)
            let source = VerifiedNotificationRecord.Source(topic: "raw", partition: 1, offset: 7)
            let (record, bytes) = try VerifiedNotificationRecord.encoding(verified, json: json, source: source)
            let decoded = try? JSONDecoder().decode(VerifiedNotificationRecord.self, from: Data(bytes))
            let canonical = try JSONDecoder().decode(VerifiedNotificationRecord.self, from: Data(record.encoded()))
            types.insert(verified.payload.rawNotificationType ?? "")
            if decoded != canonical || decoded != record || decoded?.notification.payload.notificationUUID != item.uuid
            {
                wrong.append(
                    "\(item.uuid) \(verified.payload.rawNotificationType ?? "") \(verified.payload.rawSubtype ?? ""): \(String(decoding: bytes, as: UTF8.self).prefix(400))"
                )
            }
        }
        #expect(simulator.signed.count > 3_000)
        #expect(types.count > 15, "the run covers the notification types: \(types.sorted())")
        #expect(
            wrong.isEmpty,
            "\(wrong.count) of \(simulator.signed.count) records read back differently: \(wrong.prefix(3))")
    }
}
