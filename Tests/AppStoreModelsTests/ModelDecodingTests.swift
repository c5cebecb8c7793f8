import AppStoreModels
import Foundation
import TestSupport
import Testing

/// Decoding of every signed payload kind in Apple's model fixtures, including the newest fields.
@Suite struct ModelDecodingTests {
    func decode<T: Decodable>(_ type: T.Type, _ name: String) throws -> T {
        try AppStoreJSON.makeDecoder().decode(type, from: Data(Fixtures.bytes("apple/models/\(name).json")))
    }

    @Test func notification() throws {
        let payload = try decode(ResponseBodyV2DecodedPayload.self, "signedNotification")
        #expect(payload.notificationType == .subscribed)
        #expect(payload.subtype == .initialBuy)
        #expect(payload.notificationUUID == "002e14d5-51f5-4503-b5a8-c3a1af68eb20")
        #expect(payload.version == "2.0")
        #expect(payload.signedDate == Timestamp(millisecondsSince1970: 1_698_148_900_000))
        let data = try #require(payload.data)
        #expect(data.environment == .localTesting)
        #expect(data.appAppleId == 41234)
        #expect(data.bundleId == "com.example")
        #expect(data.bundleVersion == "1.2.3")
        #expect(data.signedTransactionInfo == "signed_transaction_info_value")
        #expect(data.signedRenewalInfo == "signed_renewal_info_value")
        #expect(data.status == .active)
        #expect(payload.containerCount == 1)
    }

    @Test func consumptionRequest() throws {
        let payload = try decode(ResponseBodyV2DecodedPayload.self, "signedConsumptionRequestNotification")
        #expect(payload.notificationType == .consumptionRequest)
        #expect(payload.subtype == nil && payload.rawSubtype == nil)
        #expect(payload.data?.consumptionRequestReason == .unintendedPurchase)
    }

    @Test func summary() throws {
        let payload = try decode(ResponseBodyV2DecodedPayload.self, "signedSummaryNotification")
        #expect(payload.notificationType == .renewalExtension)
        #expect(payload.subtype == .summary)
        let summary = try #require(payload.summary)
        #expect(summary.environment == .localTesting)
        #expect(summary.appAppleId == 41234)
        #expect(summary.bundleId == "com.example")
        #expect(summary.productId == "com.example.product")
        #expect(summary.requestIdentifier == "efb27071-45a4-4aca-9854-2a1e9146f265")
        #expect(summary.storefrontCountryCodes == ["CAN", "USA", "MEX"])
        #expect(summary.succeededCount == 5)
        #expect(summary.failedCount == 2)
        #expect(payload.rawEnvironment == "LocalTesting")
    }

    @Test func externalPurchaseToken() throws {
        let payload = try decode(ResponseBodyV2DecodedPayload.self, "signedExternalPurchaseTokenNotification")
        #expect(payload.notificationType == .externalPurchaseToken)
        #expect(payload.subtype == .unreported)
        let token = try #require(payload.externalPurchaseToken)
        #expect(token.externalPurchaseId == "b2158121-7af9-49d4-9561-1f588205523e")
        #expect(token.tokenCreationDate?.millisecondsSince1970 == 1_698_148_950_000)
        #expect(token.appAppleId == 55555)
        #expect(token.bundleId == "com.example")
        #expect(payload.rawEnvironment == "Production")
        let sandbox = try decode(ResponseBodyV2DecodedPayload.self, "signedExternalPurchaseTokenSandboxNotification")
        #expect(sandbox.rawEnvironment == "Sandbox")
    }

    @Test func rescindConsentWithAppData() throws {
        let payload = try decode(ResponseBodyV2DecodedPayload.self, "signedRescindConsentNotification")
        #expect(payload.notificationType == .rescindConsent)
        let appData = try #require(payload.appData)
        #expect(appData.appAppleId == 41234)
        #expect(appData.bundleId == "com.example")
        #expect(appData.environment == .localTesting)
        #expect(appData.signedAppTransactionInfo == "signed_app_transaction_info_value")
        #expect(payload.bundleId == "com.example" && payload.appAppleId == 41234)
    }

    @Test func transactionWithEveryField() throws {
        let t = try decode(JWSTransactionDecodedPayload.self, "signedTransaction")
        #expect(t.transactionId == "23456" && t.originalTransactionId == "12345")
        #expect(t.webOrderLineItemId == "34343" && t.bundleId == "com.example")
        #expect(t.productId == "com.example.product" && t.subscriptionGroupIdentifier == "55555")
        #expect(t.purchaseDate?.millisecondsSince1970 == 1_698_148_900_000)
        #expect(t.originalPurchaseDate?.millisecondsSince1970 == 1_698_148_800_000)
        #expect(t.expiresDate?.millisecondsSince1970 == 1_698_149_000_000)
        #expect(t.quantity == 1 && t.type == .autoRenewableSubscription)
        #expect(t.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(t.inAppOwnershipType == .purchased)
        #expect(t.revocationReason == .refundedDueToIssue)
        #expect(t.revocationDate?.millisecondsSince1970 == 1_698_148_950_000)
        #expect(t.isUpgraded == true && t.offerType == .introductoryOffer && t.offerIdentifier == "abc.123")
        #expect(t.environment == .localTesting && t.transactionReason == .purchase)
        #expect(t.storefront == "USA" && t.storefrontId == "143441")
        #expect(t.price == 10990 && t.currency == "USD" && t.offerDiscountType == .payAsYouGo)
        #expect(t.appTransactionId == "71134" && t.offerPeriod == "P1Y")
        #expect(t.billingPlanType == .monthly)
        #expect(t.commitmentInfo?.billingPeriodNumber == 3)
        #expect(t.commitmentInfo?.commitmentExpiresDate?.millisecondsSince1970 == 1_698_150_000_000)
        #expect(t.commitmentInfo?.commitmentPrice == 119_880)
        #expect(t.commitmentInfo?.totalBillingPeriods == 12)
        guard case .object(let info)? = t.advancedCommerceInfo else {
            Issue.record("advancedCommerceInfo is not an object")
            return
        }
        #expect(info["estimatedTax"] == .integer(1500))
        #expect(info["taxRate"] == .string("0.15"))
    }

