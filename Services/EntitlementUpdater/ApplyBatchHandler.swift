import Entitlements
import Foundation
import Logging
import NotificationPipeline
import Prometheus
import RdKafka
import ServiceRuntime
import Storage

/// Applies each verified notification (or refund-resolver's status snapshot, or a purchase customer-api
/// posted, told apart by the `schema` header) of a batch in its own database transaction; an undecodable record goes to the DLQ. Records are split into `lanes` by subject (the Kafka key): lanes run concurrently,
/// each in consumption order, so one subject's notifications are still applied in order. Returns once every
/// effect is committed (and every DLQ record acknowledged), so the loop stores offsets only after the commits.
struct ApplyBatchHandler: BatchHandler {
    let repository: EntitlementRepository
    let producer: KafkaProducer
    let topics: PipelineTopics
    let outcomes: LabelledCounter
    var lanes = 8
    /// How long one record's transaction may take before it is abandoned and the batch retried
    /// (`DATABASE_TRANSACTION_TIMEOUT_MS`).
    var transactionTimeout: Duration = .seconds(30)

    func handle(_ records: [ConsumerRecord]) async throws {
        var byLane: [Int: [ConsumerRecord]] = [:]
        for record in records {
            var hasher = Hasher()
            hasher.combine(record.key ?? [])
            byLane[abs(hasher.finalize() % max(self.lanes, 1)), default: []].append(record)
        }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for lane in byLane.values {
                group.addTask { try await self.apply(lane) }
            }
            try await group.waitForAll()
        }
    }

    /// Applies one lane's records in order.
    private func apply(_ records: [ConsumerRecord]) async throws {
        var dead: [PendingDelivery] = []
        for record in records {
            let receivedAt = record.header(PipelineHeaders.receivedAt)?.text.flatMap { Int64($0) }
            let repository = self.repository, topics = self.topics
            let result: ApplyResult
            let schema = record.header(PipelineHeaders.schema)?.text
            if schema == StatusSnapshot.schema,
               let value = record.value, let snapshot = try? JSONDecoder().decode(StatusSnapshot.self, from: Data(value)) {
                result = try await self.committed { try await repository.apply(snapshot, receivedAt: receivedAt, topics: topics) }
            } else if schema == AppPurchaseRecord.schema,
                      let value = record.value, let purchase = try? JSONDecoder().decode(AppPurchaseRecord.self, from: Data(value)) {
                result = try await self.committed { try await repository.apply(purchase, receivedAt: receivedAt, topics: topics) }
            } else if schema == ConsumptionOutcome.schema,
                      let value = record.value, let outcome = try? JSONDecoder().decode(ConsumptionOutcome.self, from: Data(value)) {
                try await self.committed { try await repository.apply(outcome) }
                self.count("consumption-outcome")
                continue
            } else if schema == ConsumptionFactsRecord.schema,
                      let value = record.value, let facts = try? JSONDecoder().decode(ConsumptionFactsRecord.self, from: Data(value)) {
                try await self.committed { try await repository.apply(facts) }
                self.count("consumption-facts")
                continue
            } else if let value = record.value, let verified = try? JSONDecoder().decode(VerifiedNotificationRecord.self, from: Data(value)) {
                result = try await self.committed { try await repository.apply(verified, receivedAt: receivedAt, topics: topics) }
            } else {
                dead.append(try await self.producer.enqueue(self.deadLetter(record)))
                self.count("dead-lettered")
                continue
            }
            switch result {
            case .duplicate: self.count("duplicate")
            case .recorded(let outcome): self.count(outcome.rawValue)
            }
        }
        for delivery in dead { _ = try await delivery.report }
    }

    /// Runs one record's transaction within the transaction timeout: a transaction stuck on a connection that a
    /// database crash cut is abandoned, so the batch is retried on a fresh connection (the log insert makes the
    /// retry a duplicate if the first attempt did commit).
    private func committed<T: Sendable>(_ transaction: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withAbandoningDeadline(self.transactionTimeout, transaction)
    }

    /// A DLQ record for a message that is not a verified-notification record.
    private func deadLetter(_ record: ConsumerRecord) throws -> ProducerRecord {
        let rejected = RejectedNotificationRecord(
            reason: "format", detail: "not an \(VerifiedNotificationRecord.schema), \(StatusSnapshot.schema), \(AppPurchaseRecord.schema) or \(ConsumptionOutcome.schema) record", notificationUUID: nil, original: .init(record))
        return ProducerRecord(topic: self.topics.rejected, key: record.key, value: try rejected.encoded(), headers: record.headers)
    }

    /// Counts notifications by outcome.
    private func count(_ outcome: String) {
        self.outcomes.increment(outcome)
    }
}
