import Logging
import NotificationPipeline
import PostgresNIO
import Prometheus
import RdKafka
import ServiceLifecycle
import ServiceRuntime
import Storage

/// Relays the outbox to the downstream topics until graceful shutdown: each event keyed by
/// `environment/bundleId/customer`, with its id, environment and app as headers, published with the
/// idempotent producer.
struct OutboxPublisher: Service {
    let relay: OutboxRelay
    let producer: KafkaProducer
    let settings: EventPublisherSettings
    let readiness: Readiness
    let published: Counter
    let logger: Logger

    func run() async throws {
        self.readiness.set(true)
        defer { self.readiness.set(false) }
        let producer = self.producer
        do {
            try await cancelWhenGracefulShutdown {
                while !Task.isShuttingDownGracefully && !Task.isCancelled {
                    let count = try await self.relay.relay(limit: self.settings.batch) { rows in
                        var pending: [PendingDelivery] = []
                        for row in rows { pending.append(try await producer.enqueue(Self.record(row))) }
                        for delivery in pending { _ = try await delivery.report }
                    }
                    self.published.increment(by: Int64(count))
                    if count == 0 { try await Task.sleep(for: self.settings.idlePause) }
                }
            }
        } catch is CancellationError {
            // Shutdown interrupted a pause or an unfinished relay, whose transaction rolled back.
        } catch let error as PostgresTransactionError where error.closureError is CancellationError {
            // The same inside a relay: PostgresNIO wraps the cancellation; the transaction rolled back.
        }
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
