import AppStoreModels
import Entitlements
import JWSVerification
import TestSupport
import Testing

/// Every notification type and subtype of appstore-facts §1.1: the entitlement it leaves and the events it emits.
@Suite struct EntitlementRulesTests {
    typealias Row = NotificationTypeTable.Row
    static let rows = NotificationTypeTable.rows
    static let signed = NotificationTypeTable.signed
    static let expires = NotificationTypeTable.expires
    static let grace = NotificationTypeTable.grace
    static let activeState = NotificationTypeTable.activeState
    static func notification(
        _ type: String, _ subtype: String? = nil, status: Status? = nil,
        product: ProductType = .autoRenewableSubscription,
        ownership: InAppOwnershipType = .purchased, signedDate: Int64 = NotificationTypeTable.signed,
        revoked: Bool = false,
        token: String? = nil
    ) -> VerifiedNotification {
        NotificationTypeTable.notification(
            type, subtype, status: status, product: product, ownership: ownership,
            signedDate: signedDate, revoked: revoked, token: token)
    }

    @Test(arguments: rows)
    func everyTypeAndSubtype(row: Row) {
        let update = EntitlementRules.apply(
            row.notification, subject: "sub-1", current: SubjectState(lastSignedDate: nil, entitlement: row.current))
        #expect(update.outcome == row.outcome, "\(update.detail)")
        #expect(update.entitlement?.active == row.active)
        #expect(update.events.map(\.eventType) == row.events)
        #expect(Set(update.events.map(\.eventId)).count == update.events.count, "event ids are distinct")
        #expect(
            update.events.allSatisfy {
                $0.cause.notificationUUID == row.notification.payload.notificationUUID && $0.schemaVersion == 2
            })
        #expect((update.statusRequest != nil) == (row.outcome == .awaitingStatus))
    }
}
