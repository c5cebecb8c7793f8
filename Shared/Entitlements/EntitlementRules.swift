import AppStoreModels
import JWSVerification

/// The entitlement semantics of every notification type (appstore-facts §1.1), as a pure function from a
/// verified notification and the subject's current state to the update to write.
///
/// Order: a notification signed before the subject's newest applied one is stale: it does not move the
/// entitlement (nothing backwards), but what it reports is still published once (its refund, reversal,
/// revoke, declined refund, consumption request, consumable purchase or renewal change), marked `outOfOrder`;
/// the repository still stores its transaction and renewal info.
/// Truth: `data.status` (the subscription status as of the notification's signedDate) decides an
/// auto-renewable subscription's access whenever present; otherwise the type and subtype do. An active status
/// beside a transaction that had ended by then (an earlier period refunded, reversed or asked about) says the
/// subscription runs but not until when: a newer stored period stands, else refund-resolver asks Apple. A refund
/// of an auto-renewable without `data.status` is ambiguous (an old period may have been refunded while a newer
/// one is active), so it asks refund-resolver for the current status instead of guessing.
public enum EntitlementRules {
    /// How long Apple gives the developer to answer a CONSUMPTION_REQUEST: 12 hours.
    public static let consumptionAnswerWindow: Int64 = 12 * 3_600_000

