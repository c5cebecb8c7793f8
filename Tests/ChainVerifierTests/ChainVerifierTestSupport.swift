import AppStoreModels
import AppStoreSigning
import Foundation
import JWSVerification
import NotificationPipeline
import PipelineRecords
import RdKafka
import TestSupport

/// Raw messages as ingest would produce them, for the chain verifier to consume.
enum RawMessages {
    /// A raw record for a signed notification: Apple's body, keyed by subject, with ingest's headers.
    static func record(_ signedPayload: String, subject: String, topic: String, environment: String = "Sandbox")
        -> ProducerRecord
    {
        ProducerRecord(
            topic: topic, key: Array(subject.utf8), value: Array("{\"signedPayload\":\"\(signedPayload)\"}".utf8),
            headers: [
                KafkaHeader(name: PipelineHeaders.environment, text: environment),
                KafkaHeader(name: PipelineHeaders.requestID, text: "req-\(subject)"),
            ])
    }

    /// A notification for subscription `original`, the `sequence`-th in its life, signed by `signer`.
    static func notification(
        uuid: String, original: String, sequence: Int, signer: AppStoreSigner,
        environment: Environment = .sandbox, bundleId: String = SignedFixtures.bundleId
    ) throws -> String {
        let signedDate = Timestamp(
            millisecondsSince1970: SignedFixtures.signedDate.millisecondsSince1970 + Int64(sequence) * 60_000)
        var payload = SignedFixtures.notification(environment: environment, signedDate: signedDate)
        payload.notificationUUID = uuid
        payload.data?.bundleId = bundleId
        var transaction = SignedFixtures.transaction(environment: environment, signedDate: signedDate)
        transaction.bundleId = bundleId
        transaction.originalTransactionId = original
        transaction.transactionId = "\(original)-\(sequence)"
        var renewal = SignedFixtures.renewalInfo(environment: environment, signedDate: signedDate)
        renewal.originalTransactionId = original
        return try signer.signNotification(payload, transaction: transaction, renewalInfo: renewal)
    }

    /// The decoded verified record of a verified-topic message.
    static func verified(_ record: ConsumerRecord) throws -> VerifiedNotificationRecord {
        try JSONDecoder().decode(VerifiedNotificationRecord.self, from: Data(record.value ?? []))
    }

    /// The decoded DLQ record of a rejected-topic message.
    static func rejected(_ record: ConsumerRecord) throws -> RejectedNotificationRecord {
        try JSONDecoder().decode(RejectedNotificationRecord.self, from: Data(record.value ?? []))
    }
}
