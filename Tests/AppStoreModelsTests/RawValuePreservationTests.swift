import AppStoreModels
import Foundation
import TestSupport
import Testing

/// Values Apple adds later decode, stay available raw, and re-encode unchanged; every fixture round-trips.
@Suite struct RawValuePreservationTests {
    let decoder = AppStoreJSON.makeDecoder()
    let encoder = AppStoreJSON.makeCanonicalEncoder()

    /// Decodes, encodes and decodes again, and compares the JSON objects (not the bytes: key order differs).
    func roundTrip<T: Codable & Equatable>(_ type: T.Type, _ json: Data) throws {
        let first = try decoder.decode(type, from: json)
        let encoded = try encoder.encode(first)
        #expect(try decoder.decode(type, from: encoded) == first)
        let original = try JSONSerialization.jsonObject(with: json) as! NSDictionary
        let reencoded = try JSONSerialization.jsonObject(with: encoded) as! NSDictionary
        #expect(original == reencoded)
    }

    @Test(arguments: [
        "signedNotification", "signedConsumptionRequestNotification", "signedSummaryNotification",
        "signedExternalPurchaseTokenNotification", "signedExternalPurchaseTokenSandboxNotification",
        "signedRescindConsentNotification",
    ])
    func notificationFixturesRoundTrip(name: String) throws {
        try roundTrip(ResponseBodyV2DecodedPayload.self, Data(Fixtures.bytes("apple/models/\(name).json")))
    }

    @Test func transactionRenewalAndAppTransactionFixturesRoundTrip() throws {
        try roundTrip(JWSTransactionDecodedPayload.self, Data(Fixtures.bytes("apple/models/signedTransaction.json")))
        try roundTrip(
            JWSTransactionDecodedPayload.self, Data(Fixtures.bytes("apple/models/signedTransactionWithRevocation.json"))
        )
        try roundTrip(JWSRenewalInfoDecodedPayload.self, Data(Fixtures.bytes("apple/models/signedRenewalInfo.json")))
        try roundTrip(AppTransaction.self, Data(Fixtures.bytes("apple/models/appTransaction.json")))
    }

    @Test func unknownEnumValuesAreKeptRawAndReencoded() throws {
        let json = Data(
            """
            {"notificationType":"FUTURE_TYPE","subtype":"FUTURE_SUBTYPE","notificationUUID":"u","version":"2.0",
             "signedDate":1,"data":{"environment":"Staging","status":9,"consumptionRequestReason":"NEW_REASON",
             "bundleId":"b","appAppleId":1}}
            """.utf8)
        let payload = try decoder.decode(ResponseBodyV2DecodedPayload.self, from: json)
        #expect(payload.notificationType == nil && payload.rawNotificationType == "FUTURE_TYPE")
        #expect(payload.subtype == nil && payload.rawSubtype == "FUTURE_SUBTYPE")
        #expect(payload.data?.environment == nil && payload.data?.rawEnvironment == "Staging")
        #expect(payload.data?.status == nil && payload.data?.rawStatus == 9)
        #expect(payload.data?.rawConsumptionRequestReason == "NEW_REASON")
        try roundTrip(ResponseBodyV2DecodedPayload.self, json)
    }

    @Test func newestValuesAreTyped() throws {
        let json = Data(
            """
            {"inAppOwnershipType":"ASSIGNED","revocationType":"FAMILY_REVOKE","offerDiscountType":"ONE_TIME",
             "billingPlanType":"BILLED_UPFRONT","previousOriginalTransactionId":"7","offerType":4}
            """.utf8)
        let transaction = try decoder.decode(JWSTransactionDecodedPayload.self, from: json)
        #expect(transaction.inAppOwnershipType == .assigned)
        #expect(transaction.revocationType == .familyRevoke)
        #expect(transaction.offerDiscountType == .oneTime)
        #expect(transaction.billingPlanType == .billedUpfront)
        #expect(transaction.previousOriginalTransactionId == "7")
        #expect(transaction.offerType == .winBackOffer)
        for raw in ["CREATED", "ACTIVE_TOKEN_REMINDER", "UNREPORTED"] {
            #expect(Subtype(rawValue: raw) != nil)
        }
        #expect(NotificationTypeV2.allCases.count == 23)
    }

    @Test func typedSettersWriteTheRawValue() {
        var transaction = JWSTransactionDecodedPayload()
        transaction.revocationReason = .refundedForOtherReason
        transaction.inAppOwnershipType = .familyShared
        #expect(transaction.rawRevocationReason == 0)
        #expect(transaction.rawInAppOwnershipType == "FAMILY_SHARED")
        transaction.inAppOwnershipType = nil
        #expect(transaction.rawInAppOwnershipType == nil)
    }

    @Test func fractionalXcodeMillisecondsDecodeToWholeMilliseconds() throws {
        let transaction = try decoder.decode(
            JWSTransactionDecodedPayload.self, from: Data(#"{"signedDate":1697679936056.485}"#.utf8))
        #expect(transaction.signedDate?.millisecondsSince1970 == 1_697_679_936_056)
        #expect(throws: DecodingError.self) {
            try decoder.decode(JWSTransactionDecodedPayload.self, from: Data(#"{"signedDate":"soon"}"#.utf8))
        }
    }
}
