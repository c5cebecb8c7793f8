import AppStoreModels
import JWSVerification

/// The entitlement semantics of every notification type (appstore-facts §1.1), as a pure function from a
/// verified notification and the subject's current state to the update to write.
///
/// Order: a notification signed before the subject's newest applied one is stale and changes nothing.
/// Truth: `data.status` (the subscription status as of the notification's signedDate) decides an
/// auto-renewable subscription's access whenever present; otherwise the type and subtype do. A refund of
/// an auto-renewable without `data.status` is ambiguous (an old period may have been refunded while a newer
/// one is active), so it asks refund-resolver for the current status instead of guessing.
public enum EntitlementRules {
    /// Computes the update for a notification.
    public static func apply(_ notification: VerifiedNotification, subject: String, current: SubjectState) -> EntitlementUpdate {
        let payload = notification.payload
        let signedDate = payload.signedDate?.millisecondsSince1970 ?? 0
        if let last = current.lastSignedDate, signedDate < last {
            return EntitlementUpdate(outcome: .stale, detail: "signed \(signedDate), the subject already reflects \(last)", advancesSubject: false)
        }
        guard let type = payload.notificationType else {
            return EntitlementUpdate(outcome: .unknownType, detail: "unknown notificationType \(payload.rawNotificationType ?? "(none)")",
                                     advancesSubject: false)
        }
        guard let transaction = notification.transaction, let original = transaction.originalTransactionId,
              let transactionId = transaction.transactionId, let productId = transaction.productId
        else {
            return EntitlementUpdate(outcome: .ignored, detail: "\(type.rawValue) carries no transaction", advancesSubject: false)
        }
        let context = Context(
            notification: notification, subject: subject, signedDate: signedDate, type: type, typeName: type.rawValue, transaction: transaction,
            original: original, transactionId: transactionId, productId: productId,
            customer: CustomerKey.of(transaction: transaction, renewalInfo: notification.renewalInfo), current: current.entitlement)
        switch transaction.type {
        case .consumable: return Self.consumable(context)
        case .autoRenewableSubscription: return Self.autoRenewable(context)
        default: return Self.oneTime(context)
        }
    }

    // MARK: Product kinds

    /// Auto-renewable subscriptions: `data.status` first, then the type table.
    private static func autoRenewable(_ c: Context) -> EntitlementUpdate {
        let payload = c.notification.payload
        if let status = payload.data?.status {
            let access = Self.access(for: status, c)
            if c.type == .refund, case .active = access, c.current?.active == true {
                // An earlier period was refunded; the subscription is still active: nothing changes but the report.
                return c.keep(detail: "refund of an earlier period; data.status \(status.rawValue)")
            }
            return c.settle(access: access, detail: "data.status \(status.rawValue)")
        }
        switch c.type {
        case .subscribed, .didRenew, .offerRedeemed, .renewalExtended, .refundReversed:
            return c.settle(access: .active(until: c.transaction.expiresDate?.millisecondsSince1970), detail: "granted by \(c.typeName)")
        case .didChangeRenewalPref where payload.subtype == .upgrade:
            return c.settle(access: .active(until: c.transaction.expiresDate?.millisecondsSince1970), detail: "upgrade takes effect now")
        case .didFailToRenew where payload.subtype == .gracePeriod:
            let grace = c.notification.renewalInfo?.gracePeriodExpiresDate?.millisecondsSince1970
            return c.settle(access: .active(until: grace), detail: "billing grace period")
        case .didFailToRenew, .gracePeriodExpired, .expired:
            return c.settle(access: .inactive, detail: "\(c.typeName) \(payload.rawSubtype ?? "")")
        case .revoke:
            return c.settle(access: .revoked, detail: "family sharing revoked")
        case .refund:
            return c.awaitStatus()
        default:
            return c.keep(detail: "\(c.typeName) changes no access")
        }
    }

    /// Non-consumables and non-renewing subscriptions: granted once, revoked by refunds and family revokes.
    private static func oneTime(_ c: Context) -> EntitlementUpdate {
        switch c.type {
        case .oneTimeCharge, .refundReversed:
            return c.settle(access: .active(until: c.transaction.expiresDate?.millisecondsSince1970), detail: "granted by \(c.typeName)")
        case .refund, .revoke:
            return c.settle(access: .revoked, detail: "\(c.typeName) of \(c.transactionId)")
        default:
            return c.keep(detail: "\(c.typeName) changes no access")
        }
    }

    /// Consumables grant nothing lasting: purchases, refunds and reversals are reported as events only.
    private static func consumable(_ c: Context) -> EntitlementUpdate {
        let kind: (String, EntitlementEvent.Stream)? = switch c.type {
        case .oneTimeCharge?: ("consumable.purchased", .changes)
        case .refund?: ("consumable.refunded", .revocations)
        case .refundReversed?: ("consumable.refund-reversed", .revocations)
        default: nil
        }
        guard let (eventType, stream) = kind else {
            return EntitlementUpdate(outcome: .applied, detail: "\(c.typeName) of a consumable changes no access", advancesSubject: true)
        }
        let event = EntitlementEvent(
            eventType: eventType, stream: stream, occurredAt: c.signedDate, subject: c.subject, customer: c.customer,
            productId: c.productId, cause: c.cause, state: nil, revocation: c.type == .oneTimeCharge ? nil : c.revocation)
        return EntitlementUpdate(outcome: .applied, detail: eventType, events: [event], advancesSubject: true)
    }

    /// What a subscription status means for access.
    static func access(for status: Status, _ c: Context) -> Access {
        switch status {
        case .active: .active(until: Self.latestExpiry(c))
        case .billingGracePeriod: .active(until: c.notification.renewalInfo?.gracePeriodExpiresDate?.millisecondsSince1970)
        case .expired, .billingRetry: .inactive
        case .revoked: .revoked
        }
    }
}

extension EntitlementRules {
    /// The expiry of an active subscription: the notification's transaction may be an older period (a
    /// CONSUMPTION_REQUEST or REFUND about it), so a later expiry already stored for the product stands.
    static func latestExpiry(_ c: Context) -> Int64? {
        let carried = c.transaction.expiresDate?.millisecondsSince1970
        guard let current = c.current, current.productId == c.productId, current.active, let stored = current.validUntil else { return carried }
        return max(carried ?? stored, stored)
    }
}

/// The access a notification leaves a customer with.
enum Access: Hashable {
    case active(until: Int64?)
    case inactive
    case revoked
}
