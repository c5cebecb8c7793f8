public import AppStoreModels
import Foundation
public import JWSVerification

/// The value written to the verified topic: the notification, every nested JWS verified and decoded, and the
/// original signed payload. Canonical JSON (sorted keys), so verifying the same input twice gives the same
/// bytes: a redelivered message is an exact repeat.
public struct VerifiedNotificationRecord: Codable, Hashable, Sendable {
    /// The value's schema name and version.
    public static let schema = "appstore.notification.verified/v1"

    public var schema: String = Self.schema
    /// The Kafka key: see ``NotificationSubject``.
    public var subject: String
    /// The environment the notification belongs to.
    public var environment: String
    /// The instant the certificates were validated at (the payload's signedDate unless configured otherwise).
    public var validatedAt: Timestamp?
    /// The verified notification: signed payload, decoded payload and decoded nested data.
    public var notification: VerifiedNotification

    /// Creates a record for a verified notification.
    ///
    /// The decoded payload's nested signed strings (`data.signedTransactionInfo`, `data.signedRenewalInfo`,
    /// `appData.signedAppTransactionInfo`) are left out: they stand, byte for byte, inside `signedPayload`,
    /// and their decoded forms are `transaction`, `renewalInfo` and `appTransaction`. That halves the record.
    public init(notification: VerifiedNotification) {
        var notification = notification
        notification.payload.data?.signedTransactionInfo = nil
        notification.payload.data?.signedRenewalInfo = nil
        notification.payload.appData?.signedAppTransactionInfo = nil
        self.notification = notification
        self.subject = NotificationSubject.of(notification.payload, transaction: notification.transaction)
        self.environment = notification.payload.rawEnvironment ?? "unknown"
        self.validatedAt = notification.payload.signedDate
    }

    /// Canonical JSON bytes.
    public func encoded() throws -> [UInt8] {
        Array(try AppStoreJSON.makeCanonicalEncoder().encode(self))
    }
}
