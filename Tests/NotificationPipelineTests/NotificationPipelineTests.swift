import AppStoreModels
import Foundation
import JWSVerification
import NotificationPipeline
import PipelineRecords
import TestSupport
import Testing
import X509

/// Subjects, the apps setting, and the records written to the verified and rejected topics.
@Suite struct NotificationPipelineTests {
    @Test func subjectIsTheOriginalTransactionIdOrAnAppScopedIdentifier() {
        var payload = SignedFixtures.notification()
        #expect(NotificationSubject.of(payload, transaction: SignedFixtures.transaction()) == "2000000000000001")
        #expect(
            NotificationSubject.of(payload, transaction: nil) == "com.example.app:6b2a6f1e-3c1d-4e55-9f0a-1b2c3d4e5f60")
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

    // MARK: Apple's nested JSON kept

    /// The payload segment of a compact JWS, decoded: the JSON that was signed.
    static func signedJSON(_ jws: String) throws -> [UInt8] {
        let segments = jws.split(separator: ".", omittingEmptySubsequences: false)
        return try #require(segments.count == 3 ? Base64URL.decode(String(segments[1])) : nil)
    }

    @Test func recordsOfARealAppleNotificationCarryItsJSONByteForByte() async throws {
        let verifier = SignedDataVerifier(
            configuration: try VerifierConfiguration(
                environment: .sandbox,
                apps: [AppIdentity(bundleId: "com.loki-project.loki-messenger", appAppleId: 1_470_168_868)],
                trustedRoots: [Certificate(derEncoded: Fixtures.bytes("real-sandbox/AppleRootCA-G3.der"))]))
        let signedPayload = try Fixtures.text("real-sandbox/signedPayload_DID_RENEW")
        let (verified, json) = try await verifier.verifyNotificationKeepingJSON(signedPayload)
        let signedTransaction = try #require(verified.payload.data?.signedTransactionInfo)
        let signedRenewalInfo = try #require(verified.payload.data?.signedRenewalInfo)
        let applePayload = try Self.signedJSON(signedPayload)
        let appleTransaction = try Self.signedJSON(signedTransaction)
        let appleRenewalInfo = try Self.signedJSON(signedRenewalInfo)
        #expect(json.payload == applePayload)
        #expect(json.transaction == appleTransaction)
        #expect(json.renewalInfo == appleRenewalInfo)
        #expect(json.appTransaction == nil)

        let source = VerifiedNotificationRecord.Source(topic: "appstore.notifications.raw", partition: 0, offset: 7)
        let (record, kept) = try VerifiedNotificationRecord.encoding(verified, json: json, source: source)
        #expect(record == VerifiedNotificationRecord(notification: verified, source: source))
        let canonical = try record.encoded()
        #expect(kept != canonical, "Apple's key order is not the canonical one")
        let text = String(decoding: kept, as: UTF8.self)
        #expect(text.contains(#""transaction":"# + String(decoding: appleTransaction, as: UTF8.self) + "}"))
        #expect(text.contains(#""renewalInfo":"# + String(decoding: appleRenewalInfo, as: UTF8.self) + ","))
        // The payload is Apple's with the two nested JWS strings, and nothing else, replaced by null.
        let applePayloadText = String(decoding: applePayload, as: UTF8.self)
        let payloadWithNulls =
            applePayloadText
            .replacingOccurrences(of: "\"" + signedTransaction + "\"", with: "null")
            .replacingOccurrences(of: "\"" + signedRenewalInfo + "\"", with: "null")
        #expect(payloadWithNulls.count < applePayloadText.count - 8_000)
        #expect(text.contains(#""payload":"# + payloadWithNulls + ","))
        #expect(!text.contains(String(signedTransaction.prefix(40))), "no signed string is carried")
        #expect(try JSONSerialization.jsonObject(with: Data(kept)) is [String: Any], "one valid JSON object")
        let decoded = try JSONDecoder().decode(VerifiedNotificationRecord.self, from: Data(kept))
        #expect(decoded == (try JSONDecoder().decode(VerifiedNotificationRecord.self, from: Data(canonical))))
        #expect(decoded == record)
        #expect(
            try VerifiedNotificationRecord.encoding(verified, json: json, source: source).bytes == kept,
            "a repeat gives the same bytes")
    }

    @Test func fieldsThisCodeDoesNotModelReachTheRecord() async throws {
        let fixtures = try SignedFixtures()
        // Apple's order, whitespace, and a field no model here knows, in the transaction and in the payload.
        let transactionJSON = Array(
            #"""
            {"transactionId":"2000000000000002", "originalTransactionId":"2000000000000001","bundleId":"com.example.app",
             "productId":"com.example.app.pro.monthly","type":"Auto-Renewable Subscription","environment":"Sandbox",
             "signedDate":1700000000000,"price":9990,"currency":"USD","appliedFutureOffer":{"id":"x","months":2}}
            """#.utf8)
        let signedTransaction = try fixtures.signer.sign(payloadJSON: transactionJSON)
        let payloadJSON = Array(
            """
            {"notificationType":"DID_RENEW","notificationUUID":"6b2a6f1e-3c1d-4e55-9f0a-1b2c3d4e5f60","version":"2.0",
             "signedDate":1700000000000,"futureTopLevel":[1,"\\\"signedTransactionInfo\\\":\\\"\(signedTransaction)\\\""],
             "data":{"appAppleId":1234567,"bundleId":"com.example.app","environment":"Sandbox","status":1,
             "signedTransactionInfo" : "\(signedTransaction)"}}
            """.utf8)
        let (verified, json) = try await fixtures.verifier().verifyNotificationKeepingJSON(
            fixtures.signer.sign(payloadJSON: payloadJSON))
        #expect(json.transaction == transactionJSON)
        #expect(json.payload == payloadJSON)
        let (record, bytes) = try VerifiedNotificationRecord.encoding(verified, json: json)
        let object = try #require(JSONSerialization.jsonObject(with: Data(bytes)) as? [String: Any])
        let notification = try #require(object["notification"] as? [String: Any])
        let transaction = try #require(notification["transaction"] as? [String: Any])
        #expect((transaction["appliedFutureOffer"] as? [String: Any])?["months"] as? Int == 2)
        #expect(transaction["price"] as? Int == 9990)
        let payload = try #require(notification["payload"] as? [String: Any])
        #expect(
            (payload["futureTopLevel"] as? [Any])?.last as? String == "\"signedTransactionInfo\":\"" + signedTransaction
                + "\"")
        #expect((payload["data"] as? [String: Any])?["signedTransactionInfo"] is NSNull)
        let decoded = try JSONDecoder().decode(VerifiedNotificationRecord.self, from: Data(bytes))
        #expect(decoded == record)
        #expect(decoded.notification.transaction == verified.transaction)
        #expect(decoded.notification.payload.data?.signedTransactionInfo == nil)
        #expect(decoded.subject == "2000000000000001")
    }

    @Test func withoutApplesJSONTheRecordIsTheCanonicalEncoding() async throws {
        let fixtures = try SignedFixtures()
        let verified = try await fixtures.verifier().verifyNotification(fixtures.signedNotification())
        let source = VerifiedNotificationRecord.Source(topic: "appstore.notifications.raw", partition: 2, offset: 9)
        let (record, bytes) = try VerifiedNotificationRecord.encoding(verified, json: VerifiedJSON(), source: source)
        #expect(bytes == (try record.encoded()))
        // No source, no validation time, an app transaction and no renewal info: every optional key.
        var bare = verified
        bare.payload.signedDate = nil
        bare.renewalInfo = nil
        var appTransaction = AppTransaction()
        appTransaction.bundleId = SignedFixtures.bundleId
        bare.appTransaction = appTransaction
        let encoded = try VerifiedNotificationRecord.encoding(bare, json: VerifiedJSON())
        #expect(encoded.record.validatedAt == nil)
        #expect(encoded.bytes == (try encoded.record.encoded()))
        bare.transaction = nil
        let withoutTransaction = try VerifiedNotificationRecord.encoding(
            bare, json: VerifiedJSON(transaction: Array("{}".utf8)))
        #expect(
            withoutTransaction.bytes == (try withoutTransaction.record.encoded()),
            "a part is written only where its decoded value is")
    }

    @Test func aPayloadWhoseSignedStringsCannotBeFoundIsEncodedCanonically() async throws {
        let fixtures = try SignedFixtures()
        let (verified, json) = try await fixtures.verifier().verifyNotificationKeepingJSON(
            fixtures.signedNotification())
        // JSON that does not hold the notification's signed strings (as if written with escapes).
        var other = json
        other.payload = Array(#"{"notificationType":"DID_RENEW"}"#.utf8)
        let (record, bytes) = try VerifiedNotificationRecord.encoding(verified, json: other)
        let decoded = try JSONDecoder().decode(VerifiedNotificationRecord.self, from: Data(bytes))
        #expect(decoded == record)
        #expect(
            decoded.notification.payload.notificationUUID == verified.payload.notificationUUID,
            "the canonical payload, not the other JSON")
    }
}
