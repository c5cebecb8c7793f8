import AppStoreModels
import Entitlements
import Foundation
import JWSVerification
import PipelineRecords
import TestSupport
import Testing

/// A purchase the app posted, as the rules see it: it grants from the transaction when nothing newer is
/// known, keeps what a newer notification or period left, never advances the subscription, and moves the
/// rows to the bound app user with one `entitlement.customer-changed`.
@Suite struct AppPurchaseRulesTests {
    /// A posted purchase of the table's transaction, signed `signedDate`, for `user`.
    static func posted(
        signedDate: Int64 = NotificationTypeTable.signed, product: ProductType = .autoRenewableSubscription,
        revoked: Bool = false, user: String = "user-1"
    ) -> AppPurchaseRecord {
        let notification = NotificationTypeTable.notification(
            "SUBSCRIBED", product: product, signedDate: signedDate, revoked: revoked)
        return AppPurchaseRecord(
            requestId: "r", appUserId: user, onConflict: .refuse, source: .signedTransaction, environment: "Sandbox",
            transaction: notification.transaction!, signedTransactionInfo: "s")
    }

    @Test func nothingKnownYetGrantsFromTheTransactionToTheBoundUser() {
        let update = EntitlementRules.apply(appPurchase: Self.posted(), current: SubjectState(boundCustomer: "user-1"))
        #expect(
            update.outcome == .applied && update.entitlement?.customer == "user-1" && update.entitlement?.active == true
        )
        #expect(update.entitlement?.validUntil == NotificationTypeTable.expires)
        #expect(
            update.events.map(\.eventType) == ["entitlement.granted"] && !update.advancesSubject,
            "notifications stay the authority")
    }

    @Test func aRevokedTransactionIsRevokedAndAConsumableGrantsNothing() {
        #expect(
            EntitlementRules.apply(
                appPurchase: Self.posted(revoked: true), current: SubjectState(boundCustomer: "user-1")
            )
            .entitlement?.revokedAt != nil)
        let consumable = EntitlementRules.apply(
            appPurchase: Self.posted(product: .consumable), current: SubjectState(boundCustomer: "user-1"))
        #expect(consumable.entitlement == nil && consumable.events.isEmpty)
    }

    @Test func aPostOlderThanTheSubscriptionsStateKeepsItButMovesItToTheUser() {
        var stored = NotificationTypeTable.activeState
        stored.validUntil = NotificationTypeTable.expires + 30 * 86_400_000
        let current = SubjectState(
            lastSignedDate: NotificationTypeTable.signed + 1, entitlement: stored, boundCustomer: "user-1")
        let update = EntitlementRules.apply(appPurchase: Self.posted(), current: current)
        #expect(update.entitlement?.validUntil == stored.validUntil, "the newer renewal stands")
        #expect(update.entitlement?.customer == "user-1" && update.movedFrom == stored.customer)
        #expect(update.events.map(\.eventType) == ["entitlement.customer-changed"])
        #expect(update.events.first?.previousCustomer == stored.customer)
    }
}
