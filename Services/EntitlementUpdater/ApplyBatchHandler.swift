import AppStoreModels
import EntitlementDecisions
import Entitlements
import Foundation
import Logging
import NotificationPipeline
import PipelineRecords
import Prometheus
import RdKafka
import ServiceRuntime
import Storage
import Tracing

/// Applies a batch of verified notifications (and refund-resolver's status snapshots, and purchases customer-api
/// posted, told apart by the `schema` header); an undecodable record goes to the DLQ. Records are split into
/// `lanes` by subject (the Kafka key): lanes run concurrently, each in consumption order, so one subject's
/// notifications are still applied in order. A lane applies its consecutive entitlement inputs in transactions
/// of up to `transactionSize` (one commit each, see ``EntitlementRepository/apply(_:)``); a
/// consumption record is applied alone, after the inputs before it. Returns once every effect is committed (and
/// every DLQ record acknowledged), so the loop stores offsets only after the commits.
struct ApplyBatchHandler: BatchHandler {
    let repository: EntitlementRepository
    let producer: KafkaProducer
    let topics: PipelineTopics
    /// Only records whose signature one of these keys reproduces change state; the rest go to the DLQ.
    let signing: RecordVerifier
    /// When set, a verified notification changes state only when it holds exactly what Apple signed in its
    /// `apple-signed-payload` header (`UPDATER_APPLE_SIGNATURE_CHECK`).
    var appleSignature: AppleSignatureCheck?
    let outcomes: LabelledCounter
    var lanes = 8
    /// How many inputs one transaction applies at most (`UPDATER_TRANSACTION_SIZE`).
    var transactionSize = 50
    /// How long one transaction may take before it is abandoned and the batch retried
    /// (`DATABASE_TRANSACTION_TIMEOUT_MS`).
    var transactionTimeout: Duration = .seconds(30)
    /// Where the newest applied notification's signedDate is reported; nil: not reported.
    var freshness: NewestAppliedNotification?

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

    /// What one consumed record is.
    private enum Decoded {
        case input(EntitlementInput)
        case consumptionOutcome(ConsumptionOutcome)
        case consumptionFacts(ConsumptionFactsRecord)
        case undecodable
        /// Not signed by a producer of the verified topic that may write its kind (``RecordVerifier``), or a
        /// notification that is not what Apple signed (``AppleSignatureCheck``): why.
        case unauthenticated(String)
    }

    /// Applies one lane's records in order.
    private func apply(_ records: [ConsumerRecord]) async throws {
        var dead: [PendingDelivery] = []
        var inputs: [EntitlementInput] = []
        for record in records {
            switch try await self.decode(record) {
            case .input(var input):
                // The trace the record continues (the chain-verifier's span, or customer-api's request).
                input.traceParent = record.headers.last { $0.name == "traceparent" }?.text
                inputs.append(input)
                if inputs.count >= self.transactionSize { try await self.flush(&inputs) }
            case .consumptionOutcome(let outcome):
                try await self.flush(&inputs)
                try await self.committed { try await self.repository.apply(outcome) }
                self.count("consumption-outcome")
            case .consumptionFacts(let facts):
                try await self.flush(&inputs)
                try await self.committed { try await self.repository.apply(facts) }
                self.count("consumption-facts")
            case .undecodable:
                dead.append(try await self.producer.enqueue(self.deadLetter(record)))
                self.count("dead-lettered")
            case .unauthenticated(let refusal):
                dead.append(
                    try await self.producer.enqueue(
                        self.deadLetter(record, reason: "unauthenticated", detail: refusal)))
                self.count("unauthenticated")
            }
        }
        try await self.flush(&inputs)
        for delivery in dead { _ = try await delivery.report }
    }

