public import AppStoreModels
public import Entitlements
public import JWSVerification

/// Every notification type and subtype of appstore-facts §1.1 with the entitlement and events it must
/// produce: the table the rules tests and the database tests both run.
public enum NotificationTypeTable {
    public static let signed: Int64 = 1_700_000_000_000
    public static let expires: Int64 = signed + 30 * 86_400_000
    public static let grace: Int64 = signed + 16 * 86_400_000
    public static let bundleId = "com.example.app"

    /// A verified notification for subscription `sub-1` (or a product of another kind).
    public static func notification(
        _ type: String, _ subtype: String? = nil, status: Status? = nil,
        product: ProductType = .autoRenewableSubscription,
        ownership: InAppOwnershipType = .purchased, signedDate: Int64 = signed, revoked: Bool = false,
        token: String? = nil,
        container: String = "data"
    ) -> VerifiedNotification {
        var payload = ResponseBodyV2DecodedPayload()
        payload.rawNotificationType = type
        payload.rawSubtype = subtype
        payload.notificationUUID = "uuid-\(type)-\(subtype ?? "none")-\(signedDate)"
        payload.signedDate = Timestamp(millisecondsSince1970: signedDate)
        guard container == "data" else {
            switch container {
            case "data-without-transaction": payload.data = NotificationData()
            case "summary": payload.summary = Summary()
            case "externalPurchaseToken": payload.externalPurchaseToken = ExternalPurchaseToken()
            default: payload.appData = AppData()
            }
            return VerifiedNotification(signedPayload: "jws", payload: payload)
        }
        var data = NotificationData()
        data.environment = .sandbox
        data.bundleId = bundleId
        data.status = status
        payload.data = data
        var transaction = JWSTransactionDecodedPayload()
        transaction.transactionId = "t-\(signedDate)"
        transaction.originalTransactionId = "sub-1"
        transaction.productId = "pro"
        transaction.bundleId = bundleId
        transaction.type = product
        transaction.inAppOwnershipType = ownership
        transaction.environment = .sandbox
        transaction.purchaseDate = Timestamp(millisecondsSince1970: signedDate)
        transaction.expiresDate =
            product == .autoRenewableSubscription ? Timestamp(millisecondsSince1970: expires) : nil
        transaction.appAccountToken = token
        if revoked {
            transaction.revocationDate = Timestamp(millisecondsSince1970: signedDate)
            transaction.revocationReason = .refundedDueToIssue
            transaction.revocationType = type == "REVOKE" ? .familyRevoke : .refundFull
        }
        var renewal = JWSRenewalInfoDecodedPayload()
        renewal.originalTransactionId = "sub-1"
        renewal.gracePeriodExpiresDate = Timestamp(millisecondsSince1970: grace)
        return VerifiedNotification(
            signedPayload: "jws", payload: payload, transaction: transaction, renewalInfo: renewal)
    }

    public static let activeState = EntitlementState(
        customer: "sub-1", productId: "pro", active: true, originalTransactionId: "sub-1", sourceTransactionId: "t-0",
        ownershipType: "PURCHASED", validFrom: signed - 1000, validUntil: expires)
    public static let inactiveState: EntitlementState = {
        var state = activeState
        state.active = false
        return state
    }()

    /// One row: the notification, the stored entitlement, and what must come out.
    public struct Row: Sendable, CustomStringConvertible {
        public var notification: VerifiedNotification
        public var current: EntitlementState?
        public var outcome: EntitlementUpdate.Outcome
        /// The active flag stored afterwards (nil: no entitlement written).
        public var active: Bool?
        public var events: [String]
        public var description: String {
            "\(notification.payload.rawNotificationType ?? "")/\(notification.payload.rawSubtype ?? "-")"
                + (current.map { " from \($0.active ? "active" : "inactive")" } ?? "")
        }
    }

