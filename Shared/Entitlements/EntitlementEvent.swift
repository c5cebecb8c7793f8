import Crypto
import Foundation
import JWSVerification

/// An event for other teams, written to the outbox in the same transaction as the state it describes.
///
/// Schema version 2 keeps every version 1 field with its name and type and adds, flat beside them, the
/// ``PurchaseFacts`` and the fields of the new event types. Consumers must ignore fields they do not know.
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

    /// An item of an Advanced Commerce purchase that the App Store refunded (in part or whole) or revoked.
    public struct RefundedItem: Codable, Hashable, Sendable {
        public var sku: String
        public var revokedAt: Int64?
        public var refunds: [ItemRefund]
    }

    /// One refund of an item, its amount an exact decimal of Apple's milliunits.
    public struct ItemRefund: Codable, Hashable, Sendable {
        public var amount: String?
        public var refundedAt: Int64?
        public var reason: String?
        public var type: String?
    }

    /// The subscription a migrated one continues (`entitlement.migrated`): its id and its entitlement as the
    /// migration ended it (consumers drop that product's access for the customer it names).
    public struct Migration: Codable, Hashable, Sendable {
        public var previousOriginalTransactionId: String
        public var previousState: EntitlementState?
    }

    /// The counts of a finished mass renewal-date extension (RENEWAL_EXTENSION / SUMMARY).
    public struct MassExtension: Codable, Hashable, Sendable {
        public var requestIdentifier: String?
        public var productId: String?
        public var storefrontCountryCodes: [String]?
        public var succeededCount: Int64?
        public var failedCount: Int64?
    }

    public static let schemaVersion = 2

    // MARK: Version 1 fields

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

    // MARK: Version 2 fields

    /// The event's number among its subject's events (one more than the one before, in the order the updater wrote
    /// them), set as it is written to the outbox: nil on an event not written yet, or written before migration 16.
    public var sequence: Int64?
    /// The purchase the event is about (encoded flat, beside the fields above).
    public var facts: PurchaseFacts
    /// The product the subscription moved from (`entitlement.product-changed`).
    public var previousProductId: String?
    /// The customer the purchase belonged to before (`entitlement.customer-changed`).
    public var previousCustomer: String?
    /// When the answer to a consumption request is due: `occurredAt` + 12 hours (`consumption.requested`).
    public var responseDeadline: Int64?
    public var consumptionRequestReason: String?
    public var massExtension: MassExtension?
    /// `entitlement.migrated`: the subscription this one continues.
    public var migration: Migration?
    /// Refunds of an Advanced Commerce purchase: the items refunded or revoked, each with every refund Apple lists
    /// for it (a field of its own: version 1's `revocation` keeps its shape).
    public var refundedItems: [RefundedItem]?

    /// Creates an event with its stable id.
    init(
        eventType: String, stream: Stream, occurredAt: Int64, subject: String, customer: String, productId: String,
        cause: Cause, state: EntitlementState?, revocation: Revocation? = nil, facts: PurchaseFacts
    ) {
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
        self.facts = facts
    }

    /// The Kafka key of the event: the customer within its environment and app, so Sandbox and Production
    /// (and two apps) never share a key.
    public var key: String {
        Self.key(environment: self.facts.environment, bundleId: self.facts.bundleId, customer: self.customer)
    }

    /// The key of a customer's events: `environment/bundleId/customer`.
    public static func key(environment: String, bundleId: String, customer: String) -> String {
        "\(environment)/\(bundleId)/\(customer)"
    }

    /// A UUID made from the SHA-256 of the parts joined by U+001F (version 8, RFC 9562 variant), in lower case: the
    /// same every time, in every version (a redelivered notification's events keep their ids). Hashed part by part and
    /// written as text directly: the updater makes one for every event (`EventIDTests` holds it to the first
    /// implementation's `UUID(uuid:).uuidString.lowercased()`).
    static func stableID(_ parts: String...) -> String {
        var hash = SHA256()
        for (index, part) in parts.enumerated() {
            if index > 0 { withUnsafeBytes(of: UInt8(0x1F)) { hash.update(bufferPointer: $0) } }
            var part = part
            part.withUTF8 { hash.update(bufferPointer: UnsafeRawBufferPointer($0)) }
        }
        return hash.finalize().withUnsafeBytes { digest in
            String(unsafeUninitializedCapacity: 36) { text in
                var at = 0
                for index in 0..<16 {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        text[at] = UInt8(ascii: "-")
                        at += 1
                    }
                    var byte = digest[index]
                    if index == 6 { byte = (byte & 0x0F) | 0x80 }
                    if index == 8 { byte = (byte & 0x3F) | 0x80 }
                    text[at] = Hex.digit(byte >> 4)
                    text[at + 1] = Hex.digit(byte & 0x0F)
                    at += 2
                }
                return at
            }
        }
    }

    // MARK: Flat coding

    private enum CodingKeys: String, CodingKey {
        case eventId, eventType, schemaVersion, occurredAt, stream, subject, customer, productId, cause, state,
            revocation
        case previousProductId, previousCustomer, responseDeadline, consumptionRequestReason, massExtension, migration,
            refundedItems, sequence
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        self.eventId = try c.decode(String.self, forKey: .eventId)
        self.eventType = try c.decode(String.self, forKey: .eventType)
        self.schemaVersion = try c.decode(Int.self, forKey: .schemaVersion)
        self.occurredAt = try c.decode(Int64.self, forKey: .occurredAt)
        self.stream = try c.decode(Stream.self, forKey: .stream)
        self.subject = try c.decode(String.self, forKey: .subject)
        self.customer = try c.decode(String.self, forKey: .customer)
        self.productId = try c.decode(String.self, forKey: .productId)
        self.cause = try c.decode(Cause.self, forKey: .cause)
        self.state = try c.decodeIfPresent(EntitlementState.self, forKey: .state)
        self.revocation = try c.decodeIfPresent(Revocation.self, forKey: .revocation)
        self.previousProductId = try c.decodeIfPresent(String.self, forKey: .previousProductId)
        self.previousCustomer = try c.decodeIfPresent(String.self, forKey: .previousCustomer)
        self.responseDeadline = try c.decodeIfPresent(Int64.self, forKey: .responseDeadline)
        self.consumptionRequestReason = try c.decodeIfPresent(String.self, forKey: .consumptionRequestReason)
        self.massExtension = try c.decodeIfPresent(MassExtension.self, forKey: .massExtension)
        self.migration = try c.decodeIfPresent(Migration.self, forKey: .migration)
        self.refundedItems = try c.decodeIfPresent([RefundedItem].self, forKey: .refundedItems)
        self.sequence = try c.decodeIfPresent(Int64.self, forKey: .sequence)
        self.facts = try PurchaseFacts(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(self.eventId, forKey: .eventId)
        try c.encode(self.eventType, forKey: .eventType)
        try c.encode(self.schemaVersion, forKey: .schemaVersion)
        try c.encode(self.occurredAt, forKey: .occurredAt)
        try c.encode(self.stream, forKey: .stream)
        try c.encode(self.subject, forKey: .subject)
        try c.encode(self.customer, forKey: .customer)
        try c.encode(self.productId, forKey: .productId)
        try c.encode(self.cause, forKey: .cause)
        try c.encodeIfPresent(self.state, forKey: .state)
        try c.encodeIfPresent(self.revocation, forKey: .revocation)
        try c.encodeIfPresent(self.previousProductId, forKey: .previousProductId)
        try c.encodeIfPresent(self.previousCustomer, forKey: .previousCustomer)
        try c.encodeIfPresent(self.responseDeadline, forKey: .responseDeadline)
        try c.encodeIfPresent(self.consumptionRequestReason, forKey: .consumptionRequestReason)
        try c.encodeIfPresent(self.massExtension, forKey: .massExtension)
        try c.encodeIfPresent(self.migration, forKey: .migration)
        try c.encodeIfPresent(self.refundedItems, forKey: .refundedItems)
        try c.encodeIfPresent(self.sequence, forKey: .sequence)
        try self.facts.encode(to: encoder)
    }
}

