import Foundation
import Logging
import PipelineRecords
import RdKafka
import ServiceRuntime
import Storage

/// Turns each batch of `entitlements.*` records into deliveries in PostgreSQL, one per endpoint that takes the
/// event, before the batch's offsets are stored: an event consumed is an event queued, and a batch consumed again
/// (after a crash or a rebalance) queues nothing twice. Wakes the endpoints that got deliveries.
struct EventQueueHandler: BatchHandler {
    let backlog: WebhookBacklog
    let wakeups: Wakeups
    let queued: LabelledCounter
    let logger: Logger

    func handle(_ records: [ConsumerRecord]) async throws {
        var events: [WebhookEvent] = []
        events.reserveCapacity(records.count)
        for record in records {
            guard let event = Self.event(record) else {
                // Only event-publisher writes these topics; a record without an event's fields is skipped, said.
                self.queued.increment("unreadable")
                self.logger.error(
                    "an entitlements record is not an event, skipped",
                    metadata: [
                        "topic": "\(record.topic)", "partition": "\(record.partition)", "offset": "\(record.offset)",
                    ])
                continue
            }
            events.append(event)
        }
        let perEndpoint = try await self.backlog.enqueue(events)
        for (endpoint, count) in perEndpoint {
            self.queued.increment("queued", by: count)
            self.wakeups.wake(endpoint)
        }
    }

    /// The fields of an event that route it: the environment and app from the headers, the rest from its JSON.
    static func event(_ record: ConsumerRecord) -> WebhookEvent? {
        struct Fields: Decodable {
            var eventId: String
            var eventType: String
            var subject: String
            var sequence: Int64?
        }
        guard let value = record.value, let environment = record.header(PipelineHeaders.environment)?.text,
            let bundleId = record.header(PipelineHeaders.bundleId)?.text,
            let fields = try? JSONDecoder().decode(Fields.self, from: Data(value))
        else { return nil }
        let published = record.timestamp.map { Date(timeIntervalSince1970: Double($0) / 1000) } ?? Date()
        return WebhookEvent(
            environment: environment, bundleId: bundleId, eventId: fields.eventId, eventType: fields.eventType,
            subject: fields.subject, sequence: fields.sequence, payload: String(decoding: value, as: UTF8.self),
            publishedAt: published)
    }
}