    /// Applies the collected inputs in one transaction and counts their outcomes.
    private func flush(_ inputs: inout [EntitlementInput]) async throws {
        guard !inputs.isEmpty else { return }
        // A span per input in its notification's trace, from before the transaction to its commit; the events it
        // writes to the outbox name this span as their parent.
        var spans: [any Span] = []
        for index in inputs.indices where inputs[index].traceParent != nil {
            let span = startSpan(
                "apply notification", context: TraceHeaders.context(traceParent: inputs[index].traceParent),
                ofKind: .consumer)
            inputs[index].traceParent = TraceHeaders.traceParent(of: span.context)
            spans.append(span)
        }
        defer { spans.forEach { $0.end() } }
        let batch = inputs, repository = self.repository
        inputs.removeAll(keepingCapacity: true)
        for result in try await self.committed({ try await repository.apply(batch) }) {
            switch result {
            case .duplicate: self.count("duplicate")
            case .recorded(let outcome): self.count(outcome.rawValue)
            }
        }
        self.freshness?.observe(
            batch.compactMap { input in
                guard case .notification(let record) = input.kind else { return nil }
                return record.notification.payload.signedDate?.millisecondsSince1970
            })
    }

    /// The record's kind by its `schema` header (a verified notification when it has none), once its signature
    /// is checked (and, for a notification, Apple's); unauthenticated and undecodable records go to the DLQ.
    private func decode(_ record: ConsumerRecord) async throws -> Decoded {
        if let refusal = self.signing.refusal(of: record) { return .unauthenticated(refusal.description) }
        guard let value = record.value else { return .undecodable }
        let receivedAt = record.header(PipelineHeaders.receivedAt)?.text.flatMap { Int64($0) }
        let decoder = FastJSONDecoder()
        switch record.header(PipelineHeaders.schema)?.text {
        case StatusSnapshot.schema:
            if let snapshot = try? decoder.decode(StatusSnapshot.self, from: value) {
                return .input(EntitlementInput(.snapshot(snapshot), receivedAt: receivedAt))
            }
        case AppPurchaseRecord.schema:
            if let purchase = try? decoder.decode(AppPurchaseRecord.self, from: value) {
                return .input(EntitlementInput(.purchase(purchase), receivedAt: receivedAt))
            }
        case ConsumptionOutcome.schema:
            if let outcome = try? decoder.decode(ConsumptionOutcome.self, from: value) {
                return .consumptionOutcome(outcome)
            }
        case ConsumptionFactsRecord.schema:
            if let facts = try? decoder.decode(ConsumptionFactsRecord.self, from: value) {
                return .consumptionFacts(facts)
            }
        default:
            break
        }
        if let verified = try? decoder.decode(VerifiedNotificationRecord.self, from: value) {
            if let check = self.appleSignature,
                let refusal = try await check.refusal(
                    of: verified, signedPayload: record.header(PipelineHeaders.appleSignedPayload)?.value)
            {
                return .unauthenticated(refusal.description)
            }
            return .input(EntitlementInput(.notification(verified), receivedAt: receivedAt))
        }
        return .undecodable
    }

    /// Runs one transaction within the transaction timeout: a transaction stuck on a connection that a
    /// database crash cut is abandoned, so the batch is retried on a fresh connection (the log insert makes the
    /// retry a duplicate if the first attempt did commit).
    private func committed<T: Sendable>(_ transaction: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withAbandoningDeadline(self.transactionTimeout, transaction)
    }

    /// A DLQ record for a message that is not a verified-topic record (`format`), or not signed by a producer of
    /// the topic (`unauthenticated`).
    private func deadLetter(_ record: ConsumerRecord, reason: String = "format", detail: String? = nil) throws
        -> ProducerRecord
    {
        let rejected = RejectedNotificationRecord(
            reason: reason,
            detail: detail
                ?? "not an \(VerifiedNotificationRecord.schema), \(StatusSnapshot.schema), \(AppPurchaseRecord.schema) or \(ConsumptionOutcome.schema) record",
            notificationUUID: nil, original: .init(record))
        return ProducerRecord(
            topic: self.topics.rejected, key: record.key, value: try rejected.encoded(), headers: record.headers)
    }

    /// Counts notifications by outcome.
    private func count(_ outcome: String) {
        self.outcomes.increment(outcome)
    }
}
