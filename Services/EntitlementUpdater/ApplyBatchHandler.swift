import Entitlements
import Foundation
import Logging
import NotificationPipeline
import Prometheus
import RdKafka
import ServiceRuntime
import Storage

/// Applies each verified notification of a batch, in order, each in its own database transaction; an
/// undecodable record goes to the DLQ. Returns once every effect is committed (and every DLQ record
/// acknowledged), so the loop stores offsets only after the database commit.
struct ApplyBatchHandler: BatchHandler {
    let repository: EntitlementRepository
    let producer: KafkaProducer
    let topics: PipelineTopics
    let registry: PrometheusCollectorRegistry

    func handle(_ records: [ConsumerRecord]) async throws {
        var dead: [PendingDelivery] = []
        for record in records {
            guard let value = record.value, let verified = try? JSONDecoder().decode(VerifiedNotificationRecord.self, from: Data(value)) else {
                dead.append(try await self.producer.enqueue(self.deadLetter(record)))
                self.count("dead-lettered")
                continue
            }
            let receivedAt = record.header(PipelineHeaders.receivedAt)?.text.flatMap { Int64($0) }
            switch try await self.repository.apply(verified, receivedAt: receivedAt, topics: self.topics) {
            case .duplicate: self.count("duplicate")
            case .recorded(let outcome): self.count(outcome.rawValue)
            }
        }
        for delivery in dead { _ = try await delivery.report }
    }

    /// A DLQ record for a message that is not a verified-notification record.
    private func deadLetter(_ record: ConsumerRecord) throws -> ProducerRecord {
        let original = RejectedNotificationRecord.OriginalMessage(
            topic: record.topic, partition: record.partition, offset: record.offset,
            key: record.key.map { String(decoding: $0, as: UTF8.self) }, value: record.value.map { String(decoding: $0, as: UTF8.self) },
            headers: Dictionary(record.headers.map { ($0.name, $0.text ?? "") }, uniquingKeysWith: { first, _ in first }))
        let rejected = RejectedNotificationRecord(
            reason: "format", detail: "not an \(VerifiedNotificationRecord.schema) record", notificationUUID: nil, original: original)
        return ProducerRecord(topic: self.topics.rejected, key: record.key, value: try rejected.encoded(), headers: record.headers)
    }

    /// Counts notifications by outcome.
    private func count(_ outcome: String) {
        self.registry.makeCounter(
            descriptor: MetricNameDescriptor(namespace: "entitlement_updater", metricName: "notifications", unitName: "total",
                                             helpText: "Verified notifications by outcome"),
            labels: [("outcome", outcome)]).increment()
    }
}