/// A request for refund-resolver to fetch the subscription's current status from the App Store.
public struct StatusRequest: Codable, Hashable, Sendable {
    /// Stable per notification, so re-applying it asks once.
    public var requestId: String
    public var originalTransactionId: String
    /// The environment the subscription lives in: the request goes to that environment's API.
    public var environment: String
    /// The app the subscription belongs to: the request's token names it (`bid`). Absent in records written
    /// before version 2 of the pipeline; the resolver then uses its default app.
    public var bundleId: String?
    public var reason: String
    public var notificationUUID: String

    public init(
        requestId: String, originalTransactionId: String, environment: String, bundleId: String?, reason: String,
        notificationUUID: String
    ) {
        self.requestId = requestId
        self.originalTransactionId = originalTransactionId
        self.environment = environment
        self.bundleId = bundleId
        self.reason = reason
        self.notificationUUID = notificationUUID
    }

    /// The Kafka key: the subscription within its environment and app.
    public var key: String {
        EntitlementEvent.key(
            environment: self.environment, bundleId: self.bundleId ?? "", customer: self.originalTransactionId)
    }

    /// Why the updater asks (the `reason` it writes; stable, so operators count requests by it).
    public enum Reason {
        /// A REFUND of a subscription without `data.status`: which period, and whether a newer one runs, is unknown.
        public static let refundWithoutStatus = "refund without data.status"
        /// `data.status` active beside a transaction that had ended when the notification was signed, and no newer
        /// stored period running then: the subscription runs, until when is unknown.
        public static let activeStatusOfEarlierPeriod = "data.status active about an earlier period"
        /// A REFUND_REVERSED of an earlier period without `data.status`.
        public static let reversalOfEarlierPeriod = "refund reversal of an earlier period without data.status"
        /// The first input of a migrated subscription is an earlier period of it with an active status.
        public static let migrationWithEarlierPeriod = "migration first seen with an earlier period"
        /// An operator asked the console to resync a customer from Apple (written by customer-api, not the updater).
        public static let supportResync = "support resync"
    }
}
