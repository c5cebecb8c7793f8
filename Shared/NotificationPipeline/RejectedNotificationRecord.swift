import AppStoreModels
import Foundation
import JWSVerification
public import RdKafka

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

        /// The original of a consumed message: key, value and headers as UTF-8 text, and its position.
        public init(_ record: ConsumerRecord) {
            self.init(
                topic: record.topic, partition: record.partition, offset: record.offset,
                key: record.key.map { String(decoding: $0, as: UTF8.self) }, value: record.value.map { String(decoding: $0, as: UTF8.self) },
                headers: Dictionary(record.headers.map { ($0.name, $0.text ?? "") }, uniquingKeysWith: { first, _ in first }))
        }

        public init(topic: String, partition: Int32, offset: Int64, key: String?, value: String?, headers: [String: String]) {
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

    /// The app the original message is about: its `bundle-id` header, else what its value says (a raw
    /// `{"signedPayload": …}` body's payload, read without verification since it only scopes who may see or
    /// replay it; or the first `bundleId` of a verified-topic record's JSON, nearest the top). nil when neither
    /// says: such a record belongs to no app.
    public var bundleId: String? {
        if let app = self.original.headers[PipelineHeaders.bundleId], !app.isEmpty { return app }
        guard let value = self.original.value else { return nil }
        let bytes = Array(value.utf8)
        if let signed = EnvelopeReader.signedPayload(in: bytes) {
            return (try? UnverifiedJWS(signed).decodePayload(as: ResponseBodyV2DecodedPayload.self))?.bundleId
        }
        var level: [Any] = [(try? JSONSerialization.jsonObject(with: Data(bytes))) as Any]
        while !level.isEmpty {
            var next: [Any] = []
            for case let object as [String: Any] in level {
                if let app = object["bundleId"] as? String, !app.isEmpty { return app }
                next += object.keys.sorted().compactMap { object[$0] }
            }
            level = next
        }
        return nil
    }

    /// Canonical JSON bytes.
    public func encoded() throws -> [UInt8] {
        Array(try AppStoreJSON.makeCanonicalEncoder().encode(self))
    }

    /// The original message to send back to its topic (marked `replayed-from` the DLQ position), or nil when the
    /// original value was not kept. `iapctl replay` and the console's replay use it.
    public func replayRecord(from position: String) -> ProducerRecord? {
        guard let value = self.original.value else { return nil }
        var headers = self.original.headers.sorted { $0.key < $1.key }.map { KafkaHeader(name: $0.key, text: $0.value) }
        headers.append(KafkaHeader(name: "replayed-from", text: position))
        return ProducerRecord(topic: self.original.topic, key: self.original.key.map { Array($0.utf8) }, value: Array(value.utf8), headers: headers)
    }
}
