public import Entitlements

/// What the notification log records of an input, and the keys that scope its rows to its environment and app.
/// Encoded under the log's column names, as the updater's log statement reads it.
public struct NotificationLogEntry: Encodable, Hashable, Sendable {
    /// The notification's UUID, or the log id of a snapshot or an app's purchase.
    public var id: String
    public var type: String
    public var subtype: String?
    /// The subscription or purchase (originalTransactionId) the input is about.
    public var subject: String
    public var environment: String
    public var bundleId: String
    /// When Apple signed it (epoch ms).
    public var signedDate: Int64
    /// When ingest received it (epoch ms), when known.
    public var receivedAt: Int64?

    public init(
        id: String, type: String, subtype: String?, subject: String, environment: String, bundleId: String,
        signedDate: Int64, receivedAt: Int64?
    ) {
        self.id = id
        self.type = type
        self.subtype = subtype
        self.subject = subject
        self.environment = environment
        self.bundleId = bundleId
        self.signedDate = signedDate
        self.receivedAt = receivedAt
    }

    enum CodingKeys: String, CodingKey {
        case id, type, subtype, subject, environment
        case bundleId = "bundle_id"
        case signedDate = "signed_date"
        case receivedAt = "received_at"
    }

    /// The prefix that scopes a key to the entry's environment and app.
    public var scope: String { self.environment + "/" + self.bundleId + "/" }
    /// The subject's lock, within its environment and app.
    public var lockKey: String { self.scope + self.subject }

    /// The entitlement row `entitlement` is stored in, within the entry's environment and app.
    public func rowKey(of entitlement: EntitlementState) -> String {
        self.scope + entitlement.customer + "/" + entitlement.productId
    }
}
