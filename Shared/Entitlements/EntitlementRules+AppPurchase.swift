import AppStoreModels
import JWSVerification
import PipelineRecords

// MARK: - EntitlementRules + purchases the app posted

extension EntitlementRules {
    /// The name app-posted purchases carry as their cause's notification type.
    public static let appPurchaseTypeName = "APP_PURCHASE"

    /// Computes the update for a purchase the app (or `iapctl resync`) handed over, its app user already
    /// bound in `current.boundCustomer`. The transaction alone decides access when nothing newer is known:
    /// revoked when Apple revoked it, else active until its expiry (lifetime for one-time products). It never
    /// advances the subject, so the subscription's notifications stay the authority: an app posting an older
    /// period, or posting after a newer notification, keeps the stored state and only moves it to its user.
    public static func apply(
        appPurchase record: AppPurchaseRecord, current: SubjectState,
        catalog: EntitlementCatalog = EntitlementCatalog()
    ) -> EntitlementUpdate {
        let transaction = record.transaction
        guard let original = transaction.originalTransactionId, let transactionId = transaction.transactionId,
            let productId = transaction.productId
        else {
            return EntitlementUpdate(
                outcome: .ignored, detail: "the transaction lacks its identifiers", advancesSubject: false)
        }
        let notification = Self.notification(of: record)
        let customer = current.customer(of: transaction, renewalInfo: nil)
        let rekeyed = current.rekeyed(to: customer)
        let context = Context(
            notification: notification, subject: record.subject, signedDate: record.signedDate, type: nil,
            typeName: Self.appPurchaseTypeName,
            transaction: transaction, original: original, transactionId: transactionId, productId: productId,
            customer: customer,
            current: rekeyed.entitlement, movedFrom: rekeyed.movedFrom, catalog: catalog,
            facts: PurchaseFacts.of(notification, catalog: catalog, outOfOrder: false))
        var update: EntitlementUpdate
        let newer = current.lastSignedDate.map { record.signedDate < $0 } ?? false
        let olderPeriod =
            (context.current?.validFrom).map { $0 > (transaction.purchaseDate?.millisecondsSince1970 ?? 0) } ?? false
        if let target = current.migratedTo {
            // The App Store migrated this subscription: the new one holds the access; the post is kept as a fact.
            update = EntitlementUpdate(
                outcome: .stale, detail: "migrated to \(target): the subscription moves nothing any more",
                advancesSubject: false)
        } else if transaction.type == .consumable {
            update = EntitlementUpdate(
                outcome: .applied, detail: "consumable posted by the app: stored, grants nothing lasting",
                advancesSubject: false, movedFrom: rekeyed.movedFrom)
        } else if context.current != nil && (newer || olderPeriod) {
            update = context.keep(detail: "the subscription already reflects a newer state; bound to \(customer)")
        } else if transaction.revocationDate != nil {
            update = context.settle(access: .revoked, detail: "posted by the app (\(record.source.rawValue)): revoked")
        } else {
            let until =
                transaction.type == .autoRenewableSubscription
                ? Self.latestExpiry(context) : transaction.expiresDate?.millisecondsSince1970
            update = context.settle(
                access: .active(until: until), detail: "posted by the app (\(record.source.rawValue))")
        }
        update.advancesSubject = false
        return update
    }

    /// The update of a posted purchase refused because it belongs to another customer (``PurchaseOwnership``):
    /// nothing moves; the log says `conflict`.
    public static func refusedAppPurchase(owner: String) -> EntitlementUpdate {
        EntitlementUpdate(
            outcome: .conflict, detail: "owned by another customer (\(owner)); no transfer proof",
            advancesSubject: false)
    }

    /// The update of a posted purchase nobody owns yet, refused because it came without proof from the buyer's
    /// device (``PurchaseOwnership/Decision/needsProof``): nothing moves; the log says `conflict`.
    public static func unprovenAppPurchase() -> EntitlementUpdate {
        EntitlementUpdate(
            outcome: .conflict, detail: "owned by nobody yet; binding it needs proof from the buyer's device",
            advancesSubject: false)
    }

    /// The posted purchase in the shape the rules and rows read: a notification without a type whose UUID is
    /// the record's log id.
    public static func notification(of record: AppPurchaseRecord) -> VerifiedNotification {
        Self.synthesized(
            logID: record.logID, signedDate: record.signedDate, environment: record.environment,
            bundleId: record.bundleId,
            status: nil, transaction: record.transaction, renewalInfo: nil)
    }
}
