import AppStoreModels
import Entitlements
import Foundation
import JWSVerification
import Testing

/// The details the table does not show: ordering, identities, dates, revocations and status requests.
@Suite struct EntitlementRulesDetailTests {
    typealias T = EntitlementRulesTests

    @Test func anOlderNotificationIsStaleAndChangesNothing() {
        let old = T.notification("EXPIRED", signedDate: T.signed - 1)
        let update = EntitlementRules.apply(
            old, subject: "sub-1", current: SubjectState(lastSignedDate: T.signed, entitlement: T.activeState))
        #expect(update.outcome == .stale)
        #expect(update.entitlement == nil && update.events.isEmpty && !update.advancesSubject)
        let same = EntitlementRules.apply(
            T.notification("DID_RENEW"), subject: "sub-1", current: SubjectState(lastSignedDate: T.signed))
        #expect(same.outcome == .applied && same.advancesSubject, "an equal signedDate is not older")
    }

    /// Found by the local run: a lifetime purchase refunded, then reversed; the customer asks for a refund again
    /// (CONSUMPTION_REQUEST, signed last, its transaction not revoked) and it is applied before the reversal arrives.
    /// The request's transaction is Apple's newest word, so it settles access: the late reversal is stale but the
    /// purchase stays active, as at Apple.
    @Test func aLaterNotificationAboutAOneTimePurchaseSettlesItByItsTransaction() throws {
        let refunded = EntitlementRules.apply(
            T.notification("REFUND", product: .nonConsumable, signedDate: T.signed, revoked: true), subject: "sub-1",
            current: SubjectState(lastSignedDate: T.signed - 10, entitlement: nil))
        let revokedState = try #require(refunded.entitlement)
        #expect(!revokedState.active)
        let request = EntitlementRules.apply(
            T.notification("CONSUMPTION_REQUEST", product: .nonConsumable, signedDate: T.signed + 20), subject: "sub-1",
            current: SubjectState(lastSignedDate: T.signed, entitlement: revokedState))
        #expect(request.entitlement?.active == true && request.entitlement?.revokedAt == nil, "\(request.detail)")
        #expect(request.events.map(\.eventType).contains("consumption.requested"))
        let reversal = EntitlementRules.apply(
            T.notification("REFUND_REVERSED", product: .nonConsumable, signedDate: T.signed + 10), subject: "sub-1",
            current: SubjectState(lastSignedDate: T.signed + 20, entitlement: request.entitlement))
        #expect(
            reversal.outcome == .stale && reversal.entitlement == nil,
            "the late reversal changes nothing; access already stands")
        let declined = EntitlementRules.apply(
            T.notification("REFUND_DECLINED", product: .nonConsumable, signedDate: T.signed + 30, revoked: true),
            subject: "sub-1", current: SubjectState(lastSignedDate: T.signed + 20, entitlement: request.entitlement))
        #expect(declined.entitlement?.active == false, "a transaction signed revoked settles it revoked")
    }

    @Test func theCustomerIsAValidAppAccountTokenElseTheOriginalTransaction() {
        let token = "7E3FB20B-4CDB-47CC-936D-99D65F608138"
        #expect(
            EntitlementRules.apply(
                T.notification("SUBSCRIBED", token: token), subject: "sub-1", current: SubjectState()
            )
            .entitlement?.customer == token.lowercased())
        for junk in [nil, "not-a-uuid", "00000000-0000-0000-0000-000000000000"] {
            #expect(
                EntitlementRules.apply(
                    T.notification("SUBSCRIBED", token: junk), subject: "sub-1", current: SubjectState()
                )
                .entitlement?.customer == "sub-1")
        }
    }

    @Test func eventIdsAreStableAcrossReapplication() {
        let notification = T.notification("REFUND", status: .revoked, revoked: true)
        let first = EntitlementRules.apply(
            notification, subject: "sub-1", current: SubjectState(entitlement: T.activeState))
        let again = EntitlementRules.apply(
            notification, subject: "sub-1", current: SubjectState(entitlement: T.activeState))
        #expect(first.events.map(\.eventId) == again.events.map(\.eventId))
        #expect(first.events.allSatisfy { UUID(uuidString: $0.eventId) != nil })
    }

    @Test func aGracePeriodKeepsAccessUntilItsEnd() {
        let update = EntitlementRules.apply(
            T.notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD"), subject: "sub-1",
            current: SubjectState(entitlement: T.activeState))
        #expect(update.entitlement?.active == true)
        #expect(update.entitlement?.validUntil == T.grace)
    }

    @Test func aRevokedEntitlementCarriesTheRevocation() throws {
        let update = EntitlementRules.apply(
            T.notification("REFUND", status: .revoked, revoked: true), subject: "sub-1",
            current: SubjectState(entitlement: T.activeState))
        let state = try #require(update.entitlement)
        #expect(state.revokedAt == T.signed && state.revocationReason == 1 && state.revocationType == "REFUND_FULL")
        let revocation = try #require(update.events.first { $0.stream == .revocations }?.revocation)
        #expect(revocation.transactionId == "t-\(T.signed)")
        #expect(revocation.periodStart == T.signed && revocation.periodEnd == T.expires)
    }

    @Test func anAmbiguousRefundAsksForTheStatusOnceAndKeepsTheState() throws {
        let notification = T.notification("REFUND", revoked: true)
        let update = EntitlementRules.apply(
            notification, subject: "sub-1", current: SubjectState(entitlement: T.activeState))
        let request = try #require(update.statusRequest)
        #expect(request.originalTransactionId == "sub-1" && request.environment == "Sandbox")
        #expect(
            request.requestId
                == EntitlementRules.apply(notification, subject: "sub-1", current: SubjectState()).statusRequest?
                .requestId)
        #expect(update.entitlement == nil && !update.advancesSubject, "the state waits for the status snapshot")
    }

    @Test func anExpiredTransactionFirstSeenByANoChangeTypeIsInactive() {
        let update = EntitlementRules.apply(
            T.notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED", signedDate: T.expires + 1),
            subject: "sub-1", current: SubjectState())
        #expect(update.entitlement?.active == false)
    }
}

/// A subscription that moves to another product (upgrade, crossgrade) ends the previous product's access.
@Suite struct ProductChangeTests {
    typealias T = EntitlementRulesTests

    @Test func anUpgradeEndsThePreviousProductAndGrantsTheNewOne() throws {
        var previous = T.activeState
        previous.productId = "basic"
        let update = EntitlementRules.apply(
            T.notification("DID_CHANGE_RENEWAL_PREF", "UPGRADE"), subject: "sub-1",
            current: SubjectState(entitlement: previous))
        let superseded = try #require(update.superseded)
        #expect(superseded.productId == "basic" && !superseded.active && superseded.validUntil == T.signed)
        #expect(update.entitlement?.productId == "pro" && update.entitlement?.active == true)
        #expect(
            update.events.map { "\($0.eventType) \($0.productId)" } == [
                "entitlement.expired basic", "entitlement.granted pro",
            ])
    }

    @Test func aChangeFromAnInactiveProductSupersedesNothing() {
        var previous = T.activeState
        previous.productId = "basic"
        previous.active = false
        let update = EntitlementRules.apply(
            T.notification("SUBSCRIBED", "RESUBSCRIBE"), subject: "sub-1",
            current: SubjectState(entitlement: previous))
        #expect(update.superseded == nil)
        #expect(update.events.map(\.eventType) == ["entitlement.granted"])
    }
}
