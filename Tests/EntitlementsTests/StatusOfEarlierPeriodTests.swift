import AppStoreModels
import Entitlements
import JWSVerification
import PipelineRecords
import TestSupport
import Testing

/// A notification whose `data.status` says active while its transaction is an earlier period (Apple's REFUND of an
/// old period, its CONSUMPTION_REQUEST, a REFUND_REVERSED): the status says the subscription runs, never until when.
/// Found by the local run with REFUNDs as Apple sends them: the REFUND of a subscription's first period arrived before
/// its renewals, was stored active until that period's end (long past, so no access), and the renewals signed before
/// it stayed stale behind it: a paying customer without access.
@Suite struct StatusOfEarlierPeriodTests {
    static let day: Int64 = 86_400_000
    static let period: Int64 = 30 * day
    static let start: Int64 = 1_700_000_000_000
    /// The REFUND of period 0, signed three hours into period 2.
    static let refundSigned = start + 2 * period + 3 * 3_600_000

    /// A notification about period `number` of subscription `sub-1` ([start + n·period, start + (n+1)·period)).
    static func notification(
        _ type: String, period number: Int64, signedDate: Int64, status: Status?, revoked: Bool = false
    ) -> VerifiedNotification {
        var notification = NotificationTypeTable.notification(
            type, status: status, signedDate: signedDate, revoked: revoked)
        notification.transaction?.transactionId = "t-\(number)"
        notification.transaction?.purchaseDate = Timestamp(millisecondsSince1970: start + number * period)
        notification.transaction?.expiresDate = Timestamp(millisecondsSince1970: start + (number + 1) * period)
        return notification
    }

    /// The REFUND of period 0 as Apple sends it: revoked, with the subscription's status (active).
    static let refund = notification("REFUND", period: 0, signedDate: refundSigned, status: .active, revoked: true)

    /// The state DID_RENEW of period `number` leaves, applied alone.
    static func renewed(period number: Int64) throws -> (state: SubjectState, entitlement: EntitlementState) {
        let signed = start + number * period + 60_000
        let update = EntitlementRules.apply(
            notification("DID_RENEW", period: number, signedDate: signed, status: .active), subject: "sub-1",
            current: SubjectState())
        let entitlement = try #require(update.entitlement)
        return (SubjectState(lastSignedDate: signed, entitlement: entitlement), entitlement)
    }

    // MARK: The three orders of arrival

    @Test func aRefundWithActiveStatusArrivingFirstAsksAppleAndLetsTheEarlierRenewalsApply() throws {
        let update = EntitlementRules.apply(Self.refund, subject: "sub-1", current: SubjectState())
        #expect(update.outcome == .awaitingStatus, "\(update.detail)")
        #expect(update.statusRequest?.reason == StatusRequest.Reason.activeStatusOfEarlierPeriod)
        #expect(update.statusRequest?.originalTransactionId == "sub-1")
        #expect(update.entitlement == nil, "nothing is stored until Apple says until when")
        #expect(!update.advancesSubject, "the renewals signed before it must still apply")
        #expect(update.events.map(\.eventType) == ["revocation.refunded"])
        #expect(update.events.first?.revocation?.transactionId == "t-0")

        // The renewals arrive afterwards: none is stale, the newest grants access until its end.
        var state = SubjectState()
        for number: Int64 in 1...2 {
            let signed = Self.start + number * Self.period + 60_000
            let renewal = EntitlementRules.apply(
                Self.notification("DID_RENEW", period: number, signedDate: signed, status: .active), subject: "sub-1",
                current: state)
            #expect(renewal.outcome == .applied)
            state = SubjectState(lastSignedDate: signed, entitlement: renewal.entitlement)
        }
        #expect(state.entitlement?.active == true && state.entitlement?.validUntil == Self.start + 3 * Self.period)
    }

    @Test func aRefundWithActiveStatusAfterANewerRenewalKeepsTheNewerPeriod() throws {
        let (state, stored) = try Self.renewed(period: 2)
        let update = EntitlementRules.apply(Self.refund, subject: "sub-1", current: state)
        #expect(update.outcome == .applied && update.statusRequest == nil, "\(update.detail)")
        #expect(update.entitlement == stored, "the renewal's period stands: active until its end")
        #expect(update.events.map(\.eventType) == ["revocation.refunded"])
    }

    @Test func aRefundWithActiveStatusAfterAnOlderRenewalAsksApple() throws {
        let (state, _) = try Self.renewed(period: 1)
        let update = EntitlementRules.apply(Self.refund, subject: "sub-1", current: state)
        #expect(update.outcome == .awaitingStatus, "period 1 ended before the refund was signed: \(update.detail)")
        #expect(update.statusRequest?.reason == StatusRequest.Reason.activeStatusOfEarlierPeriod)
        #expect(update.entitlement == nil && !update.advancesSubject)
        #expect(update.events.map(\.eventType) == ["revocation.refunded"])
    }

