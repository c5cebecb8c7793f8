public import AppStoreModels
import Entitlements
public import PipelineRecords

/// An input ready to decide: its log entry, the notification its facts come from, what it is, the subscription it
/// was migrated from, and the trace its events continue.
///
/// A class of constants: a batch's inputs are handed to its waves, the planner and the facts rows, and passing a
/// reference is one retain, where copying the value retained every field of a decoded notification (some 80 optional
/// fields, twice: the notification and the record it came in), a few per cent of the updater's CPU.
public final class PreparedInput: Sendable {
    public let entry: NotificationLogEntry
    /// The notification the input's facts come from (a snapshot's or a purchase's as one Apple would send).
    public let notification: VerifiedNotification
    /// What the input is, which decides the rules that apply to it.
    public let kind: EntitlementInput.Kind
    /// The subscription the App Store migrated to this one (`previousOriginalTransactionId` of a transaction
    /// Apple sent: a notification or a status snapshot, never an app's post), locked with the subject.
    public let migratedFrom: String?
    /// The trace its events continue.
    public let traceParent: String?

    /// A claim on the subject: the app's purchase and the app user it names, when it names one.
    public var claim: (record: AppPurchaseRecord, appUserId: String)? {
        guard case .purchase(let record) = self.kind, let user = record.appUserId else { return nil }
        return (record, user)
    }

    /// The lock keys of the input: its subject and, for a migration, the previous subscription.
    public var lockKeys: [String] {
        [self.entry.lockKey] + (self.migratedFrom.map { [self.entry.scope + $0] } ?? [])
    }

    // MARK: Preparing

    /// The log entry and notification of an input, and the subscription it was migrated from.
    public init(_ input: EntitlementInput) {
        let entry: NotificationLogEntry
        let notification: VerifiedNotification
        switch input.kind {
        case .notification(let record):
            let payload = record.notification.payload
            entry = NotificationLogEntry(
                id: payload.notificationUUID ?? "", type: payload.rawNotificationType ?? "unknown",
                subtype: payload.rawSubtype, subject: record.subject, environment: record.environment,
                bundleId: payload.bundleId ?? record.notification.transaction?.bundleId ?? "unknown",
                signedDate: payload.signedDate?.millisecondsSince1970 ?? 0, receivedAt: input.receivedAt)
            notification = record.notification
        case .snapshot(let snapshot):
            entry = NotificationLogEntry(
                id: snapshot.logID, type: EntitlementRules.snapshotTypeName, subtype: String(snapshot.status),
                subject: snapshot.subject, environment: snapshot.environment, bundleId: snapshot.bundleId,
                signedDate: snapshot.signedDate, receivedAt: input.receivedAt)
            notification = EntitlementRules.notification(of: snapshot)
        case .purchase(let record):
            entry = NotificationLogEntry(
                id: record.logID, type: EntitlementRules.appPurchaseTypeName, subtype: record.source.rawValue,
                subject: record.subject, environment: record.environment, bundleId: record.bundleId,
                signedDate: record.signedDate, receivedAt: input.receivedAt)
            notification = EntitlementRules.notification(of: record)
        }
        self.entry = entry
        self.notification = notification
        self.kind = input.kind
        self.traceParent = input.traceParent
        // Only what Apple sent migrates a subscription: an app's post names no previous one it could move.
        if case .purchase = input.kind {
            self.migratedFrom = nil
        } else if let previous = notification.transaction?.previousOriginalTransactionId, !previous.isEmpty,
            previous != entry.subject
        {
            self.migratedFrom = previous
        } else {
            self.migratedFrom = nil
        }
    }
}
