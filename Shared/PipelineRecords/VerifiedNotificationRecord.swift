public import AppStoreModels
import Foundation

/// The value written to the verified topic: the notification with every JWS verified and decoded, and where
/// Apple's signed original is kept (the raw message). Its own keys are sorted and its parts are either Apple's
/// JSON or canonical JSON, so verifying the same input twice gives the same bytes: a redelivered message is an
/// exact repeat.
///
/// v2 carries each part once. v1 also carried the signed payload (the decoded parts a second time, ~18 KB of
/// the ~25 KB record); v2 leaves `notification.signedPayload` empty and names the raw topic's message that
/// holds it in `source`. Readers accept both: a v1 record decodes as a v2 record without `source`.
///
/// The chain-verifier writes `notification`'s parts as the JSON Apple signed (``encoding(_:json:source:)``):
/// `transaction`, `renewalInfo` and `appTransaction` byte for byte, `payload` byte for byte but for its nested
/// JWS strings, which are `null`. Their keys come in Apple's order and fields this code does not model are
/// kept; the record's own keys are canonical. Decoding gives the same values either way.
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
        self.subject = Self.subject(of: notification)
        self.environment = Self.environment(of: notification)
        self.validatedAt = notification.payload.signedDate
        self.source = source
    }

    /// The record's ``subject`` for a notification: its Kafka key.
    public static func subject(of notification: VerifiedNotification) -> String {
        NotificationSubject.of(notification.payload, transaction: notification.transaction)
    }

    /// The record's ``environment`` for a notification.
    public static func environment(of notification: VerifiedNotification) -> String {
        notification.payload.rawEnvironment ?? "unknown"
    }

    /// Canonical JSON bytes.
    public func encoded() throws -> [UInt8] {
        Array(try AppStoreJSON.makeCanonicalEncoder().encode(self))
    }

    // MARK: Apple's JSON kept

    /// The record of a verified notification read from `source`, and its JSON bytes with Apple's signed JSON
    /// (`json`, from ``SignedDataVerifier/verifyNotificationKeepingJSON(_:)``) written as it is instead of
    /// encoding the decoded values again (encoding them was a tenth of the chain-verifier's CPU):
    /// `notification.transaction`, `.renewalInfo` and `.appTransaction` byte for byte, and `notification.payload`
    /// byte for byte except that its nested JWS strings are `null`. Each part falls back to the canonical
    /// encoding where its JSON is missing, so with an empty `json` the bytes are ``encoded()``'s (strings with
    /// control characters may use other, equally valid escapes).
    public static func encoding(_ notification: VerifiedNotification, json: VerifiedJSON, source: Source? = nil) throws
        -> (record: VerifiedNotificationRecord, bytes: [UInt8])
    {
        let record = VerifiedNotificationRecord(notification: notification, source: source)
        return (record, try Self.bytes(notification, json: json, source: source))
    }

    /// The bytes of ``encoding(_:json:source:)`` without building the record: the chain-verifier writes them for
    /// every notification, and copying the decoded notification into a record (and destroying it again) was ~1 % of
    /// its CPU.
    public static func bytes(_ notification: VerifiedNotification, json: VerifiedJSON, source: Source? = nil) throws
        -> [UInt8]
    {
        let signedStrings = [
            ("signedTransactionInfo", notification.payload.data?.signedTransactionInfo),
            ("signedRenewalInfo", notification.payload.data?.signedRenewalInfo),
            ("signedAppTransactionInfo", notification.payload.appData?.signedAppTransactionInfo),
        ].compactMap { key, value in value.map { (key: key, value: $0) } }
        /// The canonical encoding of a part whose JSON is missing.
        func canonical(_ value: some Encodable) throws -> [UInt8] {
            Array(try AppStoreJSON.makeCanonicalEncoder().encode(value))
        }
        let payload =
            try json.payload.flatMap { SignedStringRemoval.replacingWithNull(signedStrings, in: $0) }
            ?? canonical(VerifiedNotificationRecord(notification: notification).notification.payload)
        var out: [UInt8] = []
        out.reserveCapacity(
            payload.count + (json.transaction?.count ?? 0) + (json.renewalInfo?.count ?? 0)
                + (json.appTransaction?.count ?? 0) + 512)
        // Keys in sorted order, as the canonical encoder writes them. A part is written when its decoded value is
        // present; the record's `signedPayload` is always empty.
        out.append(contentsOf: #"{"environment":"#.utf8)
        JSONText.appendQuoted(Self.environment(of: notification), to: &out)
        out.append(contentsOf: #","notification":{"#.utf8)
        if let appTransaction = notification.appTransaction {
            out.append(contentsOf: #""appTransaction":"#.utf8)
            out.append(contentsOf: try json.appTransaction ?? canonical(appTransaction))
            out.append(UInt8(ascii: ","))
        }
        out.append(contentsOf: #""payload":"#.utf8)
        out.append(contentsOf: payload)
        if let renewalInfo = notification.renewalInfo {
            out.append(contentsOf: #","renewalInfo":"#.utf8)
            out.append(contentsOf: try json.renewalInfo ?? canonical(renewalInfo))
        }
        out.append(contentsOf: #","signedPayload":"""#.utf8)
        if let transaction = notification.transaction {
            out.append(contentsOf: #","transaction":"#.utf8)
            out.append(contentsOf: try json.transaction ?? canonical(transaction))
        }
        out.append(contentsOf: #"},"schema":"#.utf8)
        JSONText.appendQuoted(Self.schema, to: &out)
        if let source {
            out.append(contentsOf: #","source":{"offset":"#.utf8)
            out.append(contentsOf: String(source.offset).utf8)
            out.append(contentsOf: #","partition":"#.utf8)
            out.append(contentsOf: String(source.partition).utf8)
            out.append(contentsOf: #","topic":"#.utf8)
            JSONText.appendQuoted(source.topic, to: &out)
            out.append(UInt8(ascii: "}"))
        }
        out.append(contentsOf: #","subject":"#.utf8)
        JSONText.appendQuoted(Self.subject(of: notification), to: &out)
        if let validatedAt = notification.payload.signedDate {
            out.append(contentsOf: #","validatedAt":"#.utf8)
            out.append(contentsOf: String(validatedAt.millisecondsSince1970).utf8)
        }
        out.append(UInt8(ascii: "}"))
        return out
    }
}
