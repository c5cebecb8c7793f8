import AppStoreModels
import Foundation

/// The value written to the rejected topic (the DLQ): why a raw message was refused, and the message itself,
/// exactly as it was, so that `iapctl replay` can send it back once the cause is fixed.
public struct RejectedNotificationRecord: Codable, Hashable, Sendable {
    /// The value's schema name and version.
    public static let schema = "appstore.notification.rejected/v1"

    /// The original message and where it was read.
    public struct OriginalMessage: Codable, Hashable, Sendable {
        public var topic: String
        public var partition: Int32
        public var offset: Int64
        /// The key as UTF-8 text (keys are subjects).
        public var key: String?
        /// The value, exactly as received, as UTF-8 text (ingest only accepts JSON).
        public var value: String?
        /// Every header, values as UTF-8 text.
        public var headers: [String: String]

        public init(
            topic: String, partition: Int32, offset: Int64, key: String?, value: String?, headers: [String: String]
        ) {
            self.topic = topic
            self.partition = partition
            self.offset = offset
            self.key = key
            self.value = value
            self.headers = headers
        }
    }

    public var schema: String = Self.schema
    /// The class of failure: a ``VerificationError/Kind`` raw value, or `envelope` for a value that is not
    /// Apple's `{"signedPayload": …}` body at all.
    public var reason: String
    /// What exactly was wrong.
    public var detail: String
    /// The notification's UUID when the payload could be decoded (untrusted; for finding it).
    public var notificationUUID: String?
    public var original: OriginalMessage

    /// Creates a DLQ record.
    public init(reason: String, detail: String, notificationUUID: String?, original: OriginalMessage) {
        self.reason = reason
        self.detail = detail
        self.notificationUUID = notificationUUID
        self.original = original
    }

    /// Canonical JSON bytes.
    public func encoded() throws -> [UInt8] {
        Array(try AppStoreJSON.makeCanonicalEncoder().encode(self))
    }
}
