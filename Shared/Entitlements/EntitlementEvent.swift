import Crypto
import Foundation

/// An event for other teams, written to the outbox in the same transaction as the state it describes.
public struct EntitlementEvent: Codable, Hashable, Sendable {
    /// Which downstream topic the event goes to.
    public enum Stream: String, Codable, Hashable, Sendable {
        case changes, family, revocations
    }

    /// The notification that caused an event.
    public struct Cause: Codable, Hashable, Sendable {
        public var notificationUUID: String
        public var notificationType: String
        public var subtype: String?
    }

    /// What was refunded or revoked.
    public struct Revocation: Codable, Hashable, Sendable {
        public var transactionId: String
        public var revokedAt: Int64?
        public var reason: Int32?
        public var type: String?
        /// Refunded share in milliunits (prorated refunds).
        public var percentage: Int32?
        /// The period the revoked transaction paid for.
        public var periodStart: Int64?
        public var periodEnd: Int64?
    }

    public static let schemaVersion = 1

    /// Stable across retries and re-application: derived from the cause, the kind and the target.
    public var eventId: String
    public var eventType: String
    public var schemaVersion: Int = Self.schemaVersion
    /// The notification's `signedDate`.
    public var occurredAt: Int64
    public var stream: Stream
    public var subject: String
    public var customer: String
    public var productId: String
    public var cause: Cause
    /// The entitlement after the change (nil for events about purchases that grant nothing lasting).
    public var state: EntitlementState?
    public var revocation: Revocation?

    /// Creates an event with its stable id.
    init(eventType: String, stream: Stream, occurredAt: Int64, subject: String, customer: String, productId: String,
         cause: Cause, state: EntitlementState?, revocation: Revocation? = nil) {
        self.eventId = Self.stableID(cause.notificationUUID, eventType, customer, productId)
        self.eventType = eventType
        self.occurredAt = occurredAt
        self.stream = stream
        self.subject = subject
        self.customer = customer
        self.productId = productId
        self.cause = cause
        self.state = state
        self.revocation = revocation
    }

    /// A UUID made from the SHA-256 of the parts (version 8, RFC 9562 variant): the same every time.
    static func stableID(_ parts: String...) -> String {
        var b = Array(SHA256.hash(data: Data(parts.joined(separator: "\u{1F}").utf8)).prefix(16))
        b[6] = (b[6] & 0x0F) | 0x80
        b[8] = (b[8] & 0x3F) | 0x80
        let uuid = UUID(uuid: (b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]))
        return uuid.uuidString.lowercased()
    }
}

/// A request for refund-resolver to fetch the subscription's current status from the App Store.
public struct StatusRequest: Codable, Hashable, Sendable {
    /// Stable per notification, so re-applying it asks once.
    public var requestId: String
    public var originalTransactionId: String
    public var environment: String
    public var reason: String
    public var notificationUUID: String

    public init(requestId: String, originalTransactionId: String, environment: String, reason: String, notificationUUID: String) {
        self.requestId = requestId
        self.originalTransactionId = originalTransactionId
        self.environment = environment
        self.reason = reason
        self.notificationUUID = notificationUUID
    }
}