    @Test func transactionWithRevocation() throws {
        let t = try decode(JWSTransactionDecodedPayload.self, "signedTransactionWithRevocation")
        #expect(t.revocationType == .refundProrated)
        #expect(t.revocationPercentage == 50000)
    }

    @Test func renewalInfoWithEveryField() throws {
        let r = try decode(JWSRenewalInfoDecodedPayload.self, "signedRenewalInfo")
        #expect(r.expirationIntent == .customerCancelled)
        #expect(r.originalTransactionId == "12345" && r.autoRenewProductId == "com.example.product.2")
        #expect(r.productId == "com.example.product" && r.autoRenewStatus == .on)
        #expect(r.isInBillingRetryPeriod == true && r.priceIncreaseStatus == .customerHasNotResponded)
        #expect(r.gracePeriodExpiresDate?.millisecondsSince1970 == 1_698_148_900_000)
        #expect(r.offerType == .promotionalOffer && r.offerIdentifier == "abc.123")
        #expect(r.signedDate?.millisecondsSince1970 == 1_698_148_800_000 && r.environment == .localTesting)
        #expect(r.recentSubscriptionStartDate?.millisecondsSince1970 == 1_698_148_800_000)
        #expect(r.renewalDate?.millisecondsSince1970 == 1_698_148_850_000)
        #expect(r.renewalPrice == 9990 && r.currency == "USD" && r.offerDiscountType == .payAsYouGo)
        #expect(r.eligibleWinBackOfferIds == ["eligible1", "eligible2"])
        #expect(r.appTransactionId == "71134" && r.offerPeriod == "P1Y")
        #expect(r.appAccountToken == "7e3fb20b-4cdb-47cc-936d-99d65f608138")
        #expect(r.commitmentInfo?.commitmentAutoRenewProductId == "com.example.product.commitment")
        #expect(r.commitmentInfo?.commitmentAutoRenewStatus == .on)
        #expect(r.commitmentInfo?.commitmentRenewalBillingPlanType == .monthly)
        #expect(r.commitmentInfo?.commitmentRenewalDate?.millisecondsSince1970 == 1_698_149_500_000)
        #expect(r.commitmentInfo?.commitmentRenewalPrice == 9990)
        #expect(r.renewalBillingPlanType == .monthly)
        #expect(r.advancedCommerceInfo != nil)
    }

    @Test func appTransaction() throws {
        let a = try decode(AppTransaction.self, "appTransaction")
        #expect(a.receiptType == .localTesting && a.appAppleId == 531412 && a.bundleId == "com.example")
        #expect(a.applicationVersion == "1.2.3" && a.versionExternalIdentifier == 512)
        #expect(a.receiptCreationDate?.millisecondsSince1970 == 1_698_148_900_000)
        #expect(a.originalPurchaseDate?.millisecondsSince1970 == 1_698_148_800_000)
        #expect(a.originalApplicationVersion == "1.1.2")
        #expect(a.deviceVerification == "device_verification_value")
        #expect(a.deviceVerificationNonce == "48ccfa42-7431-4f22-9908-7e88983e105a")
        #expect(a.preorderDate?.millisecondsSince1970 == 1_698_148_700_000)
        #expect(a.appTransactionId == "71134" && a.originalPlatform == .iOS)
    }

    @Test func legacyReceiptTransactionId() throws {
        #expect(
            LegacyReceipt.transactionId(fromBase64: try Fixtures.text("apple/mock_signed_data/legacyTransaction"))
                == "33993399")
        #expect(LegacyReceipt.transactionId(fromBase64: "not a receipt") == nil)
    }
}

/// Transaction identifiers from PKCS#7 app receipts (Xcode's StoreKit-testing receipts).
@Suite struct AppReceiptTests {
    @Test func aReceiptWithAPurchaseYieldsItsTransactionId() throws {
        #expect(
            AppReceipt.transactionIds(fromBase64: try Fixtures.text("apple/xcode/xcode-app-receipt-with-transaction"))
                == ["0"])
    }

    @Test func aReceiptWithoutPurchasesYieldsNone() throws {
        #expect(AppReceipt.transactionIds(fromBase64: try Fixtures.text("apple/xcode/xcode-app-receipt-empty")) == [])
    }

    @Test func anythingElseIsNotAReceipt() throws {
        #expect(AppReceipt.transactionIds(fromBase64: "not base64 at all") == nil)
        #expect(
            AppReceipt.transactionIds(fromBase64: try Fixtures.text("apple/mock_signed_data/legacyTransaction")) == nil)
        let receipt = Array(Data(base64Encoded: try Fixtures.text("apple/xcode/xcode-app-receipt-with-transaction"))!)
        for length in stride(from: 0, to: receipt.count, by: 7) {  // every truncation is refused, never a crash
            #expect(AppReceipt.transactionIds(fromBase64: Data(receipt.prefix(length)).base64EncodedString()) == nil)
        }
    }
}
