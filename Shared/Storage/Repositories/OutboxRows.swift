import AppStoreModels
import Entitlements
import Foundation
import Logging
import NotificationPipeline
import PostgresNIO

/// Writes downstream events to the outbox, once per `eventId`.
enum OutboxRows {
    /// Inserts an event for its topic, keyed by customer.
    static func insert(_ event: EntitlementEvent, topics: PipelineTopics, on connection: PostgresConnection, logger: Logger) async throws {
        let topic = switch event.stream {
        case .changes: topics.entitlementChanges
        case .family: topics.entitlementFamily
        case .revocations: topics.entitlementRevocations
        }
        let payload = String(decoding: try AppStoreJSON.makeCanonicalEncoder().encode(event), as: UTF8.self)
        try await connection.query("""
            INSERT INTO outbox (event_id, topic, key, payload) VALUES (\(event.eventId), \(topic), \(event.customer), \(payload)::jsonb)
            ON CONFLICT (event_id) DO NOTHING
            """, logger: logger)
    }

    /// Inserts a status request for refund-resolver, keyed by the subscription: the publisher relays it to
    /// the status-requests topic like any event, so the request is published exactly when its cause commits.
    static func insert(_ request: StatusRequest, topics: PipelineTopics, on connection: PostgresConnection, logger: Logger) async throws {
        let payload = String(decoding: try AppStoreJSON.makeCanonicalEncoder().encode(request), as: UTF8.self)
        try await connection.query("""
            INSERT INTO outbox (event_id, topic, key, payload)
            VALUES (\(request.requestId), \(topics.statusRequests), \(request.originalTransactionId), \(payload)::jsonb)
            ON CONFLICT (event_id) DO NOTHING
            """, logger: logger)
    }
}
