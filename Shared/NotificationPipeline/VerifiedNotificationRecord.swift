public import AppStoreModels
import Foundation
public import JWSVerification

/// The value written to the verified topic: the notification with every JWS verified and decoded, and where
/// Apple's signed original is kept (the raw message). Canonical JSON (sorted keys), so verifying the same input
/// twice gives the same bytes: a redelivered message is an exact repeat.
///
/// v2 carries each part once. v1 also carried the signed payload (the decoded parts a second time, ~18 KB of
/// the ~25 KB record); v2 leaves `notification.signedPayload` empty and names the raw topic's message that
/// holds it in `source`. Readers accept both: a v1 record decodes as a v2 record without `source`.
public struct VerifiedNotificationRecord: Codable, Hashable, Sendable {
    /// The value's schema name and version.
    public static let schema = "appstore.notification.verified/v2"

    /// Where a message was read: the raw topic's message that holds Apple's signed original, byte for byte.
    public struct Source: Codable, Hashable, Sendable {
        public var topic: String
        public var partition: Int32
        public var offset: Int64

        public init(topic: String, partition: Int32, offset: Int64) {
            self.topic = topic
            self.partition = partition
            self.offset = offset
        }
    }

    public var schema: String = Self.schema
    /// The Kafka key: see ``NotificationSubject``.
    public var subject: String
    /// The environment the notification belongs to.
    public var environment: String
    /// The instant the certificates were validated at (the payload's signedDate unless configured otherwise).
    public var validatedAt: Timestamp?
    /// The verified notification, decoded: outer payload, transaction, renewal info, app transaction.
    /// `signedPayload` is empty (see ``source``).
    public var notification: VerifiedNotification
    /// The raw message the notification was verified from (nil in v1 records and records built by tools).
    public var source: Source?

    /// Creates a record for a verified notification read from `source`.
    ///
    /// The signed strings are left out: the outer one (`signedPayload`) and the nested ones
    /// (`data.signedTransactionInfo`, `data.signedRenewalInfo`, `appData.signedAppTransactionInfo`) stand,
    /// byte for byte, in the raw message at `source`; their decoded forms are `payload`, `transaction`,
    /// `renewalInfo` and `appTransaction`. That makes the record a sixth of v1's size.
    public init(notification: VerifiedNotification, source: Source? = nil) {
        var notification = notification
        notification.signedPayload = ""
        notification.payload.data?.signedTransactionInfo = nil
        notification.payload.data?.signedRenewalInfo = nil
        notification.payload.appData?.signedAppTransactionInfo = nil
        self.notification = notification
        self.subject = NotificationSubject.of(notification.payload, transaction: notification.transaction)
        self.environment = notification.payload.rawEnvironment ?? "unknown"
        self.validatedAt = notification.payload.signedDate
        self.source = source
    }

    /// Canonical JSON bytes.
    public func encoded() throws -> [UInt8] {
        Array(try AppStoreJSON.makeCanonicalEncoder().encode(self))
    }
}
