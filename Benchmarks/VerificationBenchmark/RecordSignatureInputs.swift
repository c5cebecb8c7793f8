import Crypto
import Foundation
import NotificationPipeline
import PipelineRecords
import RdKafka

/// The cost of the verified topic's record signatures, per record, on a record the size of a real verified
/// notification: the bare HMAC-SHA256 of its bytes (the baseline), signing as a producer, and the updater's check
/// (producer, kind, key, MAC), beside one P-256 verify (what checking Apple's signature again would add at least).
struct RecordSignatureInputs {
    private let secret = SymmetricKey(data: Array(repeating: UInt8(7), count: 32))
    private let record: ProducerRecord
    private let signed: ConsumerRecord
    private let signer: RecordSigner
    private let verifier: RecordVerifier
    /// The record value's size.
    var valueBytes: Int { self.record.value?.count ?? 0 }

    /// Inputs around a value of `value`'s bytes.
    init(value: [UInt8]) throws {
        let keys = try RecordSigningKeys([(id: "bench", secret: Array(repeating: UInt8(7), count: 32))])
        self.signer = RecordSigner(.chainVerifier, keys: keys)
        self.verifier = RecordVerifier([.chainVerifier: keys])
        self.record = ProducerRecord(
            topic: "appstore.notifications.verified", key: Array("Production/com.example.app/2000000012345678".utf8),
            value: value,
            headers: [
                KafkaHeader(name: PipelineHeaders.schema, text: VerifiedNotificationRecord.schema),
                KafkaHeader(name: PipelineHeaders.environment, text: "Production"),
                KafkaHeader(name: PipelineHeaders.receivedAt, text: "1700000000000"),
            ])
        let signed = self.signer.sign(self.record)
        self.signed = ConsumerRecord(
            topic: signed.topic, partition: 0, offset: 0, key: signed.key, value: signed.value, headers: signed.headers)
        guard self.verifier.refusal(of: self.signed) == nil else {
            throw BenchmarkError("the signed record is refused")
        }
    }

    /// HMAC-SHA256 over the key and value alone.
    func macOnce() {
        var hmac = HMAC<SHA256>(key: self.secret)
        hmac.update(data: self.record.key ?? [])
        hmac.update(data: self.record.value ?? [])
        precondition(hmac.finalize().byteCount == 32)
    }

    /// Signs the record as chain-verifier.
    func signOnce() {
        precondition(self.signer.sign(self.record).headers.count == 6)
    }

    /// The updater's check of a signed record.
    func checkOnce() {
        precondition(self.verifier.refusal(of: self.signed) == nil)
    }
}

/// A benchmark input that is not what it should be.
struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
