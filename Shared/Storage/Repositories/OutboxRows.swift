import AppStoreModels
import Entitlements
import Foundation
import Logging
import NotificationPipeline
import PostgresNIO

/// Writes downstream events to the outbox, once per `eventId`, keyed by `environment/bundleId/customer`.
enum OutboxRows {
    /// Inserts an event for its topic, keyed by the customer within its environment and app.
    static func insert(_ event: EntitlementEvent, topics: PipelineTopics, on connection: PostgresConnection, logger: Logger) async throws {
        let topic = switch event.stream {
        case .changes: topics.entitlementChanges
        case .family: topics.entitlementFamily
        case .revocations: topics.entitlementRevocations
        }
        let payload = String(decoding: try AppStoreJSON.makeCanonicalEncoder().encode(event), as: UTF8.self)
        try await connection.query("""
            INSERT INTO outbox (event_id, topic, key, payload, environment, bundle_id)
            VALUES (\(event.eventId), \(topic), \(event.key), \(payload)::jsonb, \(event.facts.environment), \(event.facts.bundleId))
            ON CONFLICT (event_id) DO NOTHING
            """, logger: logger)
    }

    /// Inserts a status request for refund-resolver, keyed by the subscription (within its environment and
    /// app): the publisher relays it to
    /// the status-requests topic like any event, so the request is published exactly when its cause commits.
    static func insert(_ request: StatusRequest, topics: PipelineTopics, on connection: PostgresConnection, logger: Logger) async throws {
        let payload = String(decoding: try AppStoreJSON.makeCanonicalEncoder().encode(request), as: UTF8.self)
        try await connection.query("""
            INSERT INTO outbox (event_id, topic, key, payload, environment, bundle_id)
            VALUES (\(request.requestId), \(topics.statusRequests), \(request.key), \(payload)::jsonb, \(request.environment),
                    \(request.bundleId ?? ""))
            ON CONFLICT (event_id) DO NOTHING
            """, logger: logger)
    }
}