    @Test func theStatusSnapshotThenSettlesAccessUntilTheNewestPeriodsEnd() throws {
        let waiting = EntitlementRules.apply(Self.refund, subject: "sub-1", current: SubjectState())
        let request = try #require(waiting.statusRequest)
        var latest = try #require(
            Self.notification("DID_RENEW", period: 2, signedDate: Self.refundSigned + 1_000, status: .active)
                .transaction)
        latest.signedDate = Timestamp(millisecondsSince1970: Self.refundSigned + 1_000)
        let snapshot = StatusSnapshot(
            requestId: request.requestId, notificationUUID: request.notificationUUID, subject: "sub-1",
            environment: "Sandbox", status: Status.active.rawValue, transaction: latest, renewalInfo: nil,
            signedTransactionInfo: "jws", signedRenewalInfo: nil)
        let update = EntitlementRules.apply(snapshot: snapshot, current: SubjectState())
        #expect(update.entitlement?.active == true && update.entitlement?.validUntil == Self.start + 3 * Self.period)
        #expect(update.events.allSatisfy { $0.stream != .revocations }, "the refund's event was published once, before")
    }

    // MARK: The other types with the same mistake

    @Test func aConsumptionRequestAboutAnEarlierPeriodArrivingFirstAsksApple() {
        let request = Self.notification(
            "CONSUMPTION_REQUEST", period: 0, signedDate: Self.refundSigned - 3_600_000, status: .active)
        let update = EntitlementRules.apply(request, subject: "sub-1", current: SubjectState())
        #expect(update.outcome == .awaitingStatus && update.entitlement == nil && !update.advancesSubject)
        #expect(update.events.map(\.eventType) == ["consumption.requested"])
    }

    @Test func aRefundReversalOfAnEarlierPeriodWithoutStatusKeepsANewerPeriodOrAsksApple() throws {
        let reversal = Self.notification("REFUND_REVERSED", period: 0, signedDate: Self.refundSigned, status: nil)
        let first = EntitlementRules.apply(reversal, subject: "sub-1", current: SubjectState())
        #expect(first.statusRequest?.reason == StatusRequest.Reason.reversalOfEarlierPeriod, "\(first.detail)")
        #expect(first.events.map(\.eventType) == ["revocation.refund-reversed"])
        let (state, stored) = try Self.renewed(period: 2)
        let later = EntitlementRules.apply(reversal, subject: "sub-1", current: state)
        #expect(later.outcome == .applied && later.entitlement == stored)
    }

    @Test func aMigratedSubscriptionFirstSeenThroughAnEarlierPeriodMigratesOnceAndAsksApple() throws {
        var previous = NotificationTypeTable.activeState
        previous.customer = "old-sub"
        previous.originalTransactionId = "old-sub"
        let migration = SubjectMigration(
            previousOriginalTransactionId: "old-sub", customer: "old-sub", previousEntitlement: previous)
        let update = EntitlementRules.apply(
            Self.refund, subject: "sub-1", current: SubjectState(boundCustomer: "old-sub", migration: migration))
        #expect(update.outcome == .awaitingStatus && !update.advancesSubject, "\(update.detail)")
        #expect(update.statusRequest?.reason == StatusRequest.Reason.migrationWithEarlierPeriod)
        #expect(update.events.map(\.eventType) == ["entitlement.migrated", "revocation.refunded"])
    }

    @Test func anExpiredStatusAboutAnEarlierPeriodSettlesWithoutAsking() {
        let refund = Self.notification(
            "REFUND", period: 0, signedDate: Self.refundSigned, status: .expired, revoked: true)
        let update = EntitlementRules.apply(refund, subject: "sub-1", current: SubjectState())
        #expect(update.outcome == .applied && update.statusRequest == nil)
        #expect(update.entitlement?.active == false, "an expired subscription has no access, whatever the period")
    }

    @Test func anActiveStatusWithThePeriodInForceSettlesAsBefore() {
        let renewal = Self.notification("DID_RENEW", period: 2, signedDate: Self.refundSigned, status: .active)
        let update = EntitlementRules.apply(renewal, subject: "sub-1", current: SubjectState())
        #expect(update.outcome == .applied && update.statusRequest == nil)
        #expect(update.entitlement?.active == true && update.entitlement?.validUntil == Self.start + 3 * Self.period)
    }
}