    /// Computes the update for a notification.
    public static func apply(
        _ notification: VerifiedNotification, subject: String, current: SubjectState,
        catalog: EntitlementCatalog = EntitlementCatalog()
    ) -> EntitlementUpdate {
        let payload = notification.payload
        let signedDate = payload.signedDate?.millisecondsSince1970 ?? 0
        let late = current.lastSignedDate.map { signedDate < $0 } ?? false
        // A subscription migrated to another moves nothing any more: the new one holds its customer's access.
        let stale = late || current.migratedTo != nil
        guard let type = payload.notificationType else {
            return EntitlementUpdate(
                outcome: stale ? .stale : .unknownType,
                detail: "unknown notificationType \(payload.rawNotificationType ?? "(none)")", advancesSubject: false)
        }
        guard let transaction = notification.transaction, let original = transaction.originalTransactionId,
            let transactionId = transaction.transactionId, let productId = transaction.productId
        else {
            return Self.appLevel(notification, type: type, subject: subject, catalog: catalog)
        }
        let customer = current.customer(of: transaction, renewalInfo: notification.renewalInfo)
        // A late notification moves nothing, so its rows stay where they are.
        let rekeyed = stale ? (entitlement: current.entitlement, movedFrom: nil) : current.rekeyed(to: customer)
        let context = Context(
            notification: notification, subject: subject, signedDate: signedDate, type: type, typeName: type.rawValue,
            transaction: transaction,
            original: original, transactionId: transactionId, productId: productId, customer: customer,
            current: rekeyed.entitlement,
            movedFrom: rekeyed.movedFrom, catalog: catalog,
            facts: PurchaseFacts.of(notification, catalog: catalog, outOfOrder: late))
        if let migration = current.migration {
            return Self.migrated(context, from: migration, stale: stale)
        }
        if stale {
            let detail =
                current.migratedTo.map { "migrated to \($0): the subscription moves nothing any more" }
                ?? "signed \(signedDate), the subject already reflects \(current.lastSignedDate ?? 0)"
            return EntitlementUpdate(
                outcome: .stale, detail: detail, events: context.factEvents(state: current.entitlement),
                advancesSubject: false)
        }
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
            return Self.bySignedStatus(status, c)
        }
        switch c.type {
        case .refundReversed:
            return Self.grantOfNamedPeriod(c)
        case .subscribed, .didRenew, .offerRedeemed, .renewalExtended:
            return c.settle(
                access: .active(until: c.transaction.expiresDate?.millisecondsSince1970),
                detail: "granted by \(c.typeName)")
        case .didChangeRenewalPref where payload.subtype == .upgrade:
            return c.settle(
                access: .active(until: c.transaction.expiresDate?.millisecondsSince1970),
                detail: "upgrade takes effect now")
        case .didFailToRenew where payload.subtype == .gracePeriod:
            let grace = c.notification.renewalInfo?.gracePeriodExpiresDate?.millisecondsSince1970
            return c.settle(access: .active(until: grace), detail: "billing grace period")
        case .didFailToRenew, .gracePeriodExpired, .expired:
            return c.settle(access: .inactive, detail: "\(c.typeName) \(payload.rawSubtype ?? "")")
        case .revoke:
            return c.settle(access: .revoked, detail: "family sharing revoked")
        case .refund:
            return c.awaitStatus(reason: StatusRequest.Reason.refundWithoutStatus)
        default:
            return c.keep(detail: "\(c.typeName) changes no access")
        }
    }

    /// Non-consumables and non-renewing subscriptions: granted once, revoked by refunds and family revokes.
    private static func oneTime(_ c: Context) -> EntitlementUpdate {
        switch c.type {
        case .oneTimeCharge, .refundReversed:
            return c.settle(
                access: .active(until: c.transaction.expiresDate?.millisecondsSince1970),
                detail: "granted by \(c.typeName)")
        case .refund, .revoke:
            return c.settle(access: .revoked, detail: "\(c.typeName) of \(c.transactionId)")
        default:
            // Any other notification (a consumption request, a declined refund) carries the transaction as Apple
            // signed it: its revocation state then is the newest truth. Keeping the stored state instead would let
            // this notification's later signing time make an earlier REFUND_REVERSED stale behind a revocation.
            if c.transaction.revocationDate != nil {
                return c.settle(access: .revoked, detail: "\(c.typeName): the transaction is revoked")
            }
            return c.settle(
                access: .active(until: c.transaction.expiresDate?.millisecondsSince1970),
                detail: "\(c.typeName): the transaction stands")
        }
    }

    /// Consumables grant nothing lasting: purchases, refunds, reversals, declined refunds and consumption
    /// requests are reported as events only.
    private static func consumable(_ c: Context) -> EntitlementUpdate {
        let events = c.factEvents(state: nil)
        return EntitlementUpdate(
            outcome: .applied, detail: events.first?.eventType ?? "\(c.typeName) of a consumable changes no access",
            events: events, advancesSubject: true)
    }

    /// The first notification applied of a subscription the App Store migrated from another
    /// (`previousOriginalTransactionId`, a `MIGRATION` to the Advanced Commerce API, whatever notification of it
    /// arrives first): the customer's access moves to the new subscription (its status, else its transaction; the
    /// repository removed the previous one's entitlement row), reported by one `entitlement.migrated` event that
    /// carries the new state and the previous one as the migration ended it. A late one (signed before the
    /// subject's newest) leaves the new subscription's entitlement as it is.
    static func migrated(_ c: Context, from migration: SubjectMigration, stale: Bool) -> EntitlementUpdate {
        // A status snapshot's transaction is the subscription's newest (Apple's lastTransactions): its status settles.
        let reading = c.notification.payload.data?.status.map {
            c.type == nil ? .settles(Self.access(for: $0, c)) : Self.reading(of: $0, c)
        }
        var update =
            stale
            ? EntitlementUpdate(outcome: .applied, detail: "", entitlement: nil, advancesSubject: false)
            : c.settle(access: reading?.settledAccess ?? c.currentOrDerived(), detail: "")
        if !stale, reading == .unknownUntil {
            // The first of the new subscription is an earlier period of it: the migration happens now, and Apple says
            // until when the new subscription runs.
            let waiting = c.awaitStatus(reason: StatusRequest.Reason.migrationWithEarlierPeriod)
            update.outcome = waiting.outcome
            update.statusRequest = waiting.statusRequest
            update.advancesSubject = false
        }
        update.detail = "migrated from \(migration.previousOriginalTransactionId)"
        let state = update.entitlement ?? c.current
        var ended = migration.previousEntitlement
        if let previous = ended {
            ended?.active = false
            ended?.validUntil = min(previous.validUntil ?? c.signedDate, c.signedDate)
        }
        update.superseded = nil
        var event = c.event("entitlement.migrated", .changes, state: state)
        event.migration = EntitlementEvent.Migration(
            previousOriginalTransactionId: migration.previousOriginalTransactionId, previousState: ended)
        if let previous = migration.previousEntitlement, previous.productId != c.productId {
            event.previousProductId = previous.productId
        }
        update.events = [event] + c.factEvents(state: state)
        return update
    }

    /// What a subscription status means for access.
    static func access(for status: Status, _ c: Context) -> Access {
        switch status {
        case .active: .active(until: Self.latestExpiry(c))
        case .billingGracePeriod:
            .active(until: c.notification.renewalInfo?.gracePeriodExpiresDate?.millisecondsSince1970)
        case .expired, .billingRetry: .inactive
        case .revoked: .revoked
        }
    }
}

