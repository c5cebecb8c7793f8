import AppStoreModels
import Entitlements
import Foundation
import JWSVerification
import TestSupport
import Testing

/// Schema version 2's facts on every event, the new event types' details, late facts and the
/// product→entitlement map.
@Suite struct EventFactsTests {
    typealias T = EntitlementRulesTests

    @Test func everyEventNamesItsEnvironmentAppTransactionAndPurchase() throws {
        var notification = T.notification("DID_RENEW", status: .active, token: "7E3FB20B-4CDB-47CC-936D-99D65F608138")
        notification.payload.data?.appAppleId = 1234
        notification.transaction?.price = 4990
        notification.transaction?.currency = "EUR"
        notification.transaction?.storefront = "DEU"
        notification.transaction?.quantity = 1
        notification.transaction?.subscriptionGroupIdentifier = "g1"
        notification.transaction?.offerType = .introductoryOffer
        notification.transaction?.offerDiscountType = .freeTrial
        notification.renewalInfo?.rawAutoRenewStatus = 1
        notification.renewalInfo?.autoRenewProductId = "pro.yearly"
        notification.renewalInfo?.isInBillingRetryPeriod = false
        let event = try #require(
            EntitlementRules.apply(notification, subject: "sub-1", current: SubjectState(entitlement: T.activeState))
                .events.first)
        let facts = event.facts
        #expect(
            facts.environment == "Sandbox" && facts.bundleId == NotificationTypeTable.bundleId
                && facts.appAppleId == 1234)
        #expect(facts.store == "APP_STORE" && facts.entitlementId == "pro")
        #expect(facts.transactionId == "t-\(T.signed)" && facts.originalTransactionId == "sub-1")
        #expect(
            facts.productType == "Auto-Renewable Subscription" && facts.purchaseDate == T.signed
                && facts.expirationDate == T.expires)
        #expect(facts.price == "4.99" && facts.currency == "EUR" && facts.storefront == "DEU" && facts.quantity == 1)
        #expect(
            facts.periodType == "TRIAL" && facts.subscriptionGroupIdentifier == "g1"
                && facts.ownershipType == "PURCHASED")
        #expect(facts.subscriptionStatus == 1 && facts.isInGracePeriod == false && facts.isInBillingRetry == false)
        #expect(
            facts.autoRenewStatus == 1 && facts.autoRenewProductId == "pro.yearly"
                && facts.gracePeriodExpiresDate == T.grace)
        #expect(!facts.outOfOrder)
        #expect(event.key == "Sandbox/\(NotificationTypeTable.bundleId)/7e3fb20b-4cdb-47cc-936d-99d65f608138")
        // Flat in the JSON, beside the version 1 fields.
        let json =
            try JSONSerialization.jsonObject(with: AppStoreJSON.makeCanonicalEncoder().encode(event)) as! [String: Any]
        #expect(
            json["price"] as? String == "4.99" && json["environment"] as? String == "Sandbox"
                && json["eventId"] as? String == event.eventId)
        #expect(
            try JSONDecoder().decode(EntitlementEvent.self, from: AppStoreJSON.makeCanonicalEncoder().encode(event))
                == event, "round trip")
    }

    @Test func consumablesCarryTheirTransactionToo() throws {
        let event = try #require(
            EntitlementRules.apply(
                T.notification("ONE_TIME_CHARGE", product: .consumable), subject: "sub-1",
                current: SubjectState()
            ).events.first)
        #expect(event.eventType == "consumable.purchased" && event.facts.transactionId == "t-\(T.signed)")
        #expect(event.facts.periodType == nil, "period types are for subscriptions")
    }

    @Test func pricesAreExactDecimalsOfMilliunits() {
        let cases: [Int64: String] = [
            4990: "4.99", 5000: "5", 1: "0.001", 0: "0", 123_456_789: "123456.789", -250: "-0.25",
        ]
        for (milliunits, text) in cases {
            var notification = T.notification("ONE_TIME_CHARGE", product: .nonConsumable)
            notification.transaction?.price = milliunits
            #expect(
                EntitlementRules.apply(notification, subject: "s", current: SubjectState()).events.first?.facts.price
                    == text)
        }
    }

    @Test(arguments: [
        (OfferType?.none, OfferDiscountType?.none, "NORMAL"), (.introductoryOffer, .payAsYouGo, "INTRO"),
        (.promotionalOffer, nil, "PROMOTIONAL"), (.offerCode, nil, "OFFER_CODE"), (.winBackOffer, nil, "WIN_BACK"),
    ])
    func periodTypes(offer: OfferType?, discount: OfferDiscountType?, expected: String) {
        var notification = T.notification("SUBSCRIBED", "INITIAL_BUY")
        notification.transaction?.offerType = offer
        notification.transaction?.offerDiscountType = discount
        #expect(
            EntitlementRules.apply(notification, subject: "s", current: SubjectState()).events.first?.facts.periodType
                == expected)
    }

    @Test func aConsumptionRequestIsDueTwelveHoursLaterWithItsReason() throws {
        var notification = T.notification("CONSUMPTION_REQUEST", product: .consumable)
        notification.payload.data?.rawConsumptionRequestReason = "UNINTENDED_PURCHASE"
        let event = try #require(
            EntitlementRules.apply(notification, subject: "s", current: SubjectState()).events.first)
        #expect(event.stream == .revocations && event.responseDeadline == T.signed + 12 * 3_600_000)
        #expect(
            event.consumptionRequestReason == "UNINTENDED_PURCHASE"
                && event.revocation?.transactionId == "t-\(T.signed)")
    }

    @Test func aMassExtensionSummaryCarriesItsCounts() throws {
        var notification = NotificationTypeTable.notification("RENEWAL_EXTENSION", "SUMMARY", container: "summary")
        notification.payload.summary?.bundleId = "com.example.app"
        notification.payload.summary?.rawEnvironment = "Production"
        notification.payload.summary?.succeededCount = 40
        notification.payload.summary?.failedCount = 2
        notification.payload.summary?.requestIdentifier = "req-1"
        let event = try #require(
            EntitlementRules.apply(notification, subject: "com.example.app:req-1", current: SubjectState()).events.first
        )
        #expect(
            event.eventType == "subscription.mass-extension-completed" && event.customer == EntitlementRules.appCustomer
        )
        #expect(
            event.massExtension?.succeededCount == 40 && event.massExtension?.failedCount == 2
                && event.massExtension?.requestIdentifier == "req-1")
        #expect(event.key == "Production/com.example.app/app")
    }

    @Test func lateNotificationsPublishTheirFactsButNoStateChange() {
        let late = SubjectState(lastSignedDate: T.signed + 1, entitlement: T.activeState)
        let refund = EntitlementRules.apply(
            T.notification("REFUND", product: .nonConsumable, revoked: true), subject: "sub-1", current: late)
        #expect(refund.outcome == .stale && refund.entitlement == nil)
        #expect(
            refund.events.map(\.eventType) == ["revocation.refunded"] && refund.events.allSatisfy(\.facts.outOfOrder))
        let expiry = EntitlementRules.apply(T.notification("EXPIRED", "VOLUNTARY"), subject: "sub-1", current: late)
        #expect(
            expiry.outcome == .stale && expiry.events.isEmpty, "a late expiry moves nothing and reports nothing new")
    }

    @Test func aChangeBetweenProductsOfOneEntitlementIsOneProductChange() throws {
        var monthly = T.activeState
        monthly.productId = "pro.monthly"
        let catalog = EntitlementCatalog(["pro.monthly": "pro-access", "pro": "pro-access"])
        let update = EntitlementRules.apply(
            T.notification("DID_CHANGE_RENEWAL_PREF", "UPGRADE"), subject: "sub-1",
            current: SubjectState(entitlement: monthly), catalog: catalog)
        #expect(update.events.map(\.eventType) == ["entitlement.product-changed"], "not an expiry and a grant")
        let event = try #require(update.events.first)
        #expect(
            event.previousProductId == "pro.monthly" && event.productId == "pro"
                && event.facts.entitlementId == "pro-access")
        #expect(
            update.superseded?.productId == "pro.monthly" && update.superseded?.active == false,
            "the previous product's row still ends")
        #expect(update.entitlement?.entitlementId == "pro-access")
    }

    @Test func theCatalogParsesPairsAndRefusesNonsense() throws {
        let catalog = try EntitlementCatalog(parsing: " a = pro, b=pro ,c=basic")
        #expect(
            catalog.entitlement(of: "a") == "pro" && catalog.entitlement(of: "b") == "pro"
                && catalog.entitlement(of: "zzz") == "zzz")
        #expect(try EntitlementCatalog(parsing: "").entitlements.isEmpty)
        for bad in ["a", "a=", "=b", "a=b,a=c"] {
            #expect(throws: EntitlementCatalogError.self, "\(bad)") { try EntitlementCatalog(parsing: bad) }
        }
    }
}
