import Logging
import NotificationPipeline
import PipelineRecords
import PostgresNIO
import Prometheus
import RateAndRetry
import RdKafka
import ServiceLifecycle
import ServiceRuntime
import Storage
import Tracing

/// Relays the outbox to the downstream topics until graceful shutdown (a failed relay is retried with backoff
/// while PostgreSQL or the broker is away): each event keyed by
/// `environment/bundleId/customer`, with its id, environment and app as headers, published with the
/// idempotent producer.
struct OutboxPublisher: Service {
    /// The wait after a failed relay: 200 ms doubling to 5 s.
    static let backoff = Backoff(base: .milliseconds(200), maximum: .seconds(5))

    let relay: OutboxRelay
    let producer: KafkaProducer
    let settings: EventPublisherSettings
    let readiness: Readiness
    let published: Counter
    let logger: Logger

    func run() async throws {
        self.readiness.set(true)
        defer { self.readiness.set(false) }
        do {
            try await cancelWhenGracefulShutdown {
                var failures = 0
                while !Task.isShuttingDownGracefully && !Task.isCancelled {
                    do {
                        let count = try await self.relayOnce()
                        failures = 0
                        self.published.increment(by: Int64(count))
                        if count == 0 { try await Task.sleep(for: self.settings.idlePause) }
                    } catch let error where !Self.isCancellation(error) {
                        // PostgreSQL or the broker is away: nothing was marked published, so wait and relay again.
                        failures += 1
                        self.logger.warning(
                            "relay failed, retrying",
                            metadata: ["attempt": "\(failures)", "error": "\(String(reflecting: error))"])
                        try await Task.sleep(for: Self.backoff.delay(attempt: failures))
                    }
                }
            }
        } catch  where Self.isCancellation(error) {
            // Shutdown interrupted a pause or an unfinished relay, whose transaction rolled back.
        }
    }

    /// Publishes one batch of the outbox within the transaction timeout (a relay stuck on a connection that a
    /// database crash cut is abandoned; its rows were not marked published, so they go out again).
    private func relayOnce() async throws -> Int {
        let relay = self.relay, producer = self.producer, batch = self.settings.batch
        return try await withAbandoningDeadline(self.settings.database.transactionTimeout) {
            try await relay.relay(limit: batch) { rows in
                var pending: [PendingDelivery] = []
                // A span per event, in the trace its notification started (the updater's span is its parent),
                // ended once the broker acknowledged it; the event's headers carry the span to its consumers.
                var spans: [any Span] = []
                defer { spans.forEach { $0.end() } }
                for row in rows {
                    var record = Self.record(row)
                    if row.traceParent != nil {
                        let span = startSpan(
                            "publish event", context: TraceHeaders.context(traceParent: row.traceParent),
                            ofKind: .producer)
                        span.attributes["messaging.destination.name"] = row.topic
                        TraceHeaders.inject(span.context, into: &record.headers)
                        spans.append(span)
                    }
                    pending.append(try await producer.enqueue(record))
                }
                for delivery in pending { _ = try await delivery.report }
            }
        }
    }

    /// Whether an error is shutdown's cancellation (PostgresNIO wraps it inside a transaction error).
    static func isCancellation(_ error: any Error) -> Bool {
        if error is CancellationError { return true }
        if let error = error as? PostgresTransactionError { return error.closureError is CancellationError }
        return false
    }

    /// The Kafka record of an outbox row.
    static func record(_ row: OutboxRow) -> ProducerRecord {
        ProducerRecord(
            topic: row.topic, key: Array(row.key.utf8), value: Array(row.payload.utf8),
            headers: [
                KafkaHeader(name: "event-id", text: row.eventId),
                KafkaHeader(name: PipelineHeaders.environment, text: row.environment),
                KafkaHeader(name: PipelineHeaders.bundleId, text: row.bundleId),
            ])
    }
}