// MARK: - App-level notifications

extension EntitlementRules {
    /// Notifications about the app rather than a purchase: TEST becomes `test.received` (so teams can check
    /// their wiring end to end), RENEWAL_EXTENSION/SUMMARY `subscription.mass-extension-completed` with its
    /// counts, RESCIND_CONSENT `consent.rescinded` (restrict the child's access now). They change no entitlement.
    static func appLevel(
        _ notification: VerifiedNotification, type: NotificationTypeV2, subject: String,
        catalog: EntitlementCatalog
    ) -> EntitlementUpdate {
        let payload = notification.payload
        let eventType: String? =
            switch type {
            case .test: "test.received"
            case .renewalExtension where payload.summary != nil: "subscription.mass-extension-completed"
            case .rescindConsent: "consent.rescinded"
            default: nil
            }
        guard let eventType else {
            return EntitlementUpdate(
                outcome: .ignored, detail: "\(type.rawValue) carries no transaction", advancesSubject: false)
        }
        var facts = PurchaseFacts.of(notification, catalog: catalog, outOfOrder: false)
        let productId = payload.summary?.productId ?? ""
        if !productId.isEmpty { facts.entitlementId = catalog.entitlement(of: productId) }
        var event = EntitlementEvent(
            eventType: eventType, stream: .changes, occurredAt: payload.signedDate?.millisecondsSince1970 ?? 0,
            subject: subject,
            customer: notification.appTransaction?.appTransactionId ?? Self.appCustomer, productId: productId,
            cause: EntitlementEvent.Cause(
                notificationUUID: payload.notificationUUID ?? "", notificationType: type.rawValue,
                subtype: payload.rawSubtype),
            state: nil, facts: facts)
        if let summary = payload.summary {
            event.massExtension = EntitlementEvent.MassExtension(
                requestIdentifier: summary.requestIdentifier, productId: summary.productId,
                storefrontCountryCodes: summary.storefrontCountryCodes,
                succeededCount: summary.succeededCount, failedCount: summary.failedCount)
        }
        return EntitlementUpdate(
            outcome: .ignored, detail: "\(type.rawValue) changes no entitlement; published \(eventType)",
            events: [event], advancesSubject: false)
    }

    /// The customer of events about the whole app (the Kafka key's last part).
    public static let appCustomer = "app"
}

extension EntitlementRules {
    /// The expiry of an active subscription: the notification's transaction may be an older period (a
    /// CONSUMPTION_REQUEST or REFUND about it), so a later expiry already stored for the product stands.
    static func latestExpiry(_ c: Context) -> Int64? {
        let carried = c.transaction.expiresDate?.millisecondsSince1970
        guard let current = c.current, current.productId == c.productId, current.active, let stored = current.validUntil
        else { return carried }
        return max(carried ?? stored, stored)
    }
}

/// The access a notification leaves a customer with.
enum Access: Hashable {
    case active(until: Int64?)
    case inactive
    case revoked
}
