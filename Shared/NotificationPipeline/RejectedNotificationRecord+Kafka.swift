import AppStoreModels
import Foundation
import JWSVerification
public import PipelineRecords
public import RdKafka

// MARK: - The DLQ record read from and written back to Kafka, and the app it is about (decoded without verification)

extension RejectedNotificationRecord.OriginalMessage {
    /// The original of a consumed message: key, value and headers as UTF-8 text, and its position.
    public init(_ record: ConsumerRecord) {
        self.init(
            topic: record.topic, partition: record.partition, offset: record.offset,
            key: record.key.map { String(decoding: $0, as: UTF8.self) },
            value: record.value.map { String(decoding: $0, as: UTF8.self) },
            headers: Dictionary(
                record.headers.map { ($0.name, $0.text ?? "") }, uniquingKeysWith: { first, _ in first }))
    }
}

extension RejectedNotificationRecord {
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

    /// The original message to send back to its topic (marked `replayed-from` the DLQ position), or nil when the
    /// original value was not kept. `iapctl replay` and the console's replay use it.
    public func replayRecord(from position: String) -> ProducerRecord? {
        guard let value = self.original.value else { return nil }
        var headers = self.original.headers.sorted { $0.key < $1.key }.map { KafkaHeader(name: $0.key, text: $0.value) }
        headers.append(KafkaHeader(name: "replayed-from", text: position))
        return ProducerRecord(
            topic: self.original.topic, key: self.original.key.map { Array($0.utf8) }, value: Array(value.utf8),
            headers: headers)
    }
}