    public static let rows: [Row] = [
        Row(
            notification: notification("SUBSCRIBED", "INITIAL_BUY"), current: nil, outcome: .applied, active: true,
            events: ["entitlement.granted"]),
        Row(
            notification: notification("SUBSCRIBED", "RESUBSCRIBE"), current: inactiveState, outcome: .applied,
            active: true, events: ["entitlement.granted"]),
        Row(
            notification: notification("DID_RENEW"), current: activeState, outcome: .applied, active: true,
            events: ["entitlement.updated"]),
        Row(
            notification: notification("DID_RENEW", "BILLING_RECOVERY"), current: inactiveState, outcome: .applied,
            active: true, events: ["entitlement.granted"]),
        Row(
            notification: notification("DID_CHANGE_RENEWAL_PREF", "UPGRADE"), current: inactiveState, outcome: .applied,
            active: true, events: ["entitlement.granted"]),
        Row(
            notification: notification("DID_CHANGE_RENEWAL_PREF", "DOWNGRADE"), current: activeState, outcome: .applied,
            active: true, events: ["subscription.product-change-scheduled"]),
        Row(
            notification: notification("DID_CHANGE_RENEWAL_PREF"), current: activeState, outcome: .applied,
            active: true, events: ["subscription.product-change-cancelled"]),
        Row(
            notification: notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_DISABLED"), current: activeState,
            outcome: .applied, active: true, events: ["subscription.auto-renew-disabled"]),
        Row(
            notification: notification("DID_CHANGE_RENEWAL_STATUS", "AUTO_RENEW_ENABLED"), current: inactiveState,
            outcome: .applied, active: false, events: ["subscription.auto-renew-enabled"]),
        Row(
            notification: notification("OFFER_REDEEMED", "UPGRADE"), current: activeState, outcome: .applied,
            active: true, events: ["entitlement.updated"]),
        Row(
            notification: notification("OFFER_REDEEMED", "DOWNGRADE"), current: nil, outcome: .applied, active: true,
            events: ["entitlement.granted", "subscription.product-change-scheduled"]),
        Row(
            notification: notification("OFFER_REDEEMED"), current: nil, outcome: .applied, active: true,
            events: ["entitlement.granted"]),
        Row(
            notification: notification("DID_FAIL_TO_RENEW", "GRACE_PERIOD"), current: activeState, outcome: .applied,
            active: true,
            events: ["entitlement.updated", "subscription.billing-issue"]),
        Row(
            notification: notification("DID_FAIL_TO_RENEW"), current: activeState, outcome: .applied, active: false,
            events: ["entitlement.expired", "subscription.billing-issue"]),
        Row(
            notification: notification("GRACE_PERIOD_EXPIRED"), current: activeState, outcome: .applied, active: false,
            events: ["entitlement.expired"]),
        Row(
            notification: notification("EXPIRED", "VOLUNTARY"), current: activeState, outcome: .applied, active: false,
            events: ["entitlement.expired"]),
        Row(
            notification: notification("EXPIRED", "BILLING_RETRY"), current: activeState, outcome: .applied,
            active: false, events: ["entitlement.expired"]),
        Row(
            notification: notification("EXPIRED", "PRICE_INCREASE"), current: activeState, outcome: .applied,
            active: false, events: ["entitlement.expired"]),
        Row(
            notification: notification("EXPIRED", "PRODUCT_NOT_FOR_SALE"), current: activeState, outcome: .applied,
            active: false, events: ["entitlement.expired"]),
        Row(
            notification: notification("EXPIRED"), current: activeState, outcome: .applied, active: false,
            events: ["entitlement.expired"]),
        Row(
            notification: notification("PRICE_INCREASE", "PENDING"), current: activeState, outcome: .applied,
            active: true, events: ["subscription.price-increase-pending"]),
        Row(
            notification: notification("PRICE_INCREASE", "ACCEPTED"), current: nil, outcome: .applied, active: true,
            events: ["entitlement.granted", "subscription.price-increase-accepted"]),
        Row(
            notification: notification("REFUND", revoked: true), current: activeState, outcome: .awaitingStatus,
            active: nil, events: ["revocation.refunded"]),
        Row(
            notification: notification("REFUND", status: .revoked, revoked: true), current: activeState,
            outcome: .applied, active: false,
            events: ["entitlement.revoked", "revocation.refunded"]),
        Row(
            notification: notification("REFUND", status: .active, revoked: true), current: activeState,
            outcome: .applied, active: true,
            events: ["revocation.refunded"]),
        // The revocation is the first thing known of the purchase (its earlier notifications come later, stale).
        Row(
            notification: notification("REFUND", status: .revoked, revoked: true), current: nil, outcome: .applied,
            active: false,
            events: ["entitlement.revoked", "revocation.refunded"]),
        Row(
            notification: notification("REFUND", product: .nonConsumable, revoked: true), current: nil,
            outcome: .applied, active: false,
            events: ["entitlement.revoked", "revocation.refunded"]),
        Row(
            notification: notification("REFUND", product: .nonConsumable, revoked: true), current: activeState,
            outcome: .applied, active: false,
            events: ["entitlement.revoked", "revocation.refunded"]),
        Row(
            notification: notification("REFUND", product: .consumable, revoked: true), current: nil, outcome: .applied,
            active: nil, events: ["consumable.refunded"]),
        Row(
            notification: notification("REFUND_DECLINED"), current: activeState, outcome: .applied, active: true,
            events: ["revocation.refund-declined"]),
        Row(
            notification: notification("REFUND_REVERSED"), current: inactiveState, outcome: .applied, active: true,
            events: ["entitlement.granted", "revocation.refund-reversed"]),
        Row(
            notification: notification("REFUND_REVERSED", product: .nonConsumable), current: nil, outcome: .applied,
            active: true,
            events: ["entitlement.granted", "revocation.refund-reversed"]),
        Row(
            notification: notification("REFUND_REVERSED", product: .consumable), current: nil, outcome: .applied,
            active: nil, events: ["consumable.refund-reversed"]),
        Row(
            notification: notification("CONSUMPTION_REQUEST"), current: activeState, outcome: .applied, active: true,
            events: ["consumption.requested"]),
        Row(
            notification: notification("CONSUMPTION_REQUEST", product: .consumable), current: nil, outcome: .applied,
            active: nil, events: ["consumption.requested"]),
        Row(
            notification: notification("RENEWAL_EXTENDED"), current: activeState, outcome: .applied, active: true,
            events: ["entitlement.updated", "subscription.extended"]),
        Row(
            notification: notification("RENEWAL_EXTENSION", "FAILURE"), current: activeState, outcome: .applied,
            active: true, events: ["subscription.extension-failed"]),
        Row(
            notification: notification("RENEWAL_EXTENSION", "SUMMARY", container: "summary"), current: nil,
            outcome: .ignored, active: nil,
            events: ["subscription.mass-extension-completed"]),
        Row(
            notification: notification("REVOKE", ownership: .familyShared, revoked: true),
            current: {
                var s = activeState
                s.ownershipType = "FAMILY_SHARED"
                return s
            }(), outcome: .applied, active: false,
            events: ["entitlement.revoked", "family.access-lost", "revocation.family-revoked"]),
        Row(
            notification: notification("SUBSCRIBED", "INITIAL_BUY", ownership: .familyShared), current: nil,
            outcome: .applied, active: true,
            events: ["entitlement.granted", "family.access-gained"]),
        Row(
            notification: notification("TEST", container: "data-without-transaction"), current: nil, outcome: .ignored,
            active: nil, events: ["test.received"]),
        Row(
            notification: notification("EXTERNAL_PURCHASE_TOKEN", "UNREPORTED", container: "externalPurchaseToken"),
            current: nil, outcome: .ignored, active: nil, events: []),
        Row(
            notification: notification("EXTERNAL_PURCHASE_TOKEN", "CREATED", container: "externalPurchaseToken"),
            current: nil, outcome: .ignored, active: nil, events: []),
        Row(
            notification: notification(
                "EXTERNAL_PURCHASE_TOKEN", "ACTIVE_TOKEN_REMINDER", container: "externalPurchaseToken"), current: nil,
            outcome: .ignored, active: nil, events: []),
        Row(
            notification: notification("ONE_TIME_CHARGE", product: .nonConsumable), current: nil, outcome: .applied,
            active: true, events: ["entitlement.granted"]),
        Row(
            notification: notification("ONE_TIME_CHARGE", product: .nonRenewingSubscription), current: nil,
            outcome: .applied, active: true, events: ["entitlement.granted"]),
        Row(
            notification: notification("ONE_TIME_CHARGE", product: .consumable), current: nil, outcome: .applied,
            active: nil, events: ["consumable.purchased"]),
        Row(
            notification: notification("ONE_TIME_CHARGE", product: .nonConsumable, ownership: .familyShared),
            current: nil, outcome: .applied, active: true,
            events: ["entitlement.granted", "family.access-gained"]),
        Row(
            notification: notification("METADATA_UPDATE"), current: activeState, outcome: .applied, active: true,
            events: []),
        Row(notification: notification("MIGRATION"), current: activeState, outcome: .applied, active: true, events: []),
        Row(
            notification: notification("PRICE_CHANGE"), current: activeState, outcome: .applied, active: true,
            events: []),
        Row(
            notification: notification("RESCIND_CONSENT", container: "appData"), current: nil, outcome: .ignored,
            active: nil, events: ["consent.rescinded"]),
        Row(
            notification: notification("SOMETHING_NEW_IN_2027"), current: activeState, outcome: .unknownType,
            active: nil, events: []),
        Row(
            notification: notification("DID_RENEW", status: .billingGracePeriod), current: activeState,
            outcome: .applied, active: true, events: ["entitlement.updated"]),
        Row(
            notification: notification("DID_RENEW", status: .billingRetry), current: activeState, outcome: .applied,
            active: false, events: ["entitlement.expired"]),
        Row(
            notification: notification("EXPIRED", status: .expired), current: nil, outcome: .applied, active: false,
            events: ["entitlement.updated"]),
    ]

}
