public import AppStoreModels
import Foundation

/// The value refund-resolver writes to the verified topic (keyed by the subscription, so it is applied in
/// order with the subscription's notifications): the subscription's status as the App Store Server API
/// reported it, its newest transaction and renewal info verified and decoded, and the signed originals.
public struct StatusSnapshot: Codable, Hashable, Sendable {
    /// The value's schema name and version (also in the `schema` header).
    public static let schema = "appstore.status.snapshot/v1"

    public var schema: String = Self.schema
    /// The status request this answers.
    public var requestId: String
    /// The notification whose ambiguity caused the request.
    public var notificationUUID: String
    /// The subscription's `originalTransactionId` (the Kafka key).
    public var subject: String
    public var environment: String
    /// The app the subscription belongs to (the transaction's `bundleId`).
    public var bundleId: String { self.transaction.bundleId ?? "unknown" }
    /// The raw status (1 active, 2 expired, 3 billing retry, 4 grace period, 5 revoked).
    public var status: Int32
    public var transaction: JWSTransactionDecodedPayload
    public var renewalInfo: JWSRenewalInfoDecodedPayload?
    public var signedTransactionInfo: String
    public var signedRenewalInfo: String?

    public init(
        requestId: String, notificationUUID: String, subject: String, environment: String, status: Int32,
        transaction: JWSTransactionDecodedPayload, renewalInfo: JWSRenewalInfoDecodedPayload?,
        signedTransactionInfo: String,
        signedRenewalInfo: String?
    ) {
        self.requestId = requestId
        self.notificationUUID = notificationUUID
        self.subject = subject
        self.environment = environment
        self.status = status
        self.transaction = transaction
        self.renewalInfo = renewalInfo
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }

    /// When Apple signed the answer: the newest signedDate of its items. The snapshot reflects every event
    /// before it, so the per-subject stale guard orders it against notifications.
    public var signedDate: Int64 {
        max(
            self.transaction.signedDate?.millisecondsSince1970 ?? 0,
            self.renewalInfo?.signedDate?.millisecondsSince1970 ?? 0)
    }

    /// The id under which the notification log records the snapshot (so a repeated snapshot is a no-op).
    public var logID: String { "status-snapshot:" + self.requestId }

    /// Canonical JSON bytes.
    public func encoded() throws -> [UInt8] {
        Array(try AppStoreJSON.makeCanonicalEncoder().encode(self))
    }
}
