public import AppStoreModels
import Foundation
public import PipelineRecords
public import RdKafka

/// The records of the verified topic: the chain-verifier's verified notifications and what the other producers
/// write, keyed by their subject like the subscription's notifications, with the `schema` header the updater tells
/// them apart by, each signed by its producer (``RecordSigner``): unsigned, or of a kind its producer may not
/// write, the updater refuses them.
public enum VerifiedTopicRecords {
    /// A verified notification (chain-verifier): the record of ``VerifiedNotificationRecord/bytes(_:json:source:)``
    /// keyed by its subject, with the ingest headers it `carries` (received-at, request-id), its environment, app,
    /// verification time and schema, and Apple's `signedPayload` in `apple-signed-payload` for the updater's own
    /// check of Apple's signature (``AppleSignatureCheck``).
    public static func notification(
        _ verified: VerifiedNotification, json: VerifiedJSON, source: VerifiedNotificationRecord.Source,
        carrying: [KafkaHeader], topics: PipelineTopics, signing: RecordSigner, verifiedAt: Date = Date()
    ) throws -> ProducerRecord {
        let value = try VerifiedNotificationRecord.bytes(verified, json: json, source: source)
        let environment = VerifiedNotificationRecord.environment(of: verified)
        let headers =
            carrying + [
                KafkaHeader(name: PipelineHeaders.environment, text: environment),
                KafkaHeader(name: PipelineHeaders.bundleId, text: verified.payload.bundleId ?? ""),
                KafkaHeader(
                    name: PipelineHeaders.verifiedAt, text: String(Int64(verifiedAt.timeIntervalSince1970 * 1000))),
                KafkaHeader(name: PipelineHeaders.schema, text: VerifiedNotificationRecord.schema),
                KafkaHeader(name: PipelineHeaders.appleSignedPayload, text: verified.signedPayload),
            ]
        return signing.sign(
            ProducerRecord(
                topic: topics.verified, key: Array(VerifiedNotificationRecord.subject(of: verified).utf8), value: value,
                headers: headers))
    }

    /// A status snapshot (refund-resolver's answer, or `iapctl resync`).
    public static func snapshot(
        _ snapshot: StatusSnapshot, topics: PipelineTopics, requestId: String, signing: RecordSigner,
        receivedAt: Date = Date()
    ) throws -> ProducerRecord {
        signing.sign(
            ProducerRecord(
                topic: topics.verified, key: Array(snapshot.subject.utf8), value: try snapshot.encoded(),
                headers: Self.headers(
                    schema: StatusSnapshot.schema, environment: snapshot.environment, bundleId: snapshot.bundleId,
                    receivedAt: receivedAt)
                    + [KafkaHeader(name: PipelineHeaders.requestID, text: requestId)]))
    }

    /// What became of a consumption answer (refund-resolver), keyed by the purchase.
    public static func consumptionOutcome(
        _ outcome: ConsumptionOutcome, topics: PipelineTopics, signing: RecordSigner,
        receivedAt: Date = Date()
    ) throws -> ProducerRecord {
        signing.sign(
            ProducerRecord(
                topic: topics.verified, key: Array(outcome.originalTransactionId.utf8), value: try outcome.encoded(),
                headers: Self.headers(
                    schema: ConsumptionOutcome.schema, environment: outcome.environment, bundleId: outcome.bundleId,
                    receivedAt: receivedAt)))
    }

    /// Consumption facts the app team recorded (customer-api), keyed by the customer.
    public static func consumptionFacts(
        _ record: ConsumptionFactsRecord, topics: PipelineTopics, signing: RecordSigner,
        receivedAt: Date = Date()
    ) throws -> ProducerRecord {
        signing.sign(
            ProducerRecord(
                topic: topics.verified, key: Array(record.customer.utf8), value: try record.encoded(),
                headers: Self.headers(
                    schema: ConsumptionFactsRecord.schema, environment: record.environment, bundleId: record.bundleId,
                    receivedAt: receivedAt)))
    }

    /// A purchase the app posted (customer-api) or `iapctl resync` imported.
    public static func appPurchase(
        _ record: AppPurchaseRecord, topics: PipelineTopics, signing: RecordSigner,
        receivedAt: Date = Date()
    ) throws -> ProducerRecord {
        signing.sign(
            ProducerRecord(
                topic: topics.verified, key: Array(record.subject.utf8), value: try record.encoded(),
                headers: Self.headers(
                    schema: AppPurchaseRecord.schema, environment: record.environment, bundleId: record.bundleId,
                    receivedAt: receivedAt)
                    + [KafkaHeader(name: PipelineHeaders.requestID, text: record.requestId)]))
    }

    /// The headers every such record carries.
    private static func headers(schema: String, environment: String, bundleId: String, receivedAt: Date)
        -> [KafkaHeader]
    {
        [
            KafkaHeader(name: PipelineHeaders.schema, text: schema),
            KafkaHeader(name: PipelineHeaders.environment, text: environment),
            KafkaHeader(name: PipelineHeaders.bundleId, text: bundleId),
            KafkaHeader(name: PipelineHeaders.receivedAt, text: String(Int64(receivedAt.timeIntervalSince1970 * 1000))),
        ]
    }
}
