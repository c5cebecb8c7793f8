import Foundation
import PipelineRecords
public import RdKafka
public import ServiceRuntime

/// Signs the records one producer writes to the verified topic: the `record-producer` and `record-signed-at`
/// headers name who made the record and when, and `record-signature` carries the MAC of the producer's first
/// key over them and the record's schema, key and value. Only the kinds ``RecordProducer/kinds`` lists for the
/// producer are applied by the updater; others are refused there as `unauthenticated`.
public struct RecordSigner: Sendable {
    public let producer: RecordProducer
    let keys: RecordSigningKeys

    /// A signer for `producer` with its keys (the first signs).
    public init(_ producer: RecordProducer, keys: RecordSigningKeys) {
        self.producer = producer
        self.keys = keys
    }

    /// A signer for `producer` with its keys from `RECORD_SIGNING_KEYS` or `RECORD_SIGNING_KEYS_FILE`.
    public init(_ producer: RecordProducer, _ settings: EnvironmentSettings) throws(SettingsError) {
        self.init(producer, keys: try RecordSigningKeys(settings))
    }

    /// The record with its producer, time and signature headers (replacing any it had).
    public func sign(_ record: ProducerRecord, at date: Date = Date()) -> ProducerRecord {
        let key = self.keys.keys[0]
        let parts = RecordSignatureParts(
            producer: self.producer.rawValue, signedAt: String(Int64(date.timeIntervalSince1970 * 1000)),
            schema: record.headers.first { $0.name == PipelineHeaders.schema }?.text, key: record.key,
            value: record.value)
        var signed = record
        signed.headers.removeAll {
            [PipelineHeaders.recordProducer, PipelineHeaders.recordSignedAt, PipelineHeaders.recordSignature]
                .contains($0.name)
        }
        signed.headers += [
            KafkaHeader(name: PipelineHeaders.recordProducer, text: parts.producer),
            KafkaHeader(name: PipelineHeaders.recordSignedAt, text: parts.signedAt),
            KafkaHeader(name: PipelineHeaders.recordSignature, text: key.id + ":" + RecordMAC.mac(key.keyed, parts)),
        ]
        return signed
    }
}
