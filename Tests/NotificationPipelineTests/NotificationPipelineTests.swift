import AppStoreModels
import Foundation
import JWSVerification
import NotificationPipeline
import Testing
import TestSupport

/// Subjects, the apps setting, and the records written to the verified and rejected topics.
@Suite struct NotificationPipelineTests {
    @Test func subjectIsTheOriginalTransactionIdOrAnAppScopedIdentifier() {
        var payload = SignedFixtures.notification()
        #expect(NotificationSubject.of(payload, transaction: SignedFixtures.transaction()) == "2000000000000001")
        #expect(NotificationSubject.of(payload, transaction: nil) == "com.example.app:6b2a6f1e-3c1d-4e55-9f0a-1b2c3d4e5f60")
        payload.data = nil
        var summary = Summary()
        summary.bundleId = "com.example.app"
        summary.requestIdentifier = "req-1"
        payload.summary = summary
        #expect(NotificationSubject.of(payload, transaction: nil) == "com.example.app:req-1")
        payload.summary = nil
        var token = ExternalPurchaseToken()
        token.bundleId = "com.example.app"
        token.externalPurchaseId = "SANDBOX_1"
        payload.externalPurchaseToken = token
        #expect(NotificationSubject.of(payload, transaction: nil) == "com.example.app:SANDBOX_1")
    }

    @Test func appsSettingParses() throws {
        let apps = try ConfiguredApps.parse("com.a:123, com.b")
        #expect(apps == [AppIdentity(bundleId: "com.a", appAppleId: 123), AppIdentity(bundleId: "com.b")])
        #expect(throws: ConfigurationError.self) { try ConfiguredApps.parse("com.a:abc") }
        #expect(throws: ConfigurationError.self) { try ConfiguredApps.parse("") }
        #expect(try ConfiguredApps.environments(["Production", "Sandbox"]) == [.production, .sandbox])
        #expect(throws: ConfigurationError.self) { try ConfiguredApps.environments(["Staging"]) }
    }

    @Test func verifiedRecordsAreCanonicalSoRepeatsAreExact() async throws {
        let fixtures = try SignedFixtures()
        let verified = try await fixtures.verifier().verifyNotification(fixtures.signedNotification())
        let source = VerifiedNotificationRecord.Source(topic: "appstore.notifications.raw", partition: 3, offset: 41)
        let first = try VerifiedNotificationRecord(notification: verified, source: source).encoded()
        let second = try VerifiedNotificationRecord(notification: verified, source: source).encoded()
        #expect(first == second)
        #expect(first.count < verified.signedPayload.utf8.count, "v2 carries no signed string: \(first.count) bytes")
        let decoded = try JSONDecoder().decode(VerifiedNotificationRecord.self, from: Data(first))
        #expect(decoded.subject == "2000000000000001")
        #expect(decoded.environment == "Sandbox")
        #expect(decoded.source == source, "Apple's signed original is the raw message at source")
        #expect(decoded.notification.signedPayload.isEmpty)
        #expect(decoded.notification.transaction == verified.transaction)
        #expect(decoded.notification.renewalInfo == verified.renewalInfo)
        #expect(decoded.notification.payload.data?.signedTransactionInfo == nil, "kept once, in the raw message")
        #expect(decoded.notification.payload.notificationUUID == verified.payload.notificationUUID)
    }
}
