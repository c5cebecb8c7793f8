import AppStoreModels
import Foundation
import JWSVerification
import NotificationPipeline
import PipelineRecords
import RdKafka
import ServiceRuntime
import TestSupport
import Testing

/// The updater's own check of Apple's signature (``AppleSignatureCheck``), without servers: the chain-verifier's
/// record of a notification passes; a record without Apple's payload, one altered after verification, one
/// holding another notification than the payload it carries, and one carrying a payload Apple did not sign are
/// each refused.
@Suite struct AppleSignatureCheckTests {
    let fixtures: SignedFixtures
    let check: AppleSignatureCheck

    init() throws {
        self.fixtures = try SignedFixtures()
        self.check = AppleSignatureCheck(verifiers: [
            .sandbox: try self.fixtures.verifier(environment: .sandbox),
            .production: try self.fixtures.verifier(environment: .production),
        ])
    }

    /// The record the chain-verifier publishes for `signed`, as the updater decodes it, and its Apple header.
    func published(_ signed: String, verifier fixtures: SignedFixtures? = nil) async throws -> (
        record: VerifiedNotificationRecord, header: [UInt8]?
    ) {
        let environment =
            try UnverifiedJWS(signed).decodePayload(as: ResponseBodyV2DecodedPayload.self).rawEnvironment ?? ""
        let verifier = try (fixtures ?? self.fixtures).verifier(environment: Environment(rawValue: environment)!)
        let (verified, json) = try await verifier.verifyNotificationKeepingJSON(signed)
        let produced = try VerifiedTopicRecords.notification(
            verified, json: json, source: .init(topic: "appstore.notifications.raw", partition: 3, offset: 42),
            carrying: [], topics: PipelineTopics(), signing: TestRecordSigning.signer(.chainVerifier))
        let record = try JSONDecoder().decode(VerifiedNotificationRecord.self, from: Data(produced.value!))
        return (record, produced.headers.last { $0.name == PipelineHeaders.appleSignedPayload }?.value)
    }

    @Test func theChainVerifiersRecordPassesWithApplesPayloadAndFailsWithout() async throws {
        let signed = try self.fixtures.signedNotification()
        let (record, header) = try await self.published(signed)
        #expect(header.map { String(decoding: $0, as: UTF8.self) } == signed, "Apple's payload byte for byte")
        #expect(try await self.check.refusal(of: record, signedPayload: header) == nil)
        #expect(try await self.check.refusal(of: record, signedPayload: nil) == .missing)
        #expect(try await self.check.refusal(of: record, signedPayload: []) == .missing)
        #expect(
            try await self.check.refusal(of: record, signedPayload: header).map(\.description) == nil,
            "checking again (the chain now cached) passes too")
    }

    @Test func aRecordAlteredAfterVerificationIsRefused() async throws {
        let (record, header) = try await self.published(try self.fixtures.signedNotification())
        var longer = record
        longer.notification.transaction?.expiresDate = Timestamp(millisecondsSince1970: 4_000_000_000_000)
        #expect(try await self.check.refusal(of: longer, signedPayload: header) == .differs)
        var otherType = record
        otherType.notification.payload.rawNotificationType = "SUBSCRIBED"
        #expect(try await self.check.refusal(of: otherType, signedPayload: header) == .differs)
        var otherSubject = record
        otherSubject.subject = "Sandbox/com.example.app/somebody-else"
        #expect(try await self.check.refusal(of: otherSubject, signedPayload: header) == .differs)
        var renewalDropped = record
        renewalDropped.notification.renewalInfo = nil
        #expect(try await self.check.refusal(of: renewalDropped, signedPayload: header) == .differs)
    }

    @Test func anotherGenuineNotificationsPayloadDoesNotVouchForTheRecord() async throws {
        let (record, _) = try await self.published(try self.fixtures.signedNotification())
        let later = try self.fixtures.signedNotification(
            signedDate: Timestamp(millisecondsSince1970: SignedFixtures.signedDate.millisecondsSince1970 + 60_000))
        #expect(try await self.check.refusal(of: record, signedPayload: Array(later.utf8)) == .differs)
    }

    @Test func aPayloadAppleDidNotSignIsRefused() async throws {
        // A whole hierarchy of the forger's own: the record matches its payload, but its root is not trusted.
        let forger = try SignedFixtures()
        let (forged, forgedHeader) = try await self.published(try forger.signedNotification(), verifier: forger)
        let refusal = try await self.check.refusal(of: forged, signedPayload: forgedHeader)
        guard case .notApple(let detail) = refusal else {
            Issue.record("expected notApple, got \(String(describing: refusal))")
            return
        }
        #expect(detail.hasPrefix("chain"), "\(detail)")

        // Apple's payload with one character of its signature changed.
        let signed = try self.fixtures.signedNotification()
        let (record, _) = try await self.published(signed)
        var bytes = Array(signed.utf8)
        bytes[bytes.count - 5] = bytes[bytes.count - 5] == UInt8(ascii: "A") ? UInt8(ascii: "B") : UInt8(ascii: "A")
        let altered = try await self.check.refusal(of: record, signedPayload: bytes)
        guard case .notApple(let alteredDetail) = altered else {
            Issue.record("expected notApple, got \(String(describing: altered))")
            return
        }
        #expect(alteredDetail.hasPrefix("signature"), "\(alteredDetail)")
    }

    @Test func aSandboxPayloadDoesNotPassForAProductionRecord() async throws {
        let (record, header) = try await self.published(try self.fixtures.signedNotification(environment: .sandbox))
        var production = record
        production.environment = "Production"
        let refusal = try await self.check.refusal(of: production, signedPayload: header)
        guard case .notApple(let detail) = refusal else {
            Issue.record("expected notApple, got \(String(describing: refusal))")
            return
        }
        #expect(detail.hasPrefix("environment"), "\(detail)")
        let onlyProduction = AppleSignatureCheck(verifiers: [
            .production: try self.fixtures.verifier(environment: .production)
        ])
        #expect(
            try await onlyProduction.refusal(of: record, signedPayload: header)
                == .notApple("no verifier for environment Sandbox"))
    }

    @Test func theSettingIsRequiredOrOffAndNothingElse() throws {
        let apps = ["APPSTORE_APPS": "com.example.app:1234567"]
        #expect(try AppleSignatureCheck.configured(EnvironmentSettings(apps)) != nil, "required by default")
        #expect(
            try AppleSignatureCheck.configured(EnvironmentSettings(["UPDATER_APPLE_SIGNATURE_CHECK": "off"])) == nil)
        #expect(throws: SettingsError.self) {
            try AppleSignatureCheck.configured(
                EnvironmentSettings(apps.merging(["UPDATER_APPLE_SIGNATURE_CHECK": "when-present"]) { a, _ in a }))
        }
        #expect(throws: (any Error).self, "required needs the apps") {
            try AppleSignatureCheck.configured(EnvironmentSettings([:]))
        }
        #expect(throws: (any Error).self, "and readable roots") {
            try AppleSignatureCheck.configured(
                EnvironmentSettings(apps.merging(["APPSTORE_ROOT_CERTIFICATES": "/nonexistent/root.der"]) { a, _ in a })
            )
        }
    }
}
