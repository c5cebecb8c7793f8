import AppStoreModels
import JWSVerification
import PipelineRecords

// MARK: - EntitlementRules + status snapshots

extension EntitlementRules {
    /// The name status snapshots carry as their cause's notification type.
    public static let snapshotTypeName = "STATUS_SNAPSHOT"

    /// Computes the update for a status snapshot from refund-resolver: the App Store's own status decides the
    /// subscription's access, exactly as `data.status` does for a notification. Older than what the subject
    /// already reflects: stale.
    public static func apply(
        snapshot: StatusSnapshot, current: SubjectState, catalog: EntitlementCatalog = EntitlementCatalog()
    ) -> EntitlementUpdate {
        let signedDate = snapshot.signedDate
        if let target = current.migratedTo {
            return EntitlementUpdate(
                outcome: .stale, detail: "migrated to \(target): the subscription moves nothing any more",
                advancesSubject: false)
        }
        let late = current.lastSignedDate.map { signedDate < $0 } ?? false
        if late && current.migration == nil {
            return EntitlementUpdate(
                outcome: .stale,
                detail: "snapshot signed \(signedDate), the subject already reflects \(current.lastSignedDate ?? 0)",
                advancesSubject: false)
        }
        let transaction = snapshot.transaction
        guard let status = Status(rawValue: snapshot.status) else {
            return EntitlementUpdate(
                outcome: .unknownType, detail: "unknown subscription status \(snapshot.status)", advancesSubject: false)
        }
        guard let original = transaction.originalTransactionId, let transactionId = transaction.transactionId,
            let productId = transaction.productId
        else {
            return EntitlementUpdate(
                outcome: .ignored, detail: "the snapshot's transaction lacks its identifiers", advancesSubject: false)
        }
        let notification = Self.notification(of: snapshot, status: status)
        let customer = current.customer(of: transaction, renewalInfo: snapshot.renewalInfo)
        let rekeyed = current.rekeyed(to: customer)
        let context = Context(
            notification: notification, subject: snapshot.subject, signedDate: signedDate,
            type: nil, typeName: Self.snapshotTypeName, transaction: transaction, original: original,
            transactionId: transactionId,
            productId: productId, customer: customer, current: rekeyed.entitlement, movedFrom: rekeyed.movedFrom,
            catalog: catalog,
            facts: PurchaseFacts.of(notification, catalog: catalog, outOfOrder: false))
        if let migration = current.migration {
            return Self.migrated(context, from: migration, stale: late)
        }
        return context.settle(
            access: Self.access(for: status, context),
            detail: "status snapshot \(status.rawValue) for request \(snapshot.requestId)")
    }

    /// The snapshot in the shape the rules and rows read: a notification whose `data.status` is the
    /// snapshot's status and whose UUID is the snapshot's log id.
    public static func notification(of snapshot: StatusSnapshot, status: Status? = nil) -> VerifiedNotification {
        Self.synthesized(
            logID: snapshot.logID, signedDate: snapshot.signedDate, environment: snapshot.environment,
            bundleId: snapshot.bundleId,
            status: snapshot.status, transaction: snapshot.transaction, renewalInfo: snapshot.renewalInfo)
    }

    /// A notification without a type standing for another verified input (a status snapshot, a purchase the
    /// app posted): what the rules and rows read of it, its UUID the input's log id.
    static func synthesized(
        logID: String, signedDate: Int64, environment: String, bundleId: String, status: Int32?,
        transaction: JWSTransactionDecodedPayload, renewalInfo: JWSRenewalInfoDecodedPayload?
    ) -> VerifiedNotification {
        var payload = ResponseBodyV2DecodedPayload()
        payload.notificationUUID = logID
        payload.signedDate = Timestamp(millisecondsSince1970: signedDate)
        var data = NotificationData()
        data.rawStatus = status
        data.rawEnvironment = environment
        data.bundleId = bundleId
        payload.data = data
        return VerifiedNotification(
            signedPayload: "", payload: payload, transaction: transaction, renewalInfo: renewalInfo)
    }
}
